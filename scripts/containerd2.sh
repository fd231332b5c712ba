#!/bin/bash
# containerd2.sh: the containerd client suites again, against containerd 2.x
# (CONTAINERD2_VERSION, default below) instead of the distribution's, as
# root: cri.bats and containerd.bats (the CRI plugin through crictl, and
# ctr and the Go client through containerd-shim-runc-v2), then Kubernetes'
# CRI validation suite (scripts/critest.sh).
#
# Debian 12's containerd is 1.6; what Kubernetes and Docker run today is
# 2.x, whose shim and CRI plugin call the runtime differently (for one, pods
# with `hostUsers: false` create the user namespace through the runtime,
# which is how the oom_score_adj bug of 0bd0341 was found). containerd,
# its runc shim and ctr are built once through the Go module proxy (never
# copied into this repository) under
# ${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-containerd/VERSION and put
# first on PATH for the suites; nothing is installed on the host.
#
# Needs what cri.bats and critest.sh need. Prints the counts line of each
# suite ("integration: ..." from run.sh, "tests: ..." from critest.sh, which
# .ci/run sums); exits non-zero when a test failed. RUNTIME=$(which runc) runs the same
# suites against runc.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
CONTAINERD2_VERSION=${CONTAINERD2_VERSION:-v2.4.2}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-containerd/$CONTAINERD2_VERSION

die() {
	echo "containerd2.sh: $*" >&2
	exit 2
}
[[ $(id -u) == 0 ]] || die "containerd runs as root here: run it as root"

bins=(containerd containerd-shim-runc-v2 ctr)
built=1
for b in "${bins[@]}"; do
	[[ -x $CACHE/$b ]] || built=
done
if [[ -z $built ]]; then
	echo "containerd2.sh: building containerd $CONTAINERD2_VERSION into $CACHE" >&2
	mkdir -p "$CACHE.tmp" || die "cannot make $CACHE.tmp"
	pkgs=()
	for b in "${bins[@]}"; do
		pkgs+=("github.com/containerd/containerd/v2/cmd/$b@$CONTAINERD2_VERSION")
	done
	# The version is stamped as containerd's own Makefile does, so that
	# `containerd --version` (which the suites read) names it.
	GOBIN=$CACHE.tmp GOEXPERIMENT= GOFLAGS= "$GO" install \
		-ldflags "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD2_VERSION" "${pkgs[@]}" ||
		die "cannot build containerd $CONTAINERD2_VERSION through the Go module proxy (GOPROXY=$("$GO" env GOPROXY))"
	rm -rf "$CACHE" && mv "$CACHE.tmp" "$CACHE" || die "cannot move the build into $CACHE"
fi
export PATH="$CACHE:$PATH"
version=$(containerd --version) || die "$CACHE/containerd does not run"
echo "containerd2.sh: $version"
[[ $version == *" $CONTAINERD2_VERSION "* ]] || die "containerd on PATH is not $CONTAINERD2_VERSION: $version"

rc=0
"$REPO/tests/integration/run.sh" --mode root "$REPO/tests/integration/cri.bats" "$REPO/tests/integration/containerd.bats" || rc=1
"$REPO/scripts/critest.sh" || rc=1
exit $rc
