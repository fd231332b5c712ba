#!/usr/bin/env bats
# `delete [--force] ID`.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "delete: a running container without --force is refused and keeps running" {
	run_detached
	runtime delete "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *running* ]]
	[ "${#lines[@]}" -eq 1 ] || is_runc
	testcontainer "$CID" running
}

@test "delete --force: kills a running container and leaves nothing" {
	run_detached
	pid=$(container_pid "$CID")
	runtime delete --force "$CID"
	[ "$status" -eq 0 ]
	wait_pid_gone "$pid"
	# The state dir, the init and any mount of the rootfs are gone.
	assert_nothing_left "$CID"
	[ -z "$(host_mounts_under "$BUNDLE")" ]
	runtime state "$CID"
	[ "$status" -ne 0 ]
}

@test "delete: a stopped container is removed" {
	set_cmd true
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime_ok delete "$CID"
	assert_nothing_left "$CID"
}

@test "delete: the id can be reused after delete" {
	run_detached
	runtime_ok delete --force "$CID"
	run_detached
	testcontainer "$CID" running
}

@test "delete: an unknown container is an error; with --force it is not" {
	runtime delete "nosuch-$CID"
	[ "$status" -ne 0 ]
	# containerd's shim takes a delete that fails with "does not exist" as
	# done (the container is already gone).
	[[ "$output" == *"does not exist"* ]]
	# containerd and podman delete --force whatever may be left.
	runtime delete --force "nosuch-$CID"
	[ "$status" -eq 0 ]
}

@test "delete --force: a state dir left by an aborted create is removed" {
	mkdir "$ROOT/$CID"
	give_to_user "$ROOT/$CID"
	runtime delete --force "$CID"
	[ "$status" -eq 0 ]
	[ ! -e "$ROOT/$CID" ]
}

@test "delete --force: all the container's processes are gone" {
	set_cmd 'sleep 1000 & sleep 1000 & exec sleep 1000'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	pid=$(container_pid "$CID")
	retry 50 0.05 eval '[ "$(pgrep -P '"$pid"' | wc -l)" -ge 2 ]'
	children=$(pgrep -P "$pid")
	runtime_ok delete --force "$CID"
	for p in $pid $children; do
		wait_pid_gone "$p"
	done
	assert_nothing_left "$CID"
}
