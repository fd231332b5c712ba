#!/usr/bin/env bats
# pause and resume: the cgroup freezer, on v1 and v2.

load helpers

setup() {
	setup_test
	# A counter the host can read: the loop writes it into the rootfs.
	update_config '.root.readonly = false | .process.args = ["sh", "-c", $c]' "$BUNDLE" \
		--arg c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count; sleep 0.05; done'
}

teardown() {
	teardown_test
}

count() {
	cat "$BUNDLE/rootfs/tmp/count"
}

@test "pause stops progress and resume continues it" {
	requires_cgroup
	start_detached
	retry 50 0.1 test -s "$BUNDLE/rootfs/tmp/count"
	runtime_ok pause "$CID"
	testcontainer "$CID" paused
	runtime_ok list
	[[ "$output" == *"$CID"*paused* ]]
	local a b c
	a=$(count)
	sleep 0.5
	b=$(count)
	[ "$a" = "$b" ]

	runtime_ok resume "$CID"
	testcontainer "$CID" running
	# The counter moves again (polled: a loaded machine is slow to).
	retry 100 0.05 eval '[ "$(count)" != "$b" ]'
}

@test "pause and resume refuse the wrong states" {
	requires_cgroup
	start_detached
	runtime resume "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not paused"* ]]
	runtime_ok pause "$CID"
	runtime pause "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is paused"* ]]
	# delete without --force refuses a paused container.
	runtime delete "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is paused"*"--force"* ]]
	runtime_ok resume "$CID"
	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime pause "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not running"* ]]
}

@test "delete --force of a paused container kills it and removes its cgroup" {
	requires_cgroup
	start_detached
	local pid cg
	pid=$(ctr_pid)
	cg=$(cgroup_path "$pid" freezer)
	runtime_ok pause "$CID"
	runtime_ok delete --force "$CID"
	wait_pid_gone "$pid"
	[ ! -e "$cg" ]
	assert_nothing_left "$CID"
}

@test "kill of a paused container takes effect" {
	requires_cgroup
	start_detached
	runtime_ok pause "$CID"
	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime_ok delete "$CID"
}

@test "pause of a container without a cgroup says why" {
	requires rootless
	can_have_cgroup && skip "this host delegates a cgroup v2 subtree: containers have a cgroup"
	start_detached
	runtime pause "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"has no cgroup"*"cannot be paused"* ]]
}
