#!/usr/bin/env bats
# containerd (through containerd-shim-runc-v2, as Kubernetes uses it) runs
# its containers on nanobox-runc: `ctr run --runc-binary`, one test per item
# of issue 5's "What must work" that ctr can express, plus an Update through
# the Go client API. Root only; containerd runs with a private config, state,
# socket and runtime root, started and stopped by this file.

load helpers
load clients/clients

bats_require_minimum_version 1.5.0

# bats 1.8 cannot skip from setup_file: it leaves the reason for setup().
setup_file() {
	export CLIENTS_SKIP=
	local p
	if [[ "${ROOTLESS:-0}" == 1 ]]; then
		CLIENTS_SKIP="containerd runs as root here (rootless containerd is not part of this suite)"
	elif [[ $EUID -ne 0 ]]; then
		CLIENTS_SKIP="the client suites run as root"
	fi
	for p in containerd ctr containerd-shim-runc-v2 podman; do
		[[ -n "$CLIENTS_SKIP" ]] || command -v "$p" >/dev/null ||
			CLIENTS_SKIP="$p is not installed (apt-get install containerd podman conmon)"
	done
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	[[ -x "$RUNTIME" ]] || fail "runtime $RUNTIME is not built (go build -o nanobox-runc .)"
	containerd_start "$BATS_FILE_TMPDIR/ctrd"
	containerd_import
}

teardown_file() {
	containerd_stop
}

setup() {
	[[ -z "$CLIENTS_SKIP" ]] || skip "$CLIENTS_SKIP"
	C=nbx-ct-$BATS_TEST_NUMBER
}

teardown() {
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	# Not kill_bg_jobs: `jobs -p` includes bats' BATS_TEST_TIMEOUT watchdog,
	# whose orphaned sleep would then hold the TAP pipe open.
	if [[ -n "${EVENTS_PID:-}" ]]; then
		kill "$EVENTS_PID" 2>/dev/null
		wait "$EVENTS_PID" 2>/dev/null
	fi
	ctr_rm_all
}

TRAPPER='trap "echo got-usr1" USR1; trap "echo bye; exit 0" TERM; echo started; while :; do sleep 0.1; done'

# run_d ID ARGS...: a detached task; its output goes to $BATS_TEST_TMPDIR/ID.log.
run_d() {
	local id=$1
	shift
	ctr_run -d --log-uri "file://$BATS_TEST_TMPDIR/$id.log" "$@"
	[[ $status -eq 0 ]] || fail "ctr run -d $* exited $status"
	ctr_wait_status "$id" RUNNING
}

# spec_for ID JQ-EXPR CMD...: a config.json for `ctr run --config` (ctr has
# no flag for a user or a pids limit): ctr's default spec with the cgroup
# path ctr itself would use, the image's rootfs unpacked under the test dir
# (a spec file excludes an image) and CMD, edited by JQ-EXPR. Prints its path.
spec_for() {
	local id=$1 expr=$2 f="$BATS_TEST_TMPDIR/$1.json" r="$BATS_TEST_TMPDIR/$1.rootfs"
	shift 2
	mkdir -p "$r"
	tar -C "$r" -xf "$CLIENTS_WORK/busybox.tar"
	ctr oci spec | jq --arg cg "/$CTR_NS/$id" --arg root "$r" --argjson args "$(json_array "$@")" \
		'.linux.cgroupsPath = $cg | .root.path = $root | .process.args = $args
		| .process.env = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"] | '"$expr" >"$f"
	echo "$f"
}

# in_tty CMD...: CMD with a pty as its stdin/stdout (ctr -t needs one).
in_tty() {
	script -qefc "$(printf '%q ' "$@")" /dev/null </dev/null
}

