#!/bin/bash
# critest.sh: Kubernetes' CRI validation suite (critest, from
# sigs.k8s.io/cri-tools at CRITEST_VERSION, default the crictl version of
# the Makefile) against containerd's CRI plugin running pods on $RUNTIME
# (default ./nanobox-runc) through the README's runtime handler, as root.
#
# critest's source is fetched through the Go module proxy (never copied into
# this repository) and built once (`go test -c ./cmd/critest`) under
# ${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-critest/CRITEST_VERSION. The
# images critest pulls come from a local registry
# (tests/integration/critest/registry) serving images made from
# busybox-static: see tests/integration/critest/critest.bats for the set-up
# and for the tests skipped, each with its reason.
#
# Needs what cri.bats needs: containerd, the CNI plugins, gcc, jq, bats.
# CRITEST_ARGS adds ginkgo flags (e.g. --ginkgo.focus=Seccomp). critest's
# whole output is kept in $OUT (default a new file under /tmp). Prints
# "tests: N passed, N failed, N skipped"; exits non-zero when a test failed.
# RUNTIME=$(which runc) runs the same suite against runc.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/modsrc.sh
. "$REPO/scripts/modsrc.sh"
RUNTIME=${RUNTIME:-$REPO/nanobox-runc}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
CRITEST_VERSION=${CRITEST_VERSION:-$(awk '$1 == "CRICTL_VERSION" {print $3}' "$REPO/Makefile")}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-critest/$CRITEST_VERSION

die() {
	echo "critest.sh: $*" >&2
	exit 2
}
[[ $(id -u) == 0 ]] || die "containerd's CRI plugin runs as root here: run it as root"
[[ $RUNTIME == */* ]] || RUNTIME=$(command -v "$RUNTIME")
RUNTIME=$(readlink -f "$RUNTIME")
[[ -x $RUNTIME ]] || die "$RUNTIME is not an executable: run make build, or set RUNTIME"
for p in bats containerd ctr jq gcc nsenter ip; do
	command -v "$p" >/dev/null ||
		die "$p is not installed (apt-get install bats containerd containernetworking-plugins jq gcc libc6-dev util-linux iproute2)"
done
[[ -x /usr/lib/cni/bridge ]] || die "the CNI plugins are not installed (apt-get install containernetworking-plugins)"

if [[ ! -x $CACHE/critest ]]; then
	echo "critest.sh: building critest $CRITEST_VERSION into $CACHE" >&2
	module_source "sigs.k8s.io/cri-tools@$CRITEST_VERSION" "$CACHE.src"
	mkdir -p "$CACHE"
	(cd "$CACHE.src" && GOEXPERIMENT= GOFLAGS=-mod=mod "$GO" test -c -o "$CACHE/critest.tmp" ./cmd/critest)
	rm -rf "$CACHE.src"
	mv "$CACHE/critest.tmp" "$CACHE/critest"
fi
work=$(mktemp -d /tmp/nanobox-critest.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$REPO" && "$GO" build -o "$work/registry" ./tests/integration/critest/registry)

OUT=${OUT:-$(mktemp /tmp/critest.XXXXXX.out)}
rc=0
CRITEST_BIN=$CACHE/critest CRITEST_REGISTRY=$work/registry CRITEST_OUT=$OUT RUNTIME=$RUNTIME \
	bats "$REPO/tests/integration/critest/critest.bats" || rc=$?
echo "critest $CRITEST_VERSION against $RUNTIME: output in $OUT"
# ginkgo's summary: "SUCCESS! -- N Passed | N Failed | N Pending | N Skipped".
if summary=$(grep -E '^(SUCCESS|FAIL)! -- [0-9]+ Passed' "$OUT" 2>/dev/null); then
	read -r pass fail skip < <(sed -E 's/.* ([0-9]+) Passed \| ([0-9]+) Failed \| [0-9]+ Pending \| ([0-9]+) Skipped.*/\1 \2 \3/' <<<"$summary")
	echo "tests: $pass passed, $fail failed, $skip skipped"
else
	echo "tests: 0 passed, 1 failed, 0 skipped (critest did not run: see the bats output above)"
	rc=1
fi
exit $rc
