#!/usr/bin/env bats
# podman (through conmon) runs its containers on nanobox-runc: one test per
# item of issue 5's "What must work". Root only; podman's config and storage
# are private to the suite (clients/clients.bash).

load helpers
load clients/clients

bats_require_minimum_version 1.5.0

# bats 1.8 cannot skip from setup_file: it leaves the reason for setup().
setup_file() {
	export CLIENTS_SKIP=
	if [[ "${ROOTLESS:-0}" == 1 ]]; then
		CLIENTS_SKIP="podman runs as root here (rootless podman: podman-rootless.bats)"
	elif [[ $EUID -ne 0 ]]; then
		CLIENTS_SKIP="the client suites run as root"
	elif ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
		CLIENTS_SKIP="podman is not installed (apt-get install podman conmon)"
	fi
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	[[ -x "$RUNTIME" ]] || fail "runtime $RUNTIME is not built (go build -o nanobox-runc .)"
	podman_setup "$BATS_FILE_TMPDIR/podman"
}

teardown_file() {
	podman_teardown
}

setup() {
	[[ -z "$CLIENTS_SKIP" ]] || skip "$CLIENTS_SKIP"
	C=nbx-pm-$BATS_TEST_NUMBER
}

teardown() {
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	podman rm -af -t 0 >/dev/null 2>&1 || true
}

# run_d NAME ARGS...: podman run -d --name NAME ARGS, failing the test unless
# it starts.
run_d() {
	local name=$1
	shift
	pm_ok run -d --name "$name" "$@"
}

# A container whose init traps SIGTERM (prints "bye", exits 0) and SIGUSR1
# (prints "got-usr1"), and says "started" once the traps are set.
TRAPPER='trap "echo got-usr1" USR1; trap "echo bye; exit 0" TERM; echo started; while :; do sleep 0.1; done'

@test "podman run --rm: output and exit codes" {
	pm run --rm "$IMAGE" echo hello from nanobox
	[ "$status" -eq 0 ]
	[ "$output" = "hello from nanobox" ]

	pm run --rm "$IMAGE" sh -c 'echo out; echo err >&2; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = "out" ]
	[[ "$stderr" == *err* ]]

	pm run --rm "$IMAGE" sh -c 'exit 255'
	[ "$status" -eq 255 ]

	# --rm removed them.
	[ -z "$(podman ps -aq)" ]
}

@test "podman run -d, logs, stop, rm" {
	run_d "$C" "$IMAGE" sh -c "$TRAPPER"
	retry 50 0.1 eval "podman logs $C | grep -q started"
	[ "$(pm_status "$C")" = running ]
	pm_ok ps --format '{{.Names}} {{.Status}}'
	[[ "$output" == *"$C Up"* ]]

	# stop sends SIGTERM (`kill ID 15`): the trap runs and init exits 0.
	pm_ok stop -t 20 "$C"
	[ "$(pm_status "$C")" = exited ]
	[ "$(podman inspect --format '{{.State.ExitCode}}' "$C")" -eq 0 ]
	pm_ok logs "$C"
	[ "${lines[0]}" = started ]
	[ "${lines[1]}" = bye ]

	pm_ok rm "$C"
	pm ps -aq --filter "name=$C"
	[ -z "$output" ]
}