@test "ctr run --rm --runc-binary: output and exit codes" {
	ctr_run --rm "$IMAGE" "$C" echo hello from nanobox </dev/null
	[ "$status" -eq 0 ]
	[ "$output" = "hello from nanobox" ]

	ctr_run --rm "$IMAGE" "$C" sh -c 'echo out; echo err >&2; exit 3' </dev/null
	[ "$status" -eq 3 ]
	[ "$output" = out ]
	[[ "$stderr" == *err* ]]

	# The shim called our binary, with our root.
	[ -d "$CTRD_DIR/runc/$CTR_NS" ]
	[ -z "$(ctr containers ls -q)" ]
}

@test "ctr run -d, logs, task kill, task delete, container delete" {
	run_d "$C" "$IMAGE" "$C" sh -c "$TRAPPER"
	retry 50 0.1 grep -q started "$BATS_TEST_TMPDIR/$C.log"
	# The runtime keeps its state under the --root the shim passed.
	[ -d "$CTRD_DIR/runc/$CTR_NS/$C" ]

	# ctr task kill: SIGTERM by default; the trap runs and init exits 0.
	cr_ok tasks kill "$C"
	ctr_wait_status "$C" STOPPED
	grep -qx bye "$BATS_TEST_TMPDIR/$C.log"

	cr_ok tasks delete "$C"
	[[ "$output$stderr" != *"non-zero exit"* ]]
	cr_ok containers delete "$C"
	[ -z "$(ctr containers ls -q)" ]
	[ ! -e "$CTRD_DIR/runc/$CTR_NS/$C" ]
}

@test "ctr run -t (console socket) and stdin" {
	run -4 --separate-stderr in_tty ctr run -t --rm --runc-binary "$(clients_runtime_path)" \
		--runc-root "$CTRD_DIR/runc" "$IMAGE" "$C" \
		sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo stdio-is-tty; exit 4'
	echo "$output"
	[[ "$output" == *"/dev/pts/"* ]]
	[[ "$output" == *stdio-is-tty* ]]

	# stdin reaches the container; without -t it is not a tty.
	run -5 --separate-stderr ctr run --rm --runc-binary "$(clients_runtime_path)" \
		--runc-root "$CTRD_DIR/runc" "$IMAGE" "$C-i" \
		sh -c '[ -t 0 ] || echo not-a-tty; read x; echo "got $x"; exit 5' <<<"ping"
	echo "$output"
	[ "${lines[0]}" = not-a-tty ]
	[ "${lines[1]}" = "got ping" ]
}

@test "ctr task exec with and without a tty, and its exit code" {
	run_d "$C" "$IMAGE" "$C" sleep 1000

	cr tasks exec --exec-id e1 "$C" sh -c 'echo in-container; exit 7' </dev/null
	[ "$status" -eq 7 ]
	[ "$output" = in-container ]

	run -6 --separate-stderr in_tty ctr tasks exec -t --exec-id e2 "$C" sh -c 'tty; exit 6'
	echo "$output"
	[[ "$output" == *"/dev/pts/"* ]]

	run --separate-stderr ctr tasks exec --exec-id e3 "$C" sh -c 'read x; echo "got $x"' <<<"pong"
	[ "$status" -eq 0 ]
	[ "$output" = "got pong" ]

	cr_ok tasks exec --exec-id e4 --user 1000 "$C" id -u </dev/null
	[ "$output" = 1000 ]

	# A command that is not there: the runtime's message (from its --log
	# JSON, which the shim reads) reaches ctr.
	cr tasks exec --exec-id e5 "$C" nosuch </dev/null
	[ "$status" -ne 0 ]
	[[ "$stderr" == *nosuch* ]]
	[[ "$stderr" == *"not found"* || "$stderr" == *"no such file"* || "$stderr" == *"No such file"* ]]
}

