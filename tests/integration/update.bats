#!/usr/bin/env bats
# update: change the limits of a running container (flags, --resources FILE
# and "-" for stdin) and see the new values in its cgroup.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

# memory_max PID: the memory limit file of PID's cgroup.
memory_max() {
	cgroup_value "$1" memory.max memory memory.limit_in_bytes
}

@test "update: raise the memory and pids limits of a running container" {
	requires_cgroup
	configure '{"memory": {"limit": 67108864}, "pids": {"limit": 20}}' sleep 1000
	start_detached
	local pid
	pid=$(ctr_pid)
	[ "$(memory_max "$pid")" = 67108864 ]
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 20 ]

	runtime_ok update --memory 128m --pids-limit 50 "$CID"
	[ "$(memory_max "$pid")" = 134217728 ]
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 50 ]
	testcontainer "$CID" running

	# -1 lifts a limit; the other one stays.
	runtime_ok update --pids-limit -1 "$CID"
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = max ]
	[ "$(memory_max "$pid")" = 134217728 ]
	# What update set is what events reports.
	runtime_ok events --stats "$CID"
	[ "$(jq '.data.memory.usage.limit' <<<"$output")" = 134217728 ]
}

@test "update: a pids limit of 0 is taken as 1, at create and at update" {
	skip_if_runc "runc 1.1.5 takes a pids limit of 0 as unlimited (1.5 as 1)"
	requires_cgroup
	configure '{"pids": {"limit": 0}}' sleep 1000
	start_detached
	local pid
	pid=$(ctr_pid)
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 1 ]

	runtime_ok update --pids-limit -1 "$CID"
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = max ]
	runtime_ok update --pids-limit 0 "$CID"
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 1 ]
	testcontainer "$CID" running
}

@test "update: --resources FILE (podman) and - on stdin (containerd)" {
	requires_cgroup
	configure '{"cpu": {"quota": 10000, "period": 100000}}' sleep 1000
	start_detached
	local pid
	pid=$(ctr_pid)
	echo '{"cpu": {"quota": 50000, "period": 100000}}' >"$BATS_TEST_TMPDIR/res.json"
	chmod 0644 "$BATS_TEST_TMPDIR/res.json"
	runtime_ok update --resources "$BATS_TEST_TMPDIR/res.json" "$CID"
	if cgroup_v2; then
		[ "$(cgroup_value "$pid" cpu.max)" = "50000 100000" ]
	else
		[ "$(cgroup_value "$pid" - cpu cpu.cfs_quota_us)" = 50000 ]
	fi

	echo '{"pids": {"limit": 33}, "memory": {"limit": 100000000}}' >"$BATS_TEST_TMPDIR/stdin.json"
	RUNTIME_STDIN="$BATS_TEST_TMPDIR/stdin.json" runtime_ok update -r - "$CID"
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 33 ]
	# The kernel rounds the limit down to whole pages.
	[ "$(memory_max "$pid")" = 99999744 ]
	# The quota set before is untouched.
	if cgroup_v2; then
		[ "$(cgroup_value "$pid" cpu.max)" = "50000 100000" ]
	fi
}

@test "update: cpu shares, period and cpuset flags" {
	requires_cgroup
	run_detached
	local pid
	pid=$(ctr_pid)
	runtime_ok update --cpu-shares 512 --cpu-period 50000 --cpu-quota 25000 --cpuset-cpus 0 "$CID"
	if cgroup_v2; then
		[ "$(cgroup_value "$pid" cpu.max)" = "25000 50000" ]
		# shares 512 -> weight (the library's conversion)
		[ "$(cgroup_value "$pid" cpu.weight)" -lt 100 ]
		[ "$(cgroup_value "$pid" cpuset.cpus)" = 0 ]
	else
		[ "$(cgroup_value "$pid" - cpu cpu.shares)" = 512 ]
		[ "$(cgroup_value "$pid" - cpu cpu.cfs_period_us)" = 50000 ]
		[ "$(cgroup_value "$pid" - cpuset cpuset.cpus)" = 0 ]
	fi
}

@test "update: cpu.idle back and forth in a container with cpu shares (runc's fix-up)" {
	requires_cgroup
	configure '{"cpu": {"shares": 100}}' sleep 1000
	start_detached
	local pid file
	pid=$(ctr_pid)
	file=$(cgroup_path "$pid" cpu)/cpu.idle
	[[ -e $file ]] || skip "the kernel has no cpu.idle"
	[ "$(cat "$file")" = 0 ]
	# An idle cgroup refuses shares (weight on v2): the shares from the
	# config must not be written back before cpu.idle 0.
	local val
	for val in 1 0 1; do
		echo "{\"cpu\": {\"idle\": $val}}" >"$BATS_TEST_TMPDIR/r.json"
		runtime_ok update -r "$BATS_TEST_TMPDIR/r.json" "$CID"
		[ "$(cat "$file")" = "$val" ]
	done
	for val in 0 1; do
		runtime_ok update --cpu-idle "$val" "$CID"
		[ "$(cat "$file")" = "$val" ]
	done
	runtime update --cpu-idle 2 "$CID"
	[ "$status" -ne 0 ]
	[ "$(cat "$file")" = 1 ]
}

@test "update: bad requests are one-line errors" {
	run_detached
	runtime update "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"nothing to update"* ]]
	runtime update --memory lots "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'--memory: "lots" is not a size'* ]]
	runtime update --resources /nonexistent.json "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"/nonexistent.json"* ]]
	runtime update --resources - --memory 1g "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot be combined"* ]]
	runtime update --pids-limit 10 nosuchcontainer
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]

	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime update --pids-limit 10 "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not running"* ]]
}

@test "update: a container without a cgroup says why it cannot be updated" {
	requires rootless
	can_have_cgroup && skip "this host delegates a cgroup v2 subtree: containers have a cgroup"
	run_detached
	runtime update --pids-limit 10 "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"has no cgroup"*"delegated cgroup v2"* ]]
}

@test "update: runc's flag set and spellings, flags also after the id" {
	requires_cgroup
	configure '{"memory": {"limit": 134217728}}' sleep 1000
	start_detached
	local pid
	pid=$(ctr_pid)
	# runc's CLI library takes flags after the id too; podman and scripts
	# call it so.
	runtime_ok update "$CID" --memory 96m --memory-reservation 32m --cpu-share 512 --cpuset-mems 0 --pids-limit 30
	[ "$(memory_max "$pid")" = 100663296 ]
	[ "$(cgroup_value "$pid" memory.low memory memory.soft_limit_in_bytes)" = 33554432 ]
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 30 ]
	[ "$(cgroup_value "$pid" cpuset.mems cpuset cpuset.mems)" = 0 ]
	if cgroup_v2; then
		# runc's conversion of 512 shares.
		[ "$(cgroup_value "$pid" cpu.weight)" = 20 ]
	else
		[ "$(cgroup_value "$pid" - cpu cpu.shares)" = 512 ]
	fi
	# Obsolete in runc as here: accepted, ignored.
	runtime_ok update "$CID" --kernel-memory 1g --kernel-memory-tcp 1g
	[[ "$output" == *"kernel-memory"*"ignored"* ]] || is_runc
	runtime update "$CID" --l3-cache-schema "L3:0=f"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Intel RDT"* ]]
	runtime update "$CID" --mem-bw-schema "MB:0=50"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		# runc 1.1.5 passes it on to the kernel.
		runtime update "$CID" --blkio-weight 5
		[ "$status" -ne 0 ]
		[[ "$output" == *"10 to 1000"* ]]
	fi
	testcontainer "$CID" running
}
