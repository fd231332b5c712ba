#!/usr/bin/env bats
# events: runc-style JSON of resource usage, and "oom" events.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "events --stats returns numbers" {
	requires_cgroup
	configure '{"memory": {"limit": 67108864}, "pids": {"limit": 20}}' \
		sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 1000'
	start_detached
	# Until the loop's CPU time shows (user + kernel come in ticks).
	retry 100 0.05 eval '__runtime events --stats "$CID" | jq -e ".data.cpu.usage.user + .data.cpu.usage.kernel > 0 and .data.memory.usage.usage > 0" >/dev/null'
	runtime_ok events --stats "$CID"
	[ "${#lines[@]}" -eq 1 ]
	jq -e --arg id "$CID" '.type == "stats" and .id == $id' <<<"$output"
	jq -e '.data.memory.usage.usage > 0 and .data.memory.usage.limit == 67108864' <<<"$output"
	jq -e '.data.cpu.usage.total > 0 and (.data.cpu.usage.user + .data.cpu.usage.kernel) > 0' <<<"$output"
	jq -e '.data.pids.current >= 1 and .data.pids.limit == 20' <<<"$output"
}

@test "events --stats: runc's keys, and pressure (PSI) where cgroup v2 measures it" {
	requires_cgroup
	configure '{"pids": {"limit": 20}}' sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 1000'
	start_detached
	runtime_ok events --stats "$CID"
	# runc 1.3's types.Stats: cpuset, intel_rdt ({} without resctrl) and
	# network_interfaces (null for an OCI container) are always there.
	jq -e '.data | has("cpu") and has("cpuset") and has("memory") and has("pids") and has("blkio") and has("hugetlb") and has("intel_rdt") and has("network_interfaces")' <<<"$output"
	jq -e '.data.intel_rdt == {} and .data.network_interfaces == null' <<<"$output"
	jq -e '.data.cpuset | has("cpu_exclusive") and has("sched_load_balance") and has("sched_relax_domain_level")' <<<"$output"
	if grep -qw cpuset /proc/self/cgroup 2>/dev/null && ! is_rootless; then
		# A v1 cpuset hierarchy: the container's CPUs are listed.
		jq -e '.data.cpuset.cpus | length > 0' <<<"$output"
	fi
	# runc's "events --stats with psi data": the pressure files of the
	# container's own cgroup, as the container sees them.
	__runtime exec "$CID" test -e /sys/fs/cgroup/cpu.pressure || return 0
	retry 100 0.05 eval '__runtime events --stats "$CID" | jq -e ".data.cpu.psi.some.total > 0" >/dev/null'
	runtime_ok events --stats "$CID"
	local kind key
	for kind in cpu memory blkio; do
		for key in avg10 avg60 avg300 total; do
			jq -e --arg k "$key" ".data.$kind.psi.some | has(\$k)" <<<"$output" || fail "no $kind.psi.some.$key"
		done
	done
}

@test "events streams stats every --interval until the container stops" {
	requires_cgroup
	run_detached
	runtime_bg events --interval 200ms "$CID"
	# Until a few events arrived (slow under emulation), then stop it.
	retry 100 0.1 eval '[ "$(grep -c "\"type\":\"stats\"" "$RUNTIME_BG_OUT")" -ge 3 ]'
	runtime_ok kill "$CID" KILL
	wait_bg
	[ "$status" -eq 0 ]
	jq -se --arg id "$CID" 'length >= 3 and all(.type == "stats" and .id == $id)' <<<"$output"
	testcontainer "$CID" stopped
}

@test "events reports an OOM kill" {
	requires_cgroup
	configure '{"memory": {"limit": 67108864, "swap": 67108864}}' sh -c 'sleep 1; tail /dev/zero'
	start_detached
	runtime_ok events --interval 10s "$CID"
	[[ "$output" == *'{"type":"oom","id":"'"$CID"'"}'* ]]
	testcontainer "$CID" stopped
}

@test "events: bad arguments" {
	runtime events --interval 0s "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"must be positive"* ]]
	runtime events --stats nosuchcontainer
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]
}

@test "events --stats of a container without a cgroup: empty statistics and a warning, as runc" {
	can_have_cgroup && skip "this runtime gives every container a cgroup here (root, or a delegated cgroup v2 subtree)"
	run_detached
	# runc's fs manager leaves out the hierarchies it could not join and
	# reports zeros; runc's events.bats ("events --stats", rootless with
	# cgroup dirs but no cgroupsPath) wants status 0 and a stats event.
	__runtime events --stats "$CID" >"$BATS_TEST_TMPDIR/ev.out" 2>"$BATS_TEST_TMPDIR/ev.err" ||
		fail "events --stats failed: $(cat "$BATS_TEST_TMPDIR/ev.err")"
	jq -e --arg id "$CID" '.type == "stats" and .id == $id and .data.cpu.usage.user == 0 and .data.memory.usage.limit == 0 and .data.pids == {}' "$BATS_TEST_TMPDIR/ev.out" ||
		fail "not an empty stats event: $(cat "$BATS_TEST_TMPDIR/ev.out")"
	grep -q "container $CID has no cgroup.*its statistics are empty" "$BATS_TEST_TMPDIR/ev.err" ||
		fail "no warning: $(cat "$BATS_TEST_TMPDIR/ev.err")"
	# Read together, the event comes first (runc's test reads lines[0]).
	runtime_ok events --stats "$CID"
	[[ ${lines[0]} == '{"type":"stats","id":"'"$CID"'",'* ]] || fail "the event is not the first line: $output"
	# The stream warns once, and goes on with empty events until the end.
	runtime_bg events --interval 100ms "$CID"
	retry 100 0.1 eval '[ "$(grep -c "\"type\":\"stats\"" "$RUNTIME_BG_OUT")" -ge 3 ]'
	runtime_ok kill "$CID" KILL
	wait_bg
	[ "$status" -eq 0 ]
	[ "$(grep -c 'has no cgroup' <<<"$output")" -eq 1 ] || fail "warned $(grep -c 'has no cgroup' <<<"$output") times: $output"
}
