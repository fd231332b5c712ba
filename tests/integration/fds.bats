#!/usr/bin/env bats
# Descriptors: the container sees 0-2 and the --preserve-fds ones, nothing
# the runtime or its caller had open (CVE-2024-21626).

load helpers

setup() {
	setup_test
	F1="$BATS_TEST_TMPDIR/f1"
	F2="$BATS_TEST_TMPDIR/f2"
	echo one >"$F1"
	echo two >"$F2"
	chmod 0644 "$F1" "$F2"
}

teardown() {
	teardown_test
}

# runtime_with_fds ARGS...: the runtime with fds 3 and 4 open on F1 and F2
# (and fd 7 on /etc/hostname), the way a caller passes descriptors. Sets
# $status and $output.
runtime_with_fds() {
	local out="$BATS_TEST_TMPDIR/fds.out"
	status=0
	(
		exec 3<"$F1" 4<"$F2" 7</etc/hostname
		exec timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@"
	) </dev/null >"$out" 2>&1 || status=$?
	output=$(cat "$out")
	echo "runtime $* (status $status):"
	echo "$output"
}

# fd_list: the fds the container's shell listed after its "fds:" line.
# ls must run as a child of the shell, whose fds are the ones listed: not
# as the last command (ash would exec it, listing ls's own directory fd) and
# not in a pipeline (the shell's pipe fds would be listed too).
fd_list() {
	sed -n '/^fds:$/,$p' <<<"$output" | grep -E '^[0-9]+$' | sort -n | tr '\n' ' '
}

@test "fds: the container has only 0, 1 and 2 open" {
	set_cmd 'echo fds:; ls /proc/$$/fd; echo end'
	runtime_with_fds run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[ "$(fd_list)" = "0 1 2 " ]
}

@test "fds: an exec'd process has only 0, 1 and 2 open: nothing of the runtime, no cgroup file" {
	# The stage exec starts joins the container's cgroup through tasks
	# files the runtime opened: none of them may reach the program.
	run_detached
	runtime_with_fds exec "$CID" sh -c 'echo "cgroup files: $(ls -l /proc/$$/fd | grep -c /sys/fs/cgroup)"; echo fds:; ls /proc/$$/fd; echo end'
	[ "$status" -eq 0 ]
	[ "$(fd_list)" = "0 1 2 " ] || fail "fds: $(fd_list)"
	[[ "$output" == *"cgroup files: 0"* ]]
}

@test "fds: --preserve-fds 2 passes fds 3 and 4, and nothing above" {
	set_cmd 'cat <&3; cat <&4; echo fds:; ls /proc/$$/fd; echo end'
	runtime_with_fds run --preserve-fds 2 -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p <<<"$output")" = one ]
	[ "$(sed -n 2p <<<"$output")" = two ]
	[ "$(fd_list)" = "0 1 2 3 4 " ]
}

@test "fds: systemd socket activation: LISTEN_FDS fds go to the container, --preserve-fds counts after them" {
	# As runc: with LISTEN_PID the runtime's pid and LISTEN_FDS=1, fd 3 is
	# the container's fd 3 with LISTEN_FDS=1 LISTEN_PID=1; --preserve-fds 1
	# is then fd 4.
	set_cmd 'echo "env $LISTEN_FDS $LISTEN_PID"; cat <&3; cat <&4; echo fds:; ls /proc/$$/fd; echo end'
	local out="$BATS_TEST_TMPDIR/listen.out"
	status=0
	(
		exec 3<"$F1" 4<"$F2"
		# No timeout(1) here: it would be the process LISTEN_PID names.
		export LISTEN_FDS=1 LISTEN_PID=$BASHPID
		exec "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" run --preserve-fds 1 -b "$BUNDLE" "$CID"
	) </dev/null >"$out" 2>&1 || status=$?
	output=$(cat "$out")
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(sed -n 1,3p <<<"$output")" == $'env 1 1\none\ntwo' ]] || fail "socket activation: $output"
	[ "$(fd_list)" = "0 1 2 3 4 " ]

	# LISTEN_PID of another process: nothing passed, nothing set.
	set_cmd 'echo "env ${LISTEN_FDS:-unset}"; echo fds:; ls /proc/$$/fd; echo end'
	(
		exec 3<"$F1"
		export LISTEN_FDS=1 LISTEN_PID=1
		exec timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID"
	) </dev/null >"$out" 2>&1 || status=$?
	output=$(cat "$out")
	echo "$output"
	[[ $status -eq 0 && "$(sed -n 1p <<<"$output")" == "env unset" ]]
	[ "$(fd_list)" = "0 1 2 " ]
}

@test "fds: socket activation's LISTEN_FDS is init's alone: an exec'd process does not see it" {
	# runc adds LISTEN_FDS and LISTEN_PID to init's environment only; an
	# exec'd process has no fd 3 for them to name.
	set_args sleep 1000
	status=0
	(
		exec 3<"$F1"
		export LISTEN_FDS=1 LISTEN_PID=$BASHPID
		exec "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" run -d -b "$BUNDLE" "$CID"
	) </dev/null >"$BATS_TEST_TMPDIR/d.out" 2>&1 || status=$?
	cat "$BATS_TEST_TMPDIR/d.out"
	[ "$status" -eq 0 ]
	runtime_ok exec "$CID" sh -c 'tr "\0" "\n" </proc/1/environ | grep ^LISTEN_ | sort; echo "exec ${LISTEN_FDS:-unset} ${LISTEN_PID:-unset}"'
	[[ "$output" == $'LISTEN_FDS=1\nLISTEN_PID=1\nexec unset unset' ]] || fail "environments: $output"
}

