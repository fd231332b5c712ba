#!/usr/bin/env bats
# `delete [--force] ID`.

load helpers

setup() {
	setup_test
}

teardown() {
	# The forking test's children, should it fail before its delete.
	[ -z "${mark:-}" ] || pkill -KILL -f "sleep $mark" 2>/dev/null || true
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

# exec_bg CMD...: exec -d CMD into $CID; prints its host pid.
exec_bg() {
	local pf="$BATS_TEST_TMPDIR/exec.$RANDOM.pid"
	runtime_ok exec -d --pid-file "$pf" "$CID" "$@" >&2
	cat "$pf"
}

# gone PID: PID is no longer a live process (a zombie counts as gone).
gone() {
	! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# live_matching PATTERN: live processes whose command line is PATTERN.
live_matching() {
	local p
	for p in $(pgrep -xf "$1"); do
		gone "$p" || echo "$p"
	done
}

# host_pidns: the container shares the host's pid namespace. Rootless, it
# cannot mount a proc of its own then: it gets the host's, bound.
host_pidns() {
	update_config '.linux.namespaces |= map(select(.type != "pid"))
		| .mounts |= map(if .destination == "/proc" then {destination: "/proc", type: "bind", source: "/proc", options: ["rbind", "nosuid", "nodev", "noexec"]} else . end)'
}

@test "delete --force: exec'd processes are killed, and gone when it returns" {
	run_detached
	e1=$(exec_bg sleep 1000)
	e2=$(exec_bg sleep 1000)
	runtime_ok delete --force "$CID"
	gone "$e1" || fail "exec'd process $e1 survived delete --force"
	gone "$e2" || fail "exec'd process $e2 survived delete --force"
	assert_nothing_left "$CID"
}

@test "delete --force: exec'd processes and their children are killed with the host's pid namespace" {
	! is_rootless || skip_if_runc "runc 1.1.5 does not find exec'd processes without a cgroup or a pid namespace"
	host_pidns
	run_detached
	# A unique command line: the processes of this test, and no others.
	mark=$((1000000 + RANDOM * 32 + $$ % 32))
	e1=$(exec_bg sleep "$mark")
	# One that keeps forking (a bounded number, at a bounded rate: no fork
	# bomb on a shared machine): none of its children may escape the kill.
	e2=$(exec_bg sh -c "i=0; while [ \$i -lt 400 ]; do sleep $mark & i=\$((i + 1)); sleep 0.02; done; wait")
	retry 100 0.05 eval '[ "$(live_matching "sleep $mark" | wc -l)" -ge 5 ]'
	runtime_ok delete --force "$CID"
	gone "$e1" || fail "exec'd process $e1 survived delete --force"
	gone "$e2" || fail "exec'd process $e2 survived delete --force"
	left=$(live_matching "sleep $mark")
	[ -z "$left" ] || fail "children of exec'd processes survived: $left"
	assert_nothing_left "$CID"
}

@test "delete: exec'd processes that outlived init go with a stopped container (host pid namespace)" {
	! is_rootless || skip_if_runc "runc 1.1.5 does not find exec'd processes without a cgroup or a pid namespace"
	host_pidns
	run_detached
	e1=$(exec_bg sleep 1000)
	kill -9 "$(ctr_pid)"
	wait_for_status "$CID" stopped
	# ps still finds what is left of the container.
	runtime_ok ps --format json "$CID"
	[[ "$(jq -c . <<<"$output")" == *"$e1"* ]] || is_runc || fail "ps does not list exec'd process $e1"
	runtime_ok delete "$CID"
	gone "$e1" || fail "exec'd process $e1 survived delete"
	assert_nothing_left "$CID"
}

@test "kill --all: reaches exec'd processes with the host's pid namespace" {
	! is_rootless || skip_if_runc "runc 1.1.5 does not find exec'd processes without a cgroup or a pid namespace"
	host_pidns
	run_detached
	e1=$(exec_bg sleep 1000)
	runtime_ok ps --format json "$CID"
	[[ "$(jq -c . <<<"$output")" == *"$e1"* ]] || is_runc || fail "ps does not list exec'd process $e1"
	runtime_ok kill --all "$CID" KILL
	wait_pid_gone "$e1"
	wait_for_status "$CID" stopped
}
