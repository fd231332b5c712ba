#!/bin/bash
# mkbundle.sh [--runtime BIN] DIR [CMD...]: make an OCI bundle in DIR with a
# busybox rootfs (Debian's busybox-static) that runs CMD (default: sh).
#
# The config is `BIN spec` (with --rootless when not root) when --runtime is
# given, runc 1.1.5's default spec from fixtures/ otherwise (so two
# runtimes can be compared on the very same config.json); either way made
# non-interactive (terminal false) and without linux.resources.
# Used by `make demo` and scripts/bench.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
runtime=""
if [[ "${1:-}" == --runtime ]]; then
	runtime=$2
	shift 2
fi
dir=${1:?usage: mkbundle.sh [--runtime BIN] DIR [CMD...]}
shift
[[ $# -gt 0 ]] || set -- sh

# build_busybox_rootfs and json_array live in the test helpers.
# shellcheck source=helpers.bash
source "$here/helpers.bash"

mkdir -p "$dir"
rm -rf "$dir/rootfs" "$dir/config.json"
build_busybox_rootfs "$dir/rootfs"

rootless=""
[[ $EUID -eq 0 ]] || rootless=--rootless
if [[ -n "$runtime" ]]; then
	(cd "$dir" && "$runtime" spec $rootless)
elif [[ -n "$rootless" ]]; then
	jq --argjson uid "$(id -u)" --argjson gid "$(id -g)" -f "$here/fixtures/rootless.jq" \
		"$here/fixtures/runc-spec.json" >"$dir/config.json"
else
	cp "$here/fixtures/runc-spec.json" "$dir/config.json"
fi

# runc 1.1.5's default lists ambient capabilities that are not inheritable,
# which the kernel drops anyway; leave them out so the config means the same
# to every runtime (spec.bats checks the runc default as it is).
tmp=$(mktemp)
jq --argjson args "$(json_array "$@")" \
	'.process.terminal = false | .process.args = $args | del(.linux.resources)
	| del(.process.capabilities.ambient)' \
	"$dir/config.json" >"$tmp"
cat "$tmp" >"$dir/config.json"
rm -f "$tmp"
