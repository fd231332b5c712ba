#!/usr/bin/env bats
# process.terminal with --console-socket: the runtime sends the pty master
# over the socket (received here by recvtty/, like runc's recvtty).

load helpers

setup() {
	requires recvtty
	setup_test
	SOCK="$BATS_TEST_TMPDIR/console.sock"
	TTYOUT="$BATS_TEST_TMPDIR/tty.out"
	update_config '.process.terminal = true'
}

teardown() {
	teardown_test
}

# start_recvtty [INPUT]: receive one console on $SOCK, its output in $TTYOUT.
start_recvtty() {
	local input=${1:-}
	"$RECVTTY" -mode 0777 -o "$TTYOUT" ${input:+-i "$input"} "$SOCK" \
		</dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/recvtty.err" 3>&- &
	RECVTTY_PID=$!
	retry 100 0.02 test -S "$SOCK"
}

# wait_recvtty: wait for recvtty to see the container side close; the
# terminal output (CRs removed) is then in $tty.
wait_recvtty() {
	retry 200 0.05 eval '! kill -0 $RECVTTY_PID 2>/dev/null'
	wait "$RECVTTY_PID"
	tty=$(tr -d '\r' <"$TTYOUT")
	echo "terminal output:"
	echo "$tty"
}

# run_tty: create with the console socket, start, wait for the end. (runc
# refuses --console-socket on a foreground run: it only goes with create
# and run -d.)
run_tty() {
	runtime_ok create --console-socket "$SOCK" -b "$BUNDLE" "$CID"
	runtime_ok start "$CID"
	wait_recvtty
	wait_for_status "$CID" stopped
}

@test "tty: a terminal: the process's stdio and /dev/console are the pty" {
	update_config '.process.consoleSize = {height: 25, width: 90}'
	set_cmd 'tty; stat -c "%t:%T" /dev/console; stty size; test -t 0 && test -t 1 && test -t 2 && echo all-tty'
	start_recvtty
	run_tty
	[ "$(sed -n 1p <<<"$tty")" = /dev/pts/0 ]
	# Console is the pts slave: major 136 (0x88).
	[[ "$(sed -n 2p <<<"$tty")" == 88:* ]]
	[ "$(sed -n 3p <<<"$tty")" = "25 90" ]
	[ "$(sed -n 4p <<<"$tty")" = all-tty ]
}

@test "tty: run in the foreground relays output without carriage returns added (ONLCR off, as runc)" {
	command -v script >/dev/null || skip "needs script (util-linux)"
	set_cmd 'printf "one\ntwo\n"'
	# script gives the runtime a terminal on stdin (runc insists on one);
	# its stdout is a file, which gets what the container's pty produced.
	local out="$BATS_TEST_TMPDIR/relay.out"
	: >"$out"
	chmod 0666 "$out"
	as_user script -qefc "$RUNTIME --root $ROOT run -b $BUNDLE $CID >$out" /dev/null </dev/null >/dev/null 2>&1
	od -c "$out"
	# (script's end of input reaches the container's pty as a NUL, which
	# the pty echoes as "^@", whatever the runtime: before the program's
	# output or after it, as the two race.)
	local got
	got=$(sed 's/\^@//g' "$out")
	[ "$got" = "$(printf 'one\ntwo')" ]
	[ "$(tr -cd '\r' <"$out" | wc -c)" -eq 0 ]
}

@test "tty: the terminal is the session's controlling terminal" {
	# /proc/PID/stat fields: 1 pid, 6 session, 7 tty_nr (the controlling
	# terminal, 0 if none).
	set_cmd 'set -- $(cat /proc/$$/stat); echo "pid=$1 sid=$6 tty=$7"'
	start_recvtty
	run_tty
	# pts/0 is device 136:0, tty_nr (136 << 8) | 0.
	[ "$(sed -n 1p <<<"$tty")" = "pid=1 sid=1 tty=34816" ]
}

@test "tty: input written to the master reaches the program" {
	set_cmd 'read line; echo "got:$line"'
	start_recvtty $'typed-input\n'
	run_tty
	grep -qx 'got:typed-input' <<<"$tty"
}

@test "tty: run -d with a terminal" {
	set_cmd 'echo in-detached; sleep 1000'
	start_recvtty
	runtime run -d --console-socket "$SOCK" -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	testcontainer "$CID" running
	retry 100 0.05 grep -q in-detached "$TTYOUT"
	runtime_ok kill "$CID" KILL
	wait_recvtty
	wait_for_status "$CID" stopped
}

@test "tty: create with a terminal, start later" {
	set_cmd 'echo after-start'
	start_recvtty
	runtime_ok create --console-socket "$SOCK" -b "$BUNDLE" "$CID"
	runtime_ok start "$CID"
	wait_recvtty
	grep -qx after-start <<<"$tty"
}

@test "tty: create with terminal true and no --console-socket is an error" {
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *console* ]]
	assert_nothing_left "$CID"
}

@test "tty: --console-socket with terminal false is an error" {
	update_config '.process.terminal = false'
	set_args true
	start_recvtty
	runtime create --console-socket "$SOCK" -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *console* || "$output" == *terminal* || "$output" == *tty* ]]
	assert_nothing_left "$CID"
}

@test "tty: a console socket nobody listens on is an error and leaves nothing" {
	set_args true
	runtime create --console-socket "$BATS_TEST_TMPDIR/nobody.sock" -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}
