#!/usr/bin/env bash
# Shared helpers for the nanobox-runc integration suites (modelled on runc's
# tests/integration/helpers.bash).
#
# Environment:
#   RUNTIME   the runtime under test (default: the nanobox-runc built at the
#             repository root). RUNTIME=$(which runc) runs the same suites
#             against the reference runtime.
#   ROOTLESS  1 runs every runtime command as the unprivileged user
#             $TEST_USER (created by setup-rootless-user.sh), with a bundle
#             made by `spec --rootless`. bats itself always runs as root.
#
# Every test gets its own state root ($ROOT) and a fresh bundle ($BUNDLE)
# under $BATS_TEST_TMPDIR; teardown force-deletes whatever is left.

INTEGRATION_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$INTEGRATION_ROOT/../.." && pwd)

RUNTIME="${RUNTIME:-$REPO_ROOT/nanobox-runc}"
if [[ "$RUNTIME" != /* ]]; then
	RUNTIME="$(command -v "$RUNTIME" 2>/dev/null || echo "$PWD/$RUNTIME")"
fi
ROOTLESS="${ROOTLESS:-0}"
TEST_USER="${TEST_USER:-nanobox-test}"
# How long one runtime command may take before it is killed and reported.
RUNTIME_TIMEOUT="${RUNTIME_TIMEOUT:-60}"
RECVTTY="${RECVTTY:-$INTEGRATION_ROOT/recvtty/recvtty}"

# The bundle's rootfs path is this long-lived cache, copied per test.
BUSYBOX_CACHE="${BATS_SUITE_TMPDIR:-${BATS_RUN_TMPDIR:-/tmp}}/busybox-rootfs"

# is_runc: true when the runtime under test is runc (the reference), so tests
# of nanobox-only behaviour can skip and wording checks can accept runc's.
is_runc() {
	[[ "$(basename "$RUNTIME")" == runc* ]]
}

# The runtime's name in default paths: /run/<name>, $XDG_RUNTIME_DIR/<name>.
runtime_name() {
	if is_runc; then echo runc; else echo nanobox-runc; fi
}

is_rootless() {
	[[ "$ROOTLESS" == 1 ]]
}

fail() {
	echo "FAIL: $*" >&2
	return 1
}

# state_root_left: what the state root ($ROOT) holds besides the compiled
# seccomp filters the runtime keeps there on purpose (.seccomp-HASH, see
# libbox/seccomp_cache_linux.go): what a test that leaves nothing behind
# must find empty.
state_root_left() {
	ls -A "$ROOT" | grep -v '^\.seccomp-[0-9a-f]\{64\}$' || true
}

# skip_if_runc REASON: for tests of behaviour where nanobox intentionally
# differs from runc 1.1.5.
skip_if_runc() {
	if is_runc; then
		skip "runc: $*"
	fi
}

# requires FEATURE...: skip the test with a printed reason unless every
# feature is available.
requires() {
	local f
	for f in "$@"; do
		case "$f" in
		root)
			is_rootless && skip "test requires root (ROOTLESS=1)"
			[[ $EUID -eq 0 ]] || skip "test requires root"
			;;
		rootless)
			is_rootless || skip "test requires rootless mode (run with ROOTLESS=1)"
			;;
		cgroup2)
			[[ "$(stat -f -c %T /sys/fs/cgroup)" == cgroup2fs ]] ||
				skip "test requires a pure cgroup v2 host"
			;;
		newuidmap)
			command -v newuidmap >/dev/null && command -v newgidmap >/dev/null ||
				skip "test requires newuidmap/newgidmap (apt-get install uidmap)"
			grep -q "^$TEST_USER:" /etc/subuid 2>/dev/null ||
				skip "test requires an /etc/subuid range for $TEST_USER"
			;;
		recvtty)
			[[ -x "$RECVTTY" ]] || build_recvtty ||
				skip "test requires recvtty (make -C $REPO_ROOT recvtty; needs go)"
			;;
		nanobox)
			is_runc && skip "test of a nanobox-runc feature (RUNTIME is runc)"
			;;
		ip)
			command -v ip >/dev/null || skip "test requires ip (iproute2)"
			;;
		*)
			fail "requires: unknown feature $f"
			;;
		esac
	done
	return 0
}

build_recvtty() {
	command -v go >/dev/null || [[ -x /usr/local/go/bin/go ]] || return 1
	local gobin
	gobin=$(command -v go || echo /usr/local/go/bin/go)
	(cd "$REPO_ROOT" && "$gobin" build -o "$RECVTTY" ./tests/integration/recvtty) >&2
}

# ---------------------------------------------------------------------------
# Users and permissions.

test_uid() { id -u "$TEST_USER"; }
test_gid() { id -g "$TEST_USER"; }

# test_user_dir DIR: DIR made as the test user's own private directory (an
# XDG_RUNTIME_DIR of its own, say).
test_user_dir() {
	mkdir -p "$1"
	chown "$(test_uid):$(test_gid)" "$1"
	chmod 0700 "$1"
}

# ensure_test_user: the unprivileged user the rootless runs use (idempotent).
ensure_test_user() {
	id "$TEST_USER" >/dev/null 2>&1 && grep -q "^$TEST_USER:" /etc/subuid 2>/dev/null && return 0
	[[ $EUID -eq 0 ]] || fail "rootless mode needs user $TEST_USER; run $INTEGRATION_ROOT/setup-rootless-user.sh as root"
	TEST_USER="$TEST_USER" "$INTEGRATION_ROOT/setup-rootless-user.sh" >&2
}

# as_user CMD...: run CMD as the test's runtime user: root normally, the
# unprivileged $TEST_USER (no capabilities, its own XDG_RUNTIME_DIR) when
# ROOTLESS=1. setpriv and env exec, so a backgrounded as_user's pid ($!) is
# CMD's own pid. AS_USER is the argv prefix, set by setup_test.
AS_USER=()
as_user() {
	"${AS_USER[@]}" "$@"
}

# give_to_user PATH...: make PATH (recursively) owned by the runtime user.
give_to_user() {
	if is_rootless; then
		chown -R "$(test_uid):$(test_gid)" "$@"
	fi
}

# Make the directories leading to $BATS_TEST_TMPDIR traversable by the
# unprivileged user (bats creates them 0700).
open_tmp_path() {
	local d
	for d in "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_TEST_TMPDIR" \
		"${BATS_SUITE_TMPDIR:-}"; do
		[[ -n "$d" && -d "$d" ]] && chmod o+x "$d"
	done
	return 0
}

# ---------------------------------------------------------------------------
# The runtime wrapper.

# __runtime ARGS...: the runtime with the test's --root, as the test's user.
__runtime() {
	as_user "$RUNTIME" --root "$ROOT" "$@"
}

# runtime ARGS...: like bats' `run __runtime ARGS...`: sets $status, $output
# and $lines, and prints the command and its output (bats shows that only for
# a failing test). Output goes through a file, not a pipe, so a container
# that inherits the runtime's stdio (create, run -d) cannot hang the test; a
# created container keeps writing to $RUNTIME_OUTFILE after start. A runtime
# that hangs is killed after $RUNTIME_TIMEOUT seconds (status 124).
RUNTIME_CALLS=0
runtime() {
	RUNTIME_CALLS=$((RUNTIME_CALLS + 1))
	RUNTIME_OUTFILE="$BATS_TEST_TMPDIR/runtime.$RUNTIME_CALLS.out"
	: >"$RUNTIME_OUTFILE"
	chmod 0666 "$RUNTIME_OUTFILE"
	status=0
	local root=(--root "$ROOT")
	# RUNTIME_NO_ROOT=1 runtime ...: use the runtime's default state root.
	[[ -z "${RUNTIME_NO_ROOT:-}" ]] || root=()
	timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" "${root[@]}" "$@" \
		<"${RUNTIME_STDIN:-/dev/null}" >"$RUNTIME_OUTFILE" 2>&1 3>&- || status=$?
	output="$(cat "$RUNTIME_OUTFILE")"
	lines=()
	[[ -z "$output" ]] || mapfile -t lines <<<"$output"
	echo "\$ $(basename "$RUNTIME")${root:+ --root \$ROOT} $* (status $status$(is_rootless && echo ", rootless"))"
	[[ -z "$output" ]] || echo "$output"
	[[ $status -ne 124 ]] || echo "(timed out after ${RUNTIME_TIMEOUT}s)"
	return 0
}

# runtime_ok ARGS...: runtime, and fail the test unless it exits 0.
runtime_ok() {
	runtime "$@"
	[[ $status -eq 0 ]] || fail "runtime $* exited $status"
}

# runtime_bg ARGS...: start the runtime in the background (for a foreground
# `run` that the test signals); its pid is $RUNTIME_BG_PID, its output goes
# to $RUNTIME_BG_OUT. Wait for it with `wait_bg`.
runtime_bg() {
	RUNTIME_BG_OUT="$BATS_TEST_TMPDIR/runtime.bg.out"
	: >"$RUNTIME_BG_OUT"
	chmod 0666 "$RUNTIME_BG_OUT"
	# A simple command, not a function, so $! is the runtime's own pid.
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@" </dev/null >"$RUNTIME_BG_OUT" 2>&1 3>&- &
	RUNTIME_BG_PID=$!
}

# wait_bg: wait for runtime_bg's process; sets $status and $output.
wait_bg() {
	status=0
	wait "$RUNTIME_BG_PID" || status=$?
	output="$(cat "$RUNTIME_BG_OUT")"
	echo "background runtime exited $status:"
	echo "$output"
}

# retry ATTEMPTS DELAY CMD...: run CMD until it succeeds, every DELAY
# seconds, at least ATTEMPTS times and for at least $RETRY_SECONDS (default
# 60) of wall time: a count alone is a deadline that a loaded machine (CI
# runs the suites beside busy loops) can miss, since every attempt takes
# longer there.
RETRY_SECONDS=${RETRY_SECONDS:-60}
retry() {
	local attempts=$1 delay=$2 i=0 end=$((SECONDS + RETRY_SECONDS))
	shift 2
	while ((i < attempts || SECONDS < end)); do
		"$@" && return 0
		i=$((i + 1))
		sleep "$delay"
	done
	echo "retry: '$*' failed $i times in $((SECONDS - end + RETRY_SECONDS))s" >&2
	return 1
}

# container_status ID: prints the status field of `state ID`.
container_status() {
	__runtime state "$1" 2>/dev/null | jq -r .status
}

# testcontainer ID STATUS: fail unless `state ID` reports STATUS.
testcontainer() {
	runtime state "$1"
	[[ $status -eq 0 ]] || fail "state $1 exited $status"
	local got
	got=$(jq -r .status <<<"$output")
	[[ "$got" == "$2" ]] || fail "container $1 is $got, want $2"
}

# wait_for_status ID STATUS: poll until the container reaches STATUS.
wait_for_status() {
	retry 100 0.05 eval "[[ \"\$(container_status $1)\" == $2 ]]"
}

# container_pid ID: prints the init pid from the state JSON.
container_pid() {
	__runtime state "$1" | jq -r .pid
}

# wait_pid_gone PID: poll until PID has exited (or is a zombie).
wait_pid_gone() {
	retry 100 0.05 eval "! kill -0 $1 2>/dev/null || grep -q '^State:.*Z' /proc/$1/status 2>/dev/null"
}

# ---------------------------------------------------------------------------
# Bundles.

# build_busybox_rootfs DIR: a minimal rootfs with Debian's static busybox.
build_busybox_rootfs() {
	local r=$1 a
	mkdir -p "$r"/{bin,etc,proc,sys,dev,tmp,root,home/user,var/empty}
	cp /bin/busybox "$r/bin/busybox"
	# Relative applet links (what `busybox --install -s` makes, but pointing
	# inside the rootfs rather than at the host's /bin/busybox).
	for a in $(/bin/busybox --list); do
		[[ "$a" == busybox || -e "$r/bin/$a" ]] || ln -s busybox "$r/bin/$a"
	done
	ln -s bin "$r/sbin"
	mkdir -p "$r/usr"
	ln -s ../bin "$r/usr/bin"
	ln -s ../bin "$r/usr/sbin"
	chmod 1777 "$r/tmp"
	cat >"$r/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		user:x:1000:1000:user:/home/user:/bin/sh
		nobody:x:65534:65534:nobody:/var/empty:/bin/false
	EOF
	cat >"$r/etc/group" <<-'EOF'
		root:x:0:
		tty:x:5:
		audio:x:29:
		user:x:1000:
		extra:x:1001:user
		nogroup:x:65534:
	EOF
	chown 1000:1000 "$r/home/user" 2>/dev/null || true
	echo "nameserver 127.0.0.1" >"$r/etc/resolv.conf"
	echo "hosts: files" >"$r/etc/nsswitch.conf"
}

ensure_busybox_cache() {
	[[ -x "$BUSYBOX_CACHE/bin/busybox" ]] && return 0
	[[ -x /bin/busybox ]] || fail "/bin/busybox is missing: apt-get install busybox-static"
	local tmp="$BUSYBOX_CACHE.tmp.$$"
	rm -rf "$tmp"
	build_busybox_rootfs "$tmp"
	mv "$tmp" "$BUSYBOX_CACHE"
}

# update_config JQ-EXPR [BUNDLE [JQ-OPTION...]]: edit BUNDLE/config.json in
# place, e.g. update_config '.hostname = $h' "$BUNDLE" --arg h box.
update_config() {
	local expr=$1 bundle=${2:-$BUNDLE}
	shift
	[[ $# -eq 0 ]] || shift
	local cfg="$bundle/config.json" tmp
	tmp=$(mktemp "$BATS_TEST_TMPDIR/config.XXXXXX")
	if ! jq "$@" "$expr" "$cfg" >"$tmp"; then
		rm -f "$tmp"
		fail "update_config: jq '$expr' failed"
		return 1
	fi
	# Overwrite in place so the owner (the rootless user) is kept.
	cat "$tmp" >"$cfg"
	rm -f "$tmp"
}

# json_array ARG...: prints ARGs as a JSON array of strings.
json_array() {
	local a out=""
	for a in "$@"; do
		out+="${out:+,}$(printf '%s' "$a" | jq -Rs .)"
	done
	echo "[$out]"
}

# set_args CMD...: process.args = CMD (each word one argument).
set_args() {
	update_config '.process.args = $a' "$BUNDLE" --argjson a "$(json_array "$@")"
}

# set_cmd SHELL-SNIPPET: process.args = ["sh", "-c", SNIPPET].
set_cmd() {
	set_args sh -c "$1"
}

# default_spec DIR [--rootless]: config.json from `$RUNTIME spec`; if that
# fails (a runtime still missing `spec`), runc 1.1.5's defaults from the
# fixture, made rootless the way `runc spec --rootless` does.
default_spec() {
	local dir=$1 rootless=${2:-}
	rm -f "$dir/config.json"
	if (cd "$dir" && as_user "$RUNTIME" spec $rootless) >&2 && [[ -s "$dir/config.json" ]]; then
		return 0
	fi
	echo "note: '$RUNTIME spec $rootless' failed; using the fixture spec" >&2
	if [[ -n "$rootless" ]]; then
		jq --argjson uid "$(as_user id -u)" --argjson gid "$(as_user id -g)" \
			-f "$INTEGRATION_ROOT/fixtures/rootless.jq" \
			"$INTEGRATION_ROOT/fixtures/runc-spec.json" >"$dir/config.json"
	else
		cp "$INTEGRATION_ROOT/fixtures/runc-spec.json" "$dir/config.json"
	fi
}

# setup_bundle [DIR]: a fresh bundle with a copy of the busybox rootfs and
# the runtime's default spec, adjusted for non-interactive tests:
# terminal false, no linux.resources (cgroup limits are a separate issue and
# the default device rule would only add a warning to the output).
setup_bundle() {
	BUNDLE=${1:-$BATS_TEST_TMPDIR/bundle}
	ensure_busybox_cache
	mkdir -p "$BUNDLE"
	cp -a "$BUSYBOX_CACHE" "$BUNDLE/rootfs"
	give_to_user "$BUNDLE"
	if is_rootless; then
		default_spec "$BUNDLE" --rootless
	else
		default_spec "$BUNDLE"
	fi
	update_config '.process.terminal = false | del(.linux.resources)'
	chmod 0644 "$BUNDLE/config.json"
}

# ---------------------------------------------------------------------------
# Per-test set-up and clean-up; each .bats file calls these from setup()
# and teardown().

setup_test() {
	[[ -x "$RUNTIME" ]] || fail "runtime $RUNTIME is not built (make build), or set RUNTIME=\$(which runc)"
	if is_rootless; then
		[[ $EUID -eq 0 ]] || fail "ROOTLESS=1 runs bats as root and the runtime as $TEST_USER"
		ensure_test_user
		open_tmp_path
		AS_USER=(setpriv --reuid="$(test_uid)" --regid="$(test_gid)" --init-groups
			env HOME="$BATS_TEST_TMPDIR/xdg" XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg"
			USER="$TEST_USER" LOGNAME="$TEST_USER")
	fi
	ROOT="$BATS_TEST_TMPDIR/state"
	XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg"
	mkdir -p "$ROOT" "$XDG_RUNTIME_DIR"
	chmod 0700 "$ROOT" "$XDG_RUNTIME_DIR"
	# The test dir itself belongs to the runtime user, so it can write pid
	# files, sockets and logs there.
	give_to_user "$ROOT" "$XDG_RUNTIME_DIR" "$BATS_TEST_TMPDIR"
	export XDG_RUNTIME_DIR
	# Each test's containers get ids unique on the host, so leftovers of one
	# test can never be mistaken for another's.
	CID="nbx-${BATS_SUITE_TEST_NUMBER:-0}-$$"
	HOST_MNTNS=$(readlink /proc/self/ns/mnt)
	setup_bundle
}

teardown_test() {
	[[ -n "${ROOT:-}" && -d "$ROOT" ]] || return 0
	local id pid
	for id in $(__runtime list -q 2>/dev/null); do
		__runtime delete --force "$id" >/dev/null 2>&1 || true
	done
	# Whatever the runtime failed to clean: kill inits named in state files.
	for f in "$ROOT"/*/state.json; do
		[[ -f "$f" ]] || continue
		pid=$(jq -r '.init_process_pid // .pid // empty' "$f" 2>/dev/null)
		[[ -n "$pid" && "$pid" != 0 ]] && kill -9 "$pid" 2>/dev/null
	done
	if [[ -n "${RUNTIME_BG_PID:-}" ]]; then
		kill -9 "$RUNTIME_BG_PID" 2>/dev/null
		wait "$RUNTIME_BG_PID" 2>/dev/null
	fi
	kill_bg_jobs
	# Lazily unmount anything left under the test dir so bats can remove it.
	local m
	for m in $(awk -v d="$BATS_TEST_TMPDIR" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	return 0
}

# kill_bg_jobs: background processes the test started and did not reap.
# `jobs -p` also lists bats' timeout watchdog (a subshell waiting on `sleep
# $BATS_TEST_TIMEOUT`); it is left to bats: killed here, its sleep would
# outlive it, hold the output pipe open and stall the run by that long.
kill_bg_jobs() {
	local j
	for j in $(jobs -p) ${RECVTTY_PID:-}; do
		if [[ -n "${BATS_TEST_TIMEOUT:-}" ]] &&
			pgrep -P "$j" -f "^sleep ${BATS_TEST_TIMEOUT}\$" >/dev/null 2>&1; then
			continue
		fi
		kill -9 "$j" 2>/dev/null
		wait "$j" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------------------------------
# Leftover checks (a failed create, a delete).

# host_mounts_under PATH: host mount points under PATH (none expected).
host_mounts_under() {
	awk -v d="$1" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo
}

# leftover_procs: processes (not zombies) in a mount namespace other than
# the host's whose mounts mention this test's bundle: a container init before
# or after exec. Matching on the bundle keeps other containers on the host
# out of it.
leftover_procs() {
	local p tail
	tail="$(basename "$BATS_TEST_TMPDIR")/${BUNDLE#"$BATS_TEST_TMPDIR"/}"
	for p in /proc/[0-9]*; do
		# -ef compares the namespaces' inodes without a fork per process:
		# a host with thousands of processes must not make this slow.
		[[ "$p/ns/mnt" -ef /proc/$$/ns/mnt ]] && continue
		grep -qs '^State:.*Z' "$p/status" && continue
		grep -qsF "$tail" "$p/mountinfo" || continue
		echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
	done
	return 0
}

# assert_nothing_left ID: no state dir, no process, no mount for ID.
assert_nothing_left() {
	local id=$1 left
	[[ ! -e "$ROOT/$id" ]] || fail "state dir $ROOT/$id left behind: $(ls -la "$ROOT/$id")"
	left=$(host_mounts_under "$BUNDLE")
	[[ -z "$left" ]] || fail "mounts left under $BUNDLE: $left"
	left=$(leftover_procs)
	[[ -z "$left" ]] || fail "processes left: $left"
	return 0
}

# ---------------------------------------------------------------------------
# Convenience for in-container checks.

# run_container CMD...: set process.args and `run` the bundle in the
# foreground; $output is the container's output.
run_container() {
	set_args "$@"
	runtime run -b "$BUNDLE" "$CID"
}

# run_sh SNIPPET: run_container sh -c SNIPPET.
run_sh() {
	run_container sh -c "$1"
}

# create_sleeping [ID]: create (not start) a container running `sleep 1000`.
create_sleeping() {
	local id=${1:-$CID}
	set_args sleep 1000
	runtime_ok create -b "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/$id.pid" "$id"
}

# run_detached [ID]: create + start a container running `sleep 1000`.
run_detached() {
	local id=${1:-$CID}
	set_args sleep 1000
	runtime_ok run -d -b "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/$id.pid" "$id"
}

# use_subid_mappings: in rootless mode, map container uid/gid 0 to the
# caller and 1..65536 to its /etc/subuid and /etc/subgid range (written by
# newuidmap/newgidmap), so container users other than root exist. Does
# nothing when rootful.
use_subid_mappings() {
	is_rootless || return 0
	requires newuidmap
	local u g su sg
	u=$(test_uid)
	g=$(test_gid)
	su=$(awk -F: -v n="$TEST_USER" '$1 == n {print $2; exit}' /etc/subuid)
	sg=$(awk -F: -v n="$TEST_USER" '$1 == n {print $2; exit}' /etc/subgid)
	update_config '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: $su, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}, {containerID: 1, hostID: $sg, size: 65536}]' \
		"$BUNDLE" --argjson u "$u" --argjson g "$g" --argjson su "$su" --argjson sg "$sg"
}

# proc_ns PID TYPE: the namespace id (e.g. "net:[4026531840]").
proc_ns() {
	readlink "/proc/$1/ns/$2"
}

# ---------------------------------------------------------------------------
# cgroups (cgroups.bats, update, pause, ps, events). In the cgroup v2 VM
# (make test-cgroup2) the rootless runs happen inside the subtree delegated
# to the test user, $NANOBOX_TEST_CGROUP_PARENT.

cgroup_v2() {
	[[ "$(stat -f -c %T /sys/fs/cgroup)" == cgroup2fs ]]
}

# can_have_cgroup: the runtime under test can give a container a cgroup
# here: as root, or rootless in a delegated cgroup v2 subtree.
can_have_cgroup() {
	is_rootless || return 0
	cgroup_v2 && [[ -n "${NANOBOX_TEST_CGROUP_PARENT:-}" ]]
}

# requires_cgroup: skip unless containers get a cgroup (limits enforced).
requires_cgroup() {
	can_have_cgroup ||
		skip "rootless without a delegated cgroup v2 subtree: no cgroup here (the VM has one: make test-cgroup2)"
}

# set_resources JSON: merge JSON into linux.resources.
set_resources() {
	update_config '.linux.resources = ((.linux.resources // {}) * $r)' "$BUNDLE" --argjson r "$1"
}

# configure RESOURCES-JSON CMD...: set_resources and set_args in one edit
# (every jq costs a good part of a second in the emulated cgroup v2 VM).
configure() {
	local r=$1 i=0 a named=()
	shift
	# One --arg per word: jq would take a "-c" after --args as its own flag.
	for a in "$@"; do
		named+=(--arg "a$i" "$a")
		i=$((i + 1))
	done
	update_config '.linux.resources = ((.linux.resources // {}) * $r) | .process.args = [$ARGS.named | del(.r) | .[]]' \
		"$BUNDLE" --argjson r "$r" "${named[@]}"
}

# start_detached [ID]: `run -d` the bundle as it is; the pid is in
# $BATS_TEST_TMPDIR/ID.pid (see ctr_pid).
start_detached() {
	local id=${1:-$CID}
	runtime_ok run -d -b "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/$id.pid" "$id"
}

# ctr_pid [ID]: init's pid from the pid file of start_detached/run_detached.
ctr_pid() {
	cat "$BATS_TEST_TMPDIR/${1:-$CID}.pid"
}

# cgroup_path PID [CONTROLLER]: the host directory of PID's cgroup (on
# cgroup v1, the one of CONTROLLER, default pids).
cgroup_path() {
	local pid=$1 ctrl=${2:-pids} line ctrls
	if cgroup_v2; then
		line=$(grep '^0::' "/proc/$pid/cgroup")
		echo "/sys/fs/cgroup${line#0::}"
		return
	fi
	line=$(grep -E "^[0-9]+:([^:]*,)?$ctrl(,[^:]*)?:" "/proc/$pid/cgroup")
	ctrls=${line#*:}
	ctrls=${ctrls%%:*}
	echo "/sys/fs/cgroup/$ctrls${line#*:*:}"
}

# cgroup_value PID V2-FILE V1-CONTROLLER V1-FILE: a file of PID's cgroup.
cgroup_value() {
	if cgroup_v2; then
		cat "$(cgroup_path "$1")/$2"
	else
		cat "$(cgroup_path "$1" "$3")/$4"
	fi
}

# cpu_usage_ns ID: the container's total CPU time, from events --stats.
cpu_usage_ns() {
	__runtime events --stats "$1" | jq -e '.data.cpu.usage.total'
}

# NANOBOX_BUSYBOX_CACHE: a busybox rootfs built beforehand (the cgroup v2 VM
# gets one from the host: building it there takes a minute).
if [[ -n "${NANOBOX_BUSYBOX_CACHE:-}" ]]; then
	BUSYBOX_CACHE=$NANOBOX_BUSYBOX_CACHE
fi