@test "podman run -t (console socket) and -i" {
	# -t: the pty master goes to conmon over the console socket, the slave
	# is the controlling terminal and stdio of init.
	pm run --rm -t "$IMAGE" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo stdio-is-tty; exit 4'
	[ "$status" -eq 4 ]
	[[ "${lines[0]}" == /dev/pts/* ]]
	[[ "${lines[1]}" == stdio-is-tty* ]]
	# A tty turns \n into \r\n: the output really went through the pty.
	[[ "$output" == *$'\r'* ]]

	# -i: stdin reaches the container; without -t it is not a tty.
	run --separate-stderr podman run --rm -i "$IMAGE" sh -c '[ -t 0 ] || echo not-a-tty; read x; echo "got $x"; exit 5' <<<"ping"
	echo "$output"
	[ "$status" -eq 5 ]
	[ "${lines[0]}" = not-a-tty ]
	[ "${lines[1]}" = "got ping" ]
}

@test "podman exec with and without a tty, and its exit code" {
	run_d "$C" "$IMAGE" sleep 1000

	pm exec "$C" sh -c 'echo in-container; exit 7'
	[ "$status" -eq 7 ]
	[ "$output" = in-container ]

	pm exec -t "$C" sh -c 'tty; exit 6'
	[ "$status" -eq 6 ]
	[[ "$output" == /dev/pts/* ]]

	run --separate-stderr podman exec -i "$C" sh -c 'read x; echo "got $x"' <<<"pong"
	[ "$status" -eq 0 ]
	[ "$output" = "got pong" ]

	# An exec'd process shares init's namespaces.
	pid=$(pm_pid "$C")
	pm_ok exec "$C" readlink /proc/self/ns/pid
	[ "$output" = "$(readlink "/proc/$pid/ns/pid")" ]

	pm -127 exec "$C" nosuch
}

@test "podman top and ps: the container's processes, in its cgroup" {
	run_d "$C" "$IMAGE" sleep 1000
	pm_ok exec -d "$C" sleep 999
	pid=$(pm_pid "$C")
	id=$(pm_id "$C")

	# podman asked for cgroupsPath /libpod_parent/libpod-ID (cgroupfs).
	[ "$(cgroup_of "$pid" memory)" = "/libpod_parent/libpod-$id" ]
	[ "$(cgroup_of "$pid" pids)" = "/libpod_parent/libpod-$id" ]

	retry 20 0.1 eval "podman top $C pid args | grep -q 'sleep 999'"
	pm_ok top "$C" pid args
	[[ "$output" == *"sleep 1000"* ]]
	[[ "$output" == *"sleep 999"* ]]

	pm_ok ps --filter "name=$C" --format '{{.Names}} {{.Command}}'
	[[ "$output" == "$C sleep 1000"* ]]
}

@test "podman pause and unpause freeze and thaw the container" {
	# The counter is replaced, not rewritten: a freeze between the
	# truncation and the write would leave the host an empty file.
	run_d "$C" "$IMAGE" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.05; done'
	pid=$(pm_pid "$C")
	retry 50 0.1 test -s "/proc/$pid/root/tmp/count"

	pm_ok pause "$C"
	[ "$(pm_status "$C")" = paused ]
	if cgroup_v2; then
		[ "$(cgroup_read "$pid" freezer freezer.state cgroup.freeze)" = 1 ]
	else
		[ "$(cgroup_read "$pid" freezer freezer.state cgroup.freeze)" = FROZEN ]
	fi
	a=$(cat "/proc/$pid/root/tmp/count")
	sleep 0.5
	[ "$(cat "/proc/$pid/root/tmp/count")" = "$a" ]

	pm_ok unpause "$C"
	[ "$(pm_status "$C")" = running ]
	retry 20 0.1 eval "[ \"\$(cat /proc/$pid/root/tmp/count)\" -gt $a ]"
	pm_ok exec "$C" true
}

@test "podman kill with a signal" {
	run_d "$C" "$IMAGE" sh -c "$TRAPPER"
	retry 50 0.1 eval "podman logs $C | grep -q started"

	# A numeric signal to init: the trap runs, init keeps running.
	pm_ok kill -s USR1 "$C"
	retry 50 0.1 eval "podman logs $C | grep -q got-usr1"
	[ "$(pm_status "$C")" = running ]

	pm_ok kill -s KILL "$C"
	retry 50 0.1 eval "[ \"\$(pm_status $C)\" = exited ]"
	[ "$(podman inspect --format '{{.State.ExitCode}}' "$C")" -eq 137 ]

	# Without a pid namespace of its own, killing init does not end the
	# container: podman stops it with `kill --all ID 15`, then (SIGTERM
	# ignored) `kill --all ID 9`, which must reach the child too.
	run_d "$C-2" --pid host "$IMAGE" sh -c 'trap "" TERM; sleep 1000 & echo "child $!"; wait'
	retry 50 0.1 eval "podman logs $C-2 | grep -q child"
	child=$(podman logs "$C-2" | awk '$1 == "child" {print $2}')
	grep -qx sleep "/proc/$child/comm"
	pm_ok stop -t 1 "$C-2"
	[ "$(pm_status "$C-2")" = exited ]
	[ "$(podman inspect --format '{{.State.ExitCode}}' "$C-2")" -eq 137 ]
	retry 20 0.1 eval "! grep -qx sleep /proc/$child/comm 2>/dev/null"
}

@test "podman update --memory on a running container" {
	run_d "$C" --memory 256m "$IMAGE" sleep 1000
	pid=$(pm_pid "$C")
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((256 << 20)) ]

	# podman update -> `update --resources FILE ID`.
	pm_ok update --memory 128m "$C"
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((128 << 20)) ]
	[ "$(pm_status "$C")" = running ]
}

@test "podman run --memory: the OOM kill is seen by podman as OOMKilled" {
	# dd's 64M block buffer is touched by reading /dev/zero into it.
	pm_ok create --name "$C" --memory 32m --memory-swap 32m "$IMAGE" \
		dd if=/dev/zero of=/dev/null bs=64M count=1
	# conmon 2.1 reports an OOM kill by creating "oom" in its working
	# directory, which podman 4.3 leaves as its own, while podman looks for
	# it in the bundle (containers/conmon#504, containers/podman#13102; fixed
	# in podman 5 with conmon's persist dir). So start it from the bundle:
	# conmon is spawned by start, not by create.
	bundle=$(podman inspect --format '{{.StaticDir}}' "$C")
	run --separate-stderr bash -c 'cd "$1" && podman start -a "$2"' _ "$bundle" "$C"
	echo "podman start -a: status $status, $output, $stderr"
	[ "$status" -eq 137 ]
	[ "$(podman inspect --format '{{.State.OOMKilled}}' "$C")" = true ]
	[ "$(podman inspect --format '{{.State.ExitCode}}' "$C")" -eq 137 ]

	# The same without a limit is fine.
	pm run --rm "$IMAGE" dd if=/dev/zero of=/dev/null bs=64M count=1
	[ "$status" -eq 0 ]
}

@test "podman run --pids-limit" {
	run_d "$C" --pids-limit 10 "$IMAGE" sleep 1000
	pid=$(pm_pid "$C")
	[ "$(cgroup_read "$pid" pids pids.max pids.max)" -eq 10 ]

	pm exec "$C" sh -c 'for i in $(seq 20); do sleep 30 >/dev/null 2>&1 & done; echo spawned-all'
	[ "$status" -ne 0 ]
	[[ "$output" != *spawned-all* ]]
	[[ "$stderr" == *"can't fork"* || "$stderr" == *"Resource temporarily unavailable"* ]]
}

@test "podman run --read-only" {
	pm run --rm --read-only "$IMAGE" sh -c 'touch /file'
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Read-only file system"* ]]

	# podman mounts writable tmpfs on /tmp, /var/tmp and /run (--read-only-tmpfs).
	pm run --rm --read-only "$IMAGE" sh -c 'touch /tmp/file && grep " / " /proc/mounts'
	[ "$status" -eq 0 ]
	[[ "$output" == *" ro,"* || "$output" == *" ro "* ]]
}

@test "podman run --user" {
	pm run --rm --user 1000:1000 "$IMAGE" id
	[ "$status" -eq 0 ]
	[[ "$output" == "uid=1000(user) gid=1000(user)"* ]]

	# A user name: podman resolves it and its supplementary groups.
	pm run --rm --user user "$IMAGE" sh -c "id; $CAPEFF_SNIPPET; touch /root/x"
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = "uid=1000(user) gid=1000(user) groups=1000(user),1001(extra)" ]
	[ "${lines[1]}" = 0000000000000000 ]
	[[ "$stderr" == *"Permission denied"* ]]
}

@test "podman run -v: a bind mount read-only and read-write" {
	d="$BATS_TEST_TMPDIR/data"
	mkdir -p "$d"
	echo from-host >"$d/in"

	pm run --rm -v "$d:/data:ro" "$IMAGE" sh -c 'cat /data/in; echo x >/data/out'
	[ "$status" -ne 0 ]
	[ "$output" = from-host ]
	[[ "$stderr" == *"Read-only file system"* ]]
	[ ! -e "$d/out" ]

	pm run --rm -v "$d:/data:rw" "$IMAGE" sh -c 'cat /data/in; echo from-container >/data/out'
	[ "$status" -eq 0 ]
	[ "$output" = from-host ]
	[ "$(cat "$d/out")" = from-container ]
}

@test "podman run --cap-drop and --cap-add" {
	# Default set: chown works, NET_ADMIN is not there.
	pm run --rm "$IMAGE" sh -c 'chown 1000 /tmp && ip link set lo mtu 1280'
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Operation not permitted"* ]]

	pm run --rm --cap-drop CHOWN "$IMAGE" chown 1000 /tmp
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Operation not permitted"* ]]

	pm run --rm --cap-add NET_ADMIN "$IMAGE" ip link set lo mtu 1280
	[ "$status" -eq 0 ]

	# Exactly the asked-for set: CHOWN (bit 0) and KILL (bit 5).
	pm run --rm --cap-drop ALL --cap-add CHOWN,KILL "$IMAGE" sh -c "$CAPEFF_SNIPPET"
	[ "$status" -eq 0 ]
	[ "$output" = 0000000000000021 ]
}

@test "podman run with a seccomp profile (and podman's default profile)" {
	seccomp_deny_mkdir "$BATS_TEST_TMPDIR/seccomp.json"
	pm run --rm --security-opt "seccomp=$BATS_TEST_TMPDIR/seccomp.json" "$IMAGE" \
		sh -c 'grep ^Seccomp: /proc/self/status; mkdir /tmp/d'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Seccomp:"*2* ]]
	[[ "$stderr" == *"Operation not permitted"* ]]

	# podman's default profile is applied too (filter mode 2) ...
	pm run --rm "$IMAGE" grep ^Seccomp: /proc/self/status
	[ "$status" -eq 0 ]
	[[ "$output" == *2 ]]
	# ... and unconfined means no filter.
	pm run --rm --security-opt seccomp=unconfined "$IMAGE" grep ^Seccomp: /proc/self/status
	[ "$status" -eq 0 ]
	[[ "$output" == *0 ]]
}

@test "podman run: a command not found gives 127, not executable 126" {
	pm -127 run --rm --cidfile "$BATS_TEST_TMPDIR/cid" "$IMAGE" nosuch
	[[ "$stderr" == *nosuch* ]]
	# The failed create left nothing behind.
	id=$(cat "$BATS_TEST_TMPDIR/cid")
	[ ! -e "/run/$(runtime_name)/$id" ]
	assert_cgroup_gone "/libpod_parent/libpod-$id"

	pm run --rm "$IMAGE" /etc/passwd
	[ "$status" -eq 126 ]

	[ -z "$(podman ps -aq)" ]
}

@test "podman: many containers in a row leave no state dirs, cgroups, mounts or processes" {
	# (not $i: bats' run clobbers it)
	local ids=() n id
	for n in $(seq 8); do
		pm run --rm --cidfile "$BATS_TEST_TMPDIR/cid-$n" "$IMAGE" sh -c "echo run-$n"
		[ "$status" -eq 0 ]
		[ "$output" = "run-$n" ]
		ids+=("$(cat "$BATS_TEST_TMPDIR/cid-$n")")
	done
	for n in $(seq 4); do
		run_d "$C-d$n" "$IMAGE" sleep 1000
		ids+=("$(pm_id "$C-d$n")")
		pm_ok exec "$C-d$n" true
		pm_ok rm -f -t 0 "$C-d$n"
	done
	[ -z "$(podman ps -aq)" ]

	for id in "${ids[@]}"; do
		[ ! -e "/run/$(runtime_name)/$id" ] || fail "state dir /run/$(runtime_name)/$id left"
		assert_cgroup_gone "/libpod_parent/libpod-$id"
		[ -z "$(cgroups_named "$id")" ] || fail "cgroups left: $(cgroups_named "$id")"
		[ -z "$(grep -F "$id" /proc/self/mountinfo)" ] || fail "mounts left: $(grep -F "$id" /proc/self/mountinfo)"
	done
	left=$(procs_mentioning "${ids[@]}")
	[ -z "$left" ] || fail "processes left: $left"
	# Nothing of any of them (rootfs overlays, shm) is still mounted.
	left=$(awk -v d="$PODMAN_DIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo)
	[ -z "$left" ] || fail "mounts left under the podman store: $left"
}
