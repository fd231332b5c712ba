#!/bin/bash
# deps.sh: what `make build` needs on a Debian machine, installed when
# missing (as root) or named with the command that installs it (as anyone
# else). Go itself is not installed here: Debian 12's golang (1.19) is
# older than go.mod's 1.26; the README's install step puts it in
# /usr/local/go.
set -euo pipefail
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
if ! [[ -x $go ]]; then
	echo "deps: Go 1.26 or newer is needed and was not found (Debian's golang package is too old): install it in /usr/local/go as the README says, or set GO=" >&2
	exit 1
fi
want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$(dirname "$0")/../go.mod")
have=$("$go" env GOVERSION | sed 's/^go//')
if [[ $(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1) != "$want" ]]; then
	echo "deps: $go is Go $have, go.mod needs $want or newer: install a newer Go in /usr/local/go as the README says" >&2
	exit 1
fi
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v pkg-config >/dev/null || missing+=(pkg-config)
# The static link needs libc.a and libseccomp.a.
[[ -e /usr/lib/x86_64-linux-gnu/libc.a || -e /usr/lib/$(gcc -dumpmachine 2>/dev/null)/libc.a ]] || missing+=(libc6-dev)
pkg-config --exists libseccomp 2>/dev/null || missing+=(libseccomp-dev)
# musl-gcc: the binary starts faster linked with musl (see the Makefile's
# LIBC); without it make build links glibc.
command -v musl-gcc >/dev/null || missing+=(musl-tools)
[[ ${#missing[@]} -gt 0 ]] || exit 0
if [[ $(id -u) -ne 0 ]]; then
	echo "deps: missing ${missing[*]}: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
