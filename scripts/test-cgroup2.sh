#!/bin/bash
# test-cgroup2.sh [BATS-FILE...]: the cgroup tests on a pure cgroup v2 kernel,
# in ONE boot of scripts/cgroup2-vm (about 8 s under software emulation):
#   1. libbox's cgroup unit tests, as root;
#   2. the cgroup bats suites as root;
#   3. podman and containerd running containers on nanobox-runc there;
#   4. the cgroup suites rootless, as uid 1000 inside the cgroup subtree the
#      VM delegates to it ($NANOBOX_TEST_CGROUP_PARENT).
# On the host it builds everything (linking inside the emulated VM is ~30x
# slower) and boots the VM, which runs this same script. Exit status: 0 when
# every part passed.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
DEFAULT_SUITES=(cgroups.bats update.bats pause.bats ps.bats events.bats sandbox.bats sandbox-detach.bats)

if [[ "${CGROUP2_VM:-}" != 1 ]]; then
	export HOME=${HOME:-/root}
	GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
	# The binary the other stages test (static, its build tags, the
	# commit stamp), not a plain go build of it.
	make --no-print-directory build
	# The unit test binary lives outside the work tree; the guest sees the
	# host's / read-only, so the path is the same there.
	bin=${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-test
	mkdir -p "$bin"
	"$GO" test -c -o "$bin/libbox.test" ./libbox
	export NANOBOX_LIBBOX_TEST=$bin/libbox.test
	# The device rules' tests: the eBPF device program on the v2 root.
	"$GO" test -c -o "$bin/devcg.test" ./internal/devcg
	export NANOBOX_DEVCG_TEST=$bin/devcg.test
	# The suites' busybox rootfs: hundreds of `ln -s` take a minute there.
	rm -rf "$bin/busybox-rootfs"
	bash -c 'source tests/integration/helpers.bash && build_busybox_rootfs "$1"' _ "$bin/busybox-rootfs"
	export NANOBOX_HOST_BUSYBOX=$bin/busybox-rootfs
	# containerd.bats's update client: a go build under emulation takes
	# minutes, more than a test's timeout on a loaded host.
	(cd tests/integration/clients/ctrupdate && "$GO" build -o "$bin/ctrupdate" .)
	export CTRUPDATE=$bin/ctrupdate
	exec scripts/cgroup2-vm --mem 2G --cpus 2 --timeout "${CGROUP2_VM_TIMEOUT:-3000}" -- scripts/test-cgroup2.sh "$@"
fi

# ---- in the VM, as root
# Every process start is slow under emulation (a bats test costs 10-30 s
# there), so by default the VM runs the tests whose outcome depends on the
# cgroup version or on delegation; the rest (argument checks, messages)
# runs on the host. CGROUP2_FILTER='' runs them all.
# Measured there (bats --timing): 12-33 s a test, 8 s even for one that
# skips, against 0.5-5 s for a Go test running a sandbox; so the sandbox's
# limits are checked by libbox's Go tests (as root and as uid 1000) and
# bats keeps the CLI's cgroup paths. Out: what does not depend on the
# cgroup version (ps, delete after SIGKILL, the cpu-time limit, which is
# an rlimit) and the second frozen-parent case.
FILTER=${CGROUP2_FILTER-'sandbox: limit cpus|shows the own cgroup|cpu quota|deny-all device|device access strings as runc|device node made inside|cgroupsPath absolute|kill --all signals every|without a delegated subtree|raise the memory|cpu shares|pause stops progress|paused container kills|events --stats returns|keys, and pressure|events reports an OOM|a memory hog under|a fork bomb under|cannot enforce|kernel refuses|too small for init|pre-frozen|already holds a process|pids limit holds for exec|pids limits of 0|pids limit 1: a created|pids limit 2 holds|a pids limit of 0 is taken'}
# Rootless, the ones whose outcome depends on the delegated subtree: where
# the cgroup goes, and that its limits, freezer and OOM events work there.
# The rest does the same cgroup writes as root. CGROUP2_ROOTLESS_FILTER=''
# runs them all.
ROOTLESS_FILTER=${CGROUP2_ROOTLESS_FILTER-'sandbox: limit cpus|shows the own cgroup|cgroupsPath that cannot be made|no pid namespace of its own|a memory hog under|too small for init|a fork bomb under|cgroupsPath absolute|without a delegated subtree|cannot enforce|raise the memory|pause stops progress|keys, and pressure|root in a user namespace|uid 0 of a user namespace|events reports an OOM|pids limit holds for exec|pids limits of 0|pids limit 1: a created|pids limit 2 holds|a pids limit of 0 is taken'}
filter=() rootless_filter=()
[[ -z "$FILTER" ]] || filter=(--filter "$FILTER")
[[ -z "$ROOTLESS_FILTER" ]] || rootless_filter=(--filter "$ROOTLESS_FILTER")
# Per-test times in the TAP lines: what keeps this stage within CI's budget.
export NANOBOX_BATS_TIMING=1
cp -a "$NANOBOX_HOST_BUSYBOX" /tmp/busybox-rootfs
# The unit test binaries go where unit_tests runs them from, /tmp/PKG.test:
# uid 1000 runs them too, and the host's copies may be under a 0700 home.
cp "$NANOBOX_LIBBOX_TEST" /tmp/libbox.test
cp "$NANOBOX_DEVCG_TEST" /tmp/devcg.test
export NANOBOX_BUSYBOX_CACHE=/tmp/busybox-rootfs
# The client stage runs with the default suites (no arguments), or when asked.
clients=${CGROUP2_CLIENTS:-}
[[ $# -gt 0 ]] || clients=1
[[ $# -gt 0 ]] || set -- "${DEFAULT_SUITES[@]}"
suites=()
for f in "$@"; do
	[[ "$f" == */* ]] || f=tests/integration/$f
	suites+=("$f")
done
echo "=== cgroup v2 VM: kernel $(uname -r); controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
rc=0

# unit_tests WHO PACKAGE RUN-REGEXP [PREFIX...]: the tests of PACKAGE
# (libbox, or internal/devcg) matching the regexp, run by PREFIX (e.g.
# as-rootless), and the count line .ci/run sums (top-level tests only).
unit_tests() {
	local who=$1 pkg=$2 run=$3 out
	shift 3
	echo "=== $pkg cgroup unit tests ($who)"
	out=$(mktemp)
	(cd "$pkg" && "$@" env TMPDIR=/tmp "/tmp/${pkg##*/}.test" -test.count=1 -test.v -test.run "$run") | tee "$out" ||
		rc=1
	echo "tests: $(grep -c '^--- PASS' "$out") passed, $(grep -c '^--- FAIL' "$out") failed, $(grep -c '^--- SKIP' "$out") skipped"
	rm -f "$out"
}
SANDBOX_LIMIT_TESTS='SandboxRunEcho|SandboxMemoryHog|SandboxForkBomb|SandboxCPUTime|SandboxCPUTimeForks|PresetCodeJudge|SandboxPoolLimits|SandboxPoolReportFromCgroup|SandboxPersistentMemoryHog|SandboxSmallPidsLimit'
unit_tests root internal/devcg '^TestSetV2'
unit_tests root libbox "^Test(CgroupSpec|CgroupPaths|CgroupBeforeInit|ApplyCgroup.*|RequiredControllers|IsSystemdCgroupPath|CreateLateCgroup.*|SandboxBornInCgroup|$SANDBOX_LIMIT_TESTS)\$"

tests/integration/run.sh --mode root "${filter[@]}" "${suites[@]}" || rc=1

# podman (conmon) and containerd (shim v2) on this cgroup v2 kernel: the
# tests whose outcome depends on the cgroup version (limits set through
# each client's update, the freezer through containerd's pause; podman's
# pause and the clients' pids limits are the same runtime paths). The rest
# of the client suites runs on the host; here a test costs 10-160 s.
# CLIENTS_FILTER='' runs both suites whole.
if [[ -n "$clients" ]]; then
	CLIENTS_FILTER=${CLIENTS_FILTER-'podman update --memory|containerd Update through the API|ctr task pause'}
	cfilter=()
	[[ -z "$CLIENTS_FILTER" ]] || cfilter=(--filter "$CLIENTS_FILTER")
	echo "=== podman and containerd on cgroup v2 (root)"
	tests/integration/run.sh --mode root "${cfilter[@]}" tests/integration/podman.bats tests/integration/containerd.bats || rc=1
fi

# Rootless: bats (and so every runtime it starts as uid 1000) moves into the
# delegated subtree's leaf, as a login session would be.
echo $$ >"$NANOBOX_TEST_CGROUP_PARENT/session/cgroup.procs"
unit_tests "uid 1000, delegated subtree" libbox "^Test($SANDBOX_LIMIT_TESTS)\$" as-rootless
TEST_USER=rootless tests/integration/run.sh --mode rootless "${rootless_filter[@]}" "${suites[@]}" || rc=1

# Nothing the tests made may be left in the cgroup tree.
left=$(find /sys/fs/cgroup -mindepth 1 -type d \( -name 'nbx-*' -o -name 'sb-*' \) 2>/dev/null || true)
if [[ -n "$left" ]]; then
	echo "cgroups left behind:"
	echo "$left"
	rc=1
fi
exit $rc