@test "fds: a foreground run and exec get pipes for stdio, never the caller's descriptors, as in runc" {
	# runc's setupProcessPipes. With the caller's own descriptors the
	# container could reopen them through /proc/self/fd: a log file its
	# caller appends stderr to, opened for reading; and /dev/stdout would
	# not open where stdout is a socket (systemd's journal).
	local probe='for f in 0 1 2; do readlink /proc/self/fd/$f | cut -d: -f1; done; echo x >/dev/stdout && echo reopened; echo to-stderr >&2'
	local want=$'pipe\npipe\npipe\nx\nreopened'
	local log="$BATS_TEST_TMPDIR/caller.log" out
	echo HOSTSECRET >"$log"
	chmod 0666 "$log"
	set_args sh -c "$probe"
	out=$("${AS_USER[@]}" "$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID" 2>>"$log" </dev/null)
	[[ "$out" == "$want" ]] || fail "run: $out"
	run_detached
	out=$("${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec "$CID" sh -c "$probe" 2>>"$log" </dev/null)
	[[ "$out" == "$want" ]] || fail "exec: $out"
	# stderr, a file of its own here, got the process's stderr.
	[[ "$(cat "$log")" == $'HOSTSECRET\nto-stderr\nto-stderr' ]] || fail "stderr: $(cat "$log")"
	# stdout and stderr the same file: one pipe, the order kept.
	out=$("${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec "$CID" sh -c 'for i in 1 2 3; do echo out$i; echo err$i >&2; done' 2>&1 </dev/null)
	[[ "$out" == $'out1\nerr1\nout2\nerr2\nout3\nerr3' ]] || fail "2>&1: $out"
	# stdout a unix socket, as under systemd.
	out=$(python3 -c '
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.run(sys.argv[1:], stdout=b, stdin=subprocess.DEVNULL)
b.close()
data = b""
while True:
    chunk = a.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode().strip(), p.returncode)' "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec "$CID" sh -c 'echo x >/dev/stdout')
	[[ "$out" == "x 0" ]] || fail "exec with stdout a socket: $out"
}

@test "fds: --preserve-fds with create and start" {
	set_cmd 'cat <&3; echo fds:; ls /proc/$$/fd; echo end'
	runtime_with_fds create --preserve-fds 1 -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	out="$BATS_TEST_TMPDIR/fds.out"
	runtime_ok start "$CID"
	wait_for_status "$CID" stopped
	retry 20 0.05 grep -qx end "$out"
	output=$(cat "$out")
	echo "$output"
	[ "$(sed -n 1p <<<"$output")" = one ]
	[ "$(fd_list)" = "0 1 2 3 " ]
}

@test "fds: --preserve-fds beyond the fds passed is a clear error, never the runtime's own fds, and leaves nothing" {
	skip_if_runc "runc 1.1.5 hands its own descriptors (cgroup directory, epoll, log file) to the program"
	set_cmd 'echo fds:; ls /proc/$$/fd; echo end'
	# Fds 3 and 4 are passed (and 7): 5 is free, or one the runtime (the
	# Go runtime's cgroup file) opened.
	runtime_with_fds run --preserve-fds 3 -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--preserve-fds 3: fd 5 was not passed to the runtime ("*"): start it with fds 3 to 5 open"* ]]
	assert_nothing_left "$CID"

	# With --log, fd 5 is the runtime's log file: refused all the same.
	runtime_with_fds --log "$BATS_TEST_TMPDIR/runtime.log" run --preserve-fds 3 -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--preserve-fds 3: fd 5 was not passed to the runtime (it is one of the runtime's own)"* ]]
	assert_nothing_left "$CID"

	# Far more than were passed: the same error, nothing half-made, and a
	# delete --force that has nothing to wait for.
	runtime_with_fds create --preserve-fds 200 -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"--preserve-fds 200: fd 5 was not passed"* ]]
	runtime delete --force "$CID"
	[ "$status" -ne 124 ]
	assert_nothing_left "$CID"

	# exec checks the same way.
	run_detached
	runtime_with_fds exec --preserve-fds 3 "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"--preserve-fds 3: fd 5 was not passed"* ]]
}

@test "fds: the working directory is inside the container" {
	# CVE-2024-21626: a leaked host directory fd as cwd would show here.
	update_config '.process.cwd = "/tmp"'
	set_cmd 'pwd; readlink /proc/self/cwd; ls / | grep -c bin'
	runtime_with_fds run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p <<<"$output")" = /tmp ]
	[ "$(sed -n 2p <<<"$output")" = /tmp ]
}

@test "fds: a process.cwd of /proc/self/fd/N is refused or stays inside" {
	update_config '.process.cwd = "/proc/self/fd/7"'
	set_cmd 'ls ..; pwd'
	runtime_with_fds run -b "$BUNDLE" "$CID"
	# Either an error, or a cwd that is not the host's /etc.
	if [ "$status" -eq 0 ]; then
		! grep -qx hostname <<<"$output"
	fi
}