@test "ctr task ps: the container's processes, in its cgroup" {
	run_d "$C" "$IMAGE" "$C" sleep 1000
	cr_ok tasks exec -d --exec-id e1 "$C" sleep 999 </dev/null
	pid=$(ctr_pid "$C")

	# ctr asked for cgroupsPath /<namespace>/<id>.
	[ "$(cgroup_of "$pid" memory)" = "/$CTR_NS/$C" ]
	[ "$(cgroup_of "$pid" pids)" = "/$CTR_NS/$C" ]

	# ctr task ps -> the shim's `ps --format json ID`.
	cr_ok tasks ps "$C"
	[[ "$output" == *"$pid"* ]]
	n=$(awk 'NR > 1' <<<"$output" | wc -l)
	[ "$n" -eq 2 ]
	for p in $(awk 'NR > 1 {print $1}' <<<"$output"); do
		grep -Eqx 'sleep' "/proc/$p/comm"
	done
}

@test "ctr task pause and resume freeze and thaw the container" {
	# The counter is replaced, not rewritten: a freeze between the
	# truncation and the write would leave the host an empty file.
	run_d "$C" "$IMAGE" "$C" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.05; done'
	pid=$(ctr_pid "$C")
	retry 50 0.1 test -s "/proc/$pid/root/tmp/count"

	cr_ok tasks pause "$C"
	[ "$(ctr_task_field "$C" STATUS)" = PAUSED ]
	if cgroup_v2; then
		[ "$(cgroup_read "$pid" freezer freezer.state cgroup.freeze)" = 1 ]
	else
		[ "$(cgroup_read "$pid" freezer freezer.state cgroup.freeze)" = FROZEN ]
	fi
	a=$(cat "/proc/$pid/root/tmp/count")
	sleep 0.5
	[ "$(cat "/proc/$pid/root/tmp/count")" = "$a" ]

	cr_ok tasks resume "$C"
	[ "$(ctr_task_field "$C" STATUS)" = RUNNING ]
	retry 20 0.1 eval "[ \"\$(cat /proc/$pid/root/tmp/count)\" -gt $a ]"
}

@test "ctr task kill with a signal, and --all" {
	run_d "$C" "$IMAGE" "$C" sh -c "$TRAPPER"
	retry 50 0.1 grep -q started "$BATS_TEST_TMPDIR/$C.log"

	cr_ok tasks kill -s SIGUSR1 "$C"
	retry 50 0.1 grep -q got-usr1 "$BATS_TEST_TMPDIR/$C.log"
	[ "$(ctr_task_field "$C" STATUS)" = RUNNING ]

	cr_ok tasks kill -s SIGKILL "$C"
	ctr_wait_status "$C" STOPPED
	cr tasks delete "$C"
	[[ "$output$stderr" == *137* ]]

	# --all: the shim's `kill --all ID 9` reaches every process.
	run_d "$C-2" "$IMAGE" "$C-2" sh -c 'trap "" TERM; sleep 1000 & wait'
	cr_ok tasks kill --all -s SIGKILL "$C-2"
	ctr_wait_status "$C-2" STOPPED
}

@test "containerd Update through the API: memory and pids of a running task" {
	bin=$(ctrupdate_bin) || skip "cannot build ctrupdate (needs go and the Go module proxy)"
	run_d "$C" --memory-limit $((256 << 20)) "$IMAGE" "$C" sleep 1000
	pid=$(ctr_pid "$C")
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((256 << 20)) ]

	# Tasks.Update -> the shim's `update --resources - ID` (JSON on stdin).
	run "$bin" -address "$CONTAINERD_ADDRESS" -namespace "$CTR_NS" \
		-memory $((128 << 20)) -pids 50 "$C"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((128 << 20)) ]
	[ "$(cgroup_read "$pid" pids pids.max pids.max)" -eq 50 ]
	[ "$(ctr_task_field "$C" STATUS)" = RUNNING ]
}

