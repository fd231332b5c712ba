#!/usr/bin/env bats
# ps: the container's processes, as the host's ps table or a JSON pid list.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "ps lists the processes of a container" {
	set_cmd 'sleep 1000 & sleep 1001 & wait'
	start_detached
	local pid
	pid=$(ctr_pid)
	retry 50 0.1 eval '[ "$(__runtime ps --format json "$CID" | jq length)" -eq 3 ]'

	runtime_ok ps --format json "$CID"
	[ "$(jq length <<<"$output")" -eq 3 ]
	jq -e --argjson p "$pid" 'index($p) != null' <<<"$output"

	runtime_ok ps "$CID"
	[[ "${lines[0]}" == *PID*CMD* ]]
	[ "${#lines[@]}" -eq 4 ]
	[[ "$output" == *"sleep 1000"* && "$output" == *"sleep 1001"* ]]
	# Nothing of the host's in it.
	[[ "$output" != *"$RUNTIME"* ]]

	# ps options after the id go to ps(1).
	runtime_ok ps "$CID" -o pid,comm
	[[ "${lines[0]}" == *PID*COMMAND* ]]
	[[ "$output" == *"$pid sh"* ]]
}

@test "ps of a created container lists init" {
	create_sleeping
	runtime_ok ps --format json "$CID"
	[ "$output" = "[$(ctr_pid)]" ]
}

@test "ps: bad arguments" {
	runtime ps --format yaml "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"unknown --format"* ]]
	runtime ps nosuchcontainer
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]
	runtime ps
	[ "$status" -ne 0 ]
}
