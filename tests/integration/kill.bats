#!/usr/bin/env bats
# `kill [--all] ID [SIGNAL]`: signal names with and without SIG, numbers.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

# run_trapper: a detached container whose init reports the signals it gets.
run_trapper() {
	set_cmd 'for s in TERM USR1 USR2 HUP; do trap "echo got $s" $s; done
		echo ready; while :; do sleep 0.05; done'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	OUT=$RUNTIME_OUTFILE
	retry 100 0.05 grep -q ready "$OUT"
}

@test "kill: default signal is SIGTERM" {
	run_trapper
	runtime_ok kill "$CID"
	retry 100 0.05 grep -q "got TERM" "$OUT"
}

@test "kill: signal names TERM, SIGUSR1, sigusr2 and numbers" {
	run_trapper
	runtime_ok kill "$CID" TERM
	retry 100 0.05 grep -q "got TERM" "$OUT"
	runtime_ok kill "$CID" SIGUSR1
	retry 100 0.05 grep -q "got USR1" "$OUT"
	runtime_ok kill "$CID" 1
	retry 100 0.05 grep -q "got HUP" "$OUT"
	runtime_ok kill "$CID" USR2
	retry 100 0.05 grep -q "got USR2" "$OUT"
	runtime_ok kill "$CID" SIGKILL
	wait_for_status "$CID" stopped
}

@test "kill: KILL and 9 stop the container" {
	run_detached
	runtime_ok kill "$CID" 9
	wait_for_status "$CID" stopped
}

@test "kill: a created (not started) container can be killed" {
	create_sleeping
	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
}

@test "kill --all: every process of the container gets the signal" {
	set_cmd 'sh -c "trap \"echo child got USR1\" USR1; while :; do sleep 0.05; done" &
		trap "echo init got USR1" USR1; echo ready; while :; do sleep 0.05; done'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	out=$RUNTIME_OUTFILE
	retry 100 0.05 grep -q ready "$out"
	runtime kill --all "$CID" USR1
	if [[ $status -ne 0 ]] && is_runc && is_rootless; then
		skip "runc 1.1.5: kill --all needs a cgroup it cannot make rootless on cgroup v1"
	fi
	[ "$status" -eq 0 ]
	retry 100 0.05 grep -q "init got USR1" "$out"
	retry 100 0.05 grep -q "child got USR1" "$out"
	runtime_ok kill --all "$CID" KILL
	wait_for_status "$CID" stopped
}

@test "kill: a stopped container is an error" {
	set_cmd true
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime kill "$CID" KILL
	[ "$status" -ne 0 ]
	[[ "$output" == *"not running"* || "$output" == *stopped* ]]
}

@test "kill: an unknown signal is an error and the container keeps running" {
	run_detached
	runtime kill "$CID" SIGNOPE
	[ "$status" -ne 0 ]
	runtime kill "$CID" 99999
	[ "$status" -ne 0 ]
	testcontainer "$CID" running
}

@test "kill: an unknown container is an error" {
	runtime kill "nosuch-$CID" KILL
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* || "$output" == *"not exist"* ]]
}