@test "ctr run --memory-limit: the OOM kill is reported as a /tasks/oom event" {
	ctr events >"$BATS_TEST_TMPDIR/events" 2>&1 &
	EVENTS_PID=$!
	# Until the subscription is live: a namespace made now shows in it.
	local probe=0
	retry 100 0.05 eval 'probe=$((probe + 1)); ctr namespaces create "nbx-probe-$$-$probe" >/dev/null 2>&1
		grep -q "/namespaces/create" "$BATS_TEST_TMPDIR/events"'
	for ((; probe > 0; probe--)); do
		ctr namespaces remove "nbx-probe-$$-$probe" >/dev/null 2>&1 || true
	done
	# The program allocates only once the test says so: the shim watches
	# the cgroup for OOM kills once the task has started, and an OOM kill
	# before that goes unreported (by containerd, whatever the runtime).
	local go="$BATS_TEST_TMPDIR/go"
	mkdir "$go"
	run_d "$C" --memory-limit $((32 << 20)) --mount "type=bind,src=$go,dst=/go,options=rbind:ro" "$IMAGE" "$C" \
		sh -c 'while [ ! -e /go/now ]; do sleep 0.05; done; exec dd if=/dev/zero of=/dev/null bs=64M count=1'
	touch "$go/now"
	ctr_wait_status "$C" STOPPED
	retry 20 0.1 grep -q "/tasks/oom.*$C" "$BATS_TEST_TMPDIR/events"
	cr tasks delete "$C"
	[[ "$output$stderr" == *137* ]]

	# The same without a limit is fine.
	ctr_run --rm "$IMAGE" "$C-2" dd if=/dev/zero of=/dev/null bs=64M count=1 </dev/null
	[ "$status" -eq 0 ]
}

@test "ctr run with a pids limit" {
	spec=$(spec_for "$C" '.linux.resources.pids = {limit: 10}' sleep 1000)
	run_d "$C" --config "$spec" "$C"
	pid=$(ctr_pid "$C")
	[ "$(cgroup_read "$pid" pids pids.max pids.max)" -eq 10 ]

	cr tasks exec --exec-id e1 "$C" sh -c 'for i in $(seq 20); do sleep 30 >/dev/null 2>&1 & done; echo spawned-all' </dev/null
	[ "$status" -ne 0 ]
	[[ "$output" != *spawned-all* ]]
	[[ "$stderr" == *"can't fork"* || "$stderr" == *"Resource temporarily unavailable"* ]]
}

@test "ctr run --read-only" {
	ctr_run --rm --read-only "$IMAGE" "$C" sh -c 'grep " / " /proc/mounts; touch /file' </dev/null
	[ "$status" -ne 0 ]
	[[ "$output" == *" ro,"* || "$output" == *" ro "* ]]
	[[ "$stderr" == *"Read-only file system"* ]]
}

@test "ctr run as a user (process.user)" {
	spec=$(spec_for "$C" '.process.user = {uid: 1000, gid: 1000, additionalGids: [1001]}' \
		sh -c "id; $CAPEFF_SNIPPET; touch /root/x")
	ctr_run --rm --config "$spec" "$C" </dev/null
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = "uid=1000(user) gid=1000(user) groups=1001(extra)" ]
	[ "${lines[1]}" = 0000000000000000 ]
	[[ "$stderr" == *"Permission denied"* ]]
}

@test "ctr run --mount: a bind mount read-only and read-write" {
	d="$BATS_TEST_TMPDIR/data"
	mkdir -p "$d"
	echo from-host >"$d/in"

	ctr_run --rm --mount "type=bind,src=$d,dst=/data,options=rbind:ro" "$IMAGE" "$C" \
		sh -c 'cat /data/in; echo x >/data/out' </dev/null
	[ "$status" -ne 0 ]
	[ "$output" = from-host ]
	[[ "$stderr" == *"Read-only file system"* ]]
	[ ! -e "$d/out" ]

	ctr_run --rm --mount "type=bind,src=$d,dst=/data,options=rbind:rw" "$IMAGE" "$C" \
		sh -c 'cat /data/in; echo from-container >/data/out' </dev/null
	[ "$status" -eq 0 ]
	[ "$output" = from-host ]
	[ "$(cat "$d/out")" = from-container ]
}

