#!/usr/bin/env bats
# --pidfd-socket (create, run, exec; runc 1.2's): a pidfd of the container's
# init ("standard") or of the exec'd process ("setns") is sent over an
# AF_UNIX socket, SCM_RIGHTS, so that a caller can signal and wait for it
# without a pid that could be recycled.

load helpers
load gohelpers

setup() {
	setup_test
	RECV=$(build_test_helper pidfdrecv) || skip "cannot build tests/integration/pidfdrecv (needs go)"
	SOCK="$BATS_TEST_TMPDIR/pidfd.sock"
	GOT="$BATS_TEST_TMPDIR/pidfd.got"
}

teardown() {
	[[ -z "${RECV_PID:-}" ]] || kill -9 "$RECV_PID" 2>/dev/null
	teardown_test
}

# start_recv: pidfdrecv listening on $SOCK, writing what it gets to $GOT.
start_recv() {
	"$RECV" "$SOCK" "$GOT" 3>&- &
	RECV_PID=$!
	retry 100 0.05 test -S "$SOCK"
}

# kill_through_pidfd: the receiver sends SIGKILL through the pidfd it holds.
kill_through_pidfd() {
	kill -TERM "$RECV_PID"
	wait "$RECV_PID" || fail "pidfdrecv failed"
	RECV_PID=
}

@test "pidfd-socket: create sends a pidfd of init, which signals it" {
	start_recv
	set_args sleep 1000
	runtime_ok create -b "$BUNDLE" --pidfd-socket "$SOCK" "$CID"
	retry 100 0.05 test -s "$GOT"
	[ "$(cat "$GOT")" = "standard $(container_pid "$CID")" ]
	testcontainer "$CID" created
	kill_through_pidfd
	wait_for_status "$CID" stopped
}

@test "pidfd-socket: run -d sends a pidfd of init; the socket does not reach the container" {
	start_recv
	update_config '.root.readonly = false'
	set_args sh -c 'ls -l /proc/self/fd/ >/fds; exec sleep 1000'
	runtime_ok run -d -b "$BUNDLE" --pidfd-socket "$SOCK" "$CID"
	retry 100 0.05 test -s "$GOT"
	[ "$(cat "$GOT")" = "standard $(container_pid "$CID")" ]
	testcontainer "$CID" running
	# init's descriptors: stdio and ls's own directory, no socket.
	runtime_ok exec "$CID" cat /fds
	[[ "$output" == *" 2 -> "* ]] || fail "no descriptor list: $output"
	[[ "$output" != *socket:* ]] || fail "the pidfd socket reached the container: $output"
	kill_through_pidfd
	wait_for_status "$CID" stopped
}

@test "pidfd-socket: exec sends a pidfd of the exec'd process, not of init" {
	run_detached
	start_recv
	runtime_ok exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" --pidfd-socket "$SOCK" "$CID" sleep 1001
	retry 100 0.05 test -s "$GOT"
	pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	[ "$(cat "$GOT")" = "setns $pid" ]
	kill_through_pidfd
	wait_pid_gone "$pid"
	testcontainer "$CID" running
}

@test "pidfd-socket: a socket nobody listens on fails create, exec, and leaves nothing" {
	set_args sleep 1000
	runtime create -b "$BUNDLE" --pidfd-socket "$SOCK" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"pidfd socket $SOCK"* ]]
	[ "${#lines[@]}" -eq 1 ]
	assert_nothing_left "$CID"

	run_detached
	runtime exec --pidfd-socket "$SOCK" "$CID" true
	[ "$status" -eq 255 ]
	[[ "$output" == *"pidfd socket $SOCK"* ]]
	testcontainer "$CID" running
}
