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

@test "kill: an empty signal argument is SIGTERM, as in runc" {
	run_trapper
	runtime_ok kill "$CID" ""
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

@test "kill: KILL and 9 stop the container; 0 only checks it runs" {
	run_detached
	runtime_ok kill "$CID" 0
	testcontainer "$CID" running
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

@test "kill: a stopped container is an error that says \"container not running\"" {
	set_cmd true
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime kill "$CID" KILL
	[ "$status" -ne 0 ]
	# containerd's shim recognises an exited process only by this text (or
	# "no such process"); anything else fails its kill.
	[[ "$output" == *"container not running"* ]]
	runtime kill "$CID" 0
	[ "$status" -ne 0 ]
	[[ "$output" == *"container not running"* ]]

	# The shim's --log JSON carries the same text.
	runtime --log "$BATS_TEST_TMPDIR/log.json" --log-format json kill "$CID" KILL
	[ "$status" -ne 0 ]
	jq -e 'select(.level == "error") | .msg | contains("container not running")' "$BATS_TEST_TMPDIR/log.json"
}

@test "kill --all: a stopped container exits 0, as runc's (containerd's shim reaps with it)" {
	set_cmd true
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime_ok kill --all "$CID" KILL
	runtime_ok kill --all "$CID" TERM
	runtime_ok kill -a "$CID" 0
	testcontainer "$CID" stopped
	runtime_ok delete "$CID"
	[ ! -e "$ROOT/$CID" ]
}

@test "kill --all: a stopped container's leftover processes in its cgroup are killed" {
	requires root
	# Without a pid namespace of its own, init's children outlive it in
	# the container's cgroup (as a pod's containers in a shared pid
	# namespace do); the shim's `kill --all ID 9` after init exits is what
	# reaps them.
	update_config '.linux.namespaces |= map(select(.type != "pid")) | .root.readonly = false
		| .process.args = ["sh", "-c", "sleep 1000 & echo $! >/tmp/child; exit 0"]'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	retry 100 0.05 test -s "$BUNDLE/rootfs/tmp/child"
	child=$(cat "$BUNDLE/rootfs/tmp/child")
	kill -0 "$child"
	grep -qx sleep "/proc/$child/comm"

	runtime_ok kill --all "$CID" KILL
	wait_pid_gone "$child"
	runtime_ok delete "$CID"
	[ ! -e "$ROOT/$CID" ]
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
	# containerd's shim maps this text to "no such container" (not found).
	[[ "$output" == *"does not exist"* ]]
}

@test "kill: KILL without --all kills every process of a container without its own pid namespace (runc 1.2+)" {
	requires root
	skip_if_runc "runc 1.1.5 signals init only"
	# Init's child and an exec'd process would outlive init otherwise: only a
	# pid namespace's init takes the namespace's processes with it.
	update_config '.linux.namespaces |= map(select(.type != "pid")) | .root.readonly = false
		| .process.args = ["sh", "-c", "sleep 1000 & echo $! >/tmp/child; exec sleep 1000"]'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	retry 100 0.05 test -s "$BUNDLE/rootfs/tmp/child"
	child=$(cat "$BUNDLE/rootfs/tmp/child")
	runtime_ok exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CID" sleep 1000
	execd=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	grep -qx sleep "/proc/$child/comm"
	grep -qx sleep "/proc/$execd/comm"

	runtime_ok kill "$CID" KILL
	wait_pid_gone "$child"
	wait_pid_gone "$execd"
	wait_for_status "$CID" stopped
	runtime_ok delete "$CID"
	[ ! -e "$ROOT/$CID" ]
}