@test "ctr run --cap-drop and --cap-add" {
	ctr_run --rm "$IMAGE" "$C" sh -c 'chown 1000 /tmp && ip link set lo mtu 1280' </dev/null
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Operation not permitted"* ]]

	ctr_run --rm --cap-drop CAP_CHOWN "$IMAGE" "$C" chown 1000 /tmp </dev/null
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Operation not permitted"* ]]

	ctr_run --rm --cap-add CAP_NET_ADMIN "$IMAGE" "$C" ip link set lo mtu 1280 </dev/null
	[ "$status" -eq 0 ]
}

@test "ctr run --seccomp with a profile (and containerd's default profile)" {
	seccomp_deny_mkdir "$BATS_TEST_TMPDIR/seccomp.json"
	ctr_run --rm --seccomp --seccomp-profile "$BATS_TEST_TMPDIR/seccomp.json" "$IMAGE" "$C" \
		sh -c 'grep ^Seccomp: /proc/self/status; mkdir /tmp/d' </dev/null
	[ "$status" -ne 0 ]
	[[ "$output" == *"Seccomp:"*2* ]]
	[[ "$stderr" == *"Operation not permitted"* ]]

	ctr_run --rm --seccomp "$IMAGE" "$C" grep ^Seccomp: /proc/self/status </dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *2 ]]
	# ctr applies no profile unless asked.
	ctr_run --rm "$IMAGE" "$C" grep ^Seccomp: /proc/self/status </dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *0 ]]
}

@test "ctr run: a command not found fails with the runtime's message" {
	ctr_run --rm "$IMAGE" "$C" nosuch </dev/null
	[ "$status" -ne 0 ]
	[[ "$stderr" == *nosuch* ]]
	[[ "$stderr" == *"not found"* || "$stderr" == *"no such file"* || "$stderr" == *"No such file"* ]]
	# ctr run --rm does not remove a container whose task failed to start.
	ctr containers rm "$C" >/dev/null 2>&1 || true
	[ ! -e "$CTRD_DIR/runc/$CTR_NS/$C" ]
	assert_cgroup_gone "/$CTR_NS/$C"
}

@test "containerd: many containers in a row leave no state dirs, cgroups, mounts or processes" {
	local ids=() n id
	for n in $(seq 8); do
		ctr_run --rm "$IMAGE" "$C-r$n" sh -c "echo run-$n" </dev/null
		[ "$status" -eq 0 ]
		[ "$output" = "run-$n" ]
		ids+=("$C-r$n")
	done
	for n in $(seq 4); do
		run_d "$C-d$n" "$IMAGE" "$C-d$n" sleep 1000
		cr_ok tasks exec --exec-id e1 "$C-d$n" true </dev/null
		cr_ok tasks kill -s SIGKILL "$C-d$n"
		ctr_wait_status "$C-d$n" STOPPED
		cr_ok tasks delete "$C-d$n"
		cr_ok containers delete "$C-d$n"
		ids+=("$C-d$n")
	done
	[ -z "$(ctr containers ls -q)" ]

	for id in "${ids[@]}"; do
		[ ! -e "$CTRD_DIR/runc/$CTR_NS/$id" ] || fail "state dir $CTRD_DIR/runc/$CTR_NS/$id left"
		[ ! -e "$(ctr_bundle "$id")" ] || fail "bundle $(ctr_bundle "$id") left"
		assert_cgroup_gone "/$CTR_NS/$id"
		[ -z "$(grep -F "/$id/" /proc/self/mountinfo)" ] || fail "mounts left: $(grep -F "/$id/" /proc/self/mountinfo)"
	done
	left=$(procs_mentioning "${ids[@]}")
	[ -z "$left" ] || fail "processes left: $left"
	left=$(awk -v d="$CTRD_DIR/state/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo)
	[ -z "$left" ] || fail "mounts left under containerd's state: $left"
}
