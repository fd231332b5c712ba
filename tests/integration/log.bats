#!/usr/bin/env bats
# --log FILE --log-format json|text: what conmon and containerd's shim read.

load helpers

setup() {
	setup_test
	LOG="$BATS_TEST_TMPDIR/runtime.log"
}

teardown() {
	teardown_test
}

# assert_json_lines FILE: every line a JSON object with level, msg, time.
assert_json_lines() {
	local n=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		jq -e 'type == "object" and (.level | type == "string") and (.msg | type == "string") and (.time | type == "string")' \
			<<<"$line" >/dev/null || fail "log line $n is not a {level, msg, time} object: $line"
	done <"$1"
}

@test "log: --log-format json: one JSON object per line, the error message in it" {
	set_args no-such-program
	runtime --log "$LOG" --log-format json create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	cat "$LOG"
	[ -s "$LOG" ]
	assert_json_lines "$LOG"
	jq -e -s 'any(.[]; .level == "error" and (.msg | contains("executable file not found")))' "$LOG"
	# The time is RFC 3339.
	jq -r -s '.[-1].time' "$LOG" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}'
	# The error still reaches stderr too.
	[[ "$output" == *"executable file not found"* ]]
	assert_nothing_left "$CID"
}

@test "log: json log of an unknown id" {
	runtime --log "$LOG" --log-format json state "nosuch-$CID"
	[ "$status" -ne 0 ]
	assert_json_lines "$LOG"
	jq -e -s 'any(.[]; .level == "error" and (.msg | contains("does not exist")))' "$LOG"
}

@test "log: a successful lifecycle writes only well-formed json lines" {
	set_args sleep 1000
	runtime_ok --log "$LOG" --log-format json create -b "$BUNDLE" "$CID"
	runtime_ok --log "$LOG" --log-format json start "$CID"
	runtime_ok --log "$LOG" --log-format json --debug kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime_ok --log "$LOG" --log-format json delete "$CID"
	[ -e "$LOG" ] || skip "nothing was logged"
	assert_json_lines "$LOG"
}

@test "log: --debug adds debug lines" {
	set_args true
	runtime_ok --log "$LOG" --log-format json --debug run -b "$BUNDLE" "$CID"
	cat "$LOG"
	assert_json_lines "$LOG"
	jq -e -s 'any(.[]; .level == "debug")' "$LOG"
}

@test "log: --log-format text is logfmt with level and msg" {
	set_args no-such-program
	runtime --log "$LOG" --log-format text create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	cat "$LOG"
	grep -E '^time="[^"]+" level=error msg=".*executable file not found' "$LOG"
}

@test "log: an unknown --log-format is an error" {
	runtime --log "$LOG" --log-format yaml list
	[ "$status" -ne 0 ]
}

@test "log: --debug reaches init: its messages go to the --log file as JSON, not to the container's output" {
	skip_if_runc "runc logs init's messages through its own log pipe, with other wording"
	set_args sh -c 'echo container-output'
	runtime_ok --log "$LOG" --log-format json --debug run -b "$BUNDLE" "$CID"
	cat "$LOG"
	assert_json_lines "$LOG"
	# Logged inside init, before the program ran, at debug level.
	jq -e -s 'any(.[]; .level == "debug" and (.msg | startswith("init: setting up container '"$CID"'")))' "$LOG"
	# The three points runc's suite (check_debug) and log readers look
	# for, in runc's words.
	local m
	for m in "nsexec container setup" "child process in init()" "init: closing the pipe to signal completion"; do
		jq -e -s --arg m "$m" 'any(.[]; .level == "debug" and (.msg | contains($m)))' "$LOG" >/dev/null || fail "no debug message with '$m'"
	done
	# The container's own output has nothing of the runtime's.
	[ "$output" = container-output ]
}

@test "log: an exec'd process's set-up messages go to the --log file too" {
	skip_if_runc "runc logs init's messages through its own log pipe, with other wording"
	run_detached
	runtime_ok --log "$LOG" --log-format json --debug exec "$CID" echo exec-output
	cat "$LOG"
	assert_json_lines "$LOG"
	jq -e -s 'any(.[]; .level == "debug" and (.msg | startswith("exec: pid ")))' "$LOG"
	# The three points runc's suite (check_exec_debug) and log readers
	# look for, in runc's words.
	local m
	for m in "nsexec container setup" "child process in init()" "setns_init: about to exec"; do
		jq -e -s --arg m "$m" 'any(.[]; .level == "debug" and (.msg | contains($m)))' "$LOG" >/dev/null || fail "no debug message with '$m'"
	done
	[ "$output" = exec-output ]
}

@test "log: without --debug, init's debug messages are not sent at all" {
	set_args true
	runtime_ok --log "$LOG" --log-format json run -b "$BUNDLE" "$CID"
	[ ! -s "$LOG" ] || ! jq -e -s 'any(.[]; .level == "debug")' "$LOG"
}
