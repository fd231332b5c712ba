#!/usr/bin/env bats
# Resource limits through cgroups: memory/OOM, pids, cpu quota, device rules,
# cgroupsPath forms, cleanup, and the rootless rules. On this repository's
# hybrid CI host the rootless runs have no cgroup; `make test-cgroup2` runs
# this file on a pure cgroup v2 kernel, as root and rootless in a delegated
# subtree.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
	cleanup_cgroup
}

@test "cgroups: a memory hog under 64 MiB is OOM-killed and reported" {
	requires_cgroup
	# swap equal to the limit: no swap to escape into where the host has some.
	configure '{"memory": {"limit": 67108864, "swap": 67108864}}' tail /dev/zero
	runtime run --keep -b "$BUNDLE" "$CID"
	[ "$status" -eq 137 ]
	[[ "$output" == *"OOM killer killed"*"memory limit 64 MiB"* ]]

	runtime_ok state "$CID"
	[ "$(jq -r '.status' <<<"$output")" = stopped ]
	[ "$(jq -r '.annotations["org.nanobox.oom-kills"]' <<<"$output")" -ge 1 ]

	runtime_ok events "$CID"
	[[ "$output" == *'{"type":"oom","id":"'"$CID"'"}'* ]]
	runtime_ok delete "$CID"
}

@test "cgroups: a fork bomb under pids.limit 20 is held" {
	requires_cgroup
	configure '{"pids": {"limit": 20}}' sh -c 'bomb() { bomb | bomb & }; bomb; sleep 1000'
	start_detached
	local cg
	cg=$(cgroup_path "$(ctr_pid)" pids)
	[ "$(cat "$cg/pids.max")" = 20 ]
	# Until a fork was refused for the limit (pids.events "max N").
	retry 100 0.05 eval '[ "$(awk '"'"'$1 == "max" {print $2}'"'"' "$cg/pids.events")" -gt 0 ]'
	runtime_ok events --stats "$CID"
	local current
	current=$(jq '.data.pids.current' <<<"$output")
	[ "$current" -le 20 ] && [ "$current" -ge 2 ]
	[ "$(jq '.data.pids.limit' <<<"$output")" = 20 ]
	# The runtime still controls it: everything dies, the cgroup goes.
	runtime_ok kill --all "$CID" KILL
	wait_for_status "$CID" stopped
	runtime_ok delete "$CID"
	[ ! -e "$cg" ]
}

@test "cgroups: pids limits of 0 (taken as 1) to 3 leave init to set the container up" {
	requires_cgroup
	# init (a Go program: several threads, each a task pids.max counts)
	# sets the container up before pids.max is written.
	local limit want id limits=(0 1 2 3)
	# runc 1.1.5 takes a pids limit of 0 as unlimited (1.5 as 1).
	is_runc && limits=(1 2 3)
	for limit in "${limits[@]}"; do
		want=$((limit == 0 ? 1 : limit))
		id=$CID-$limit
		configure '{"pids": {"limit": '"$limit"'}}' sleep 1000
		start_detached "$id"
		[ "$(cgroup_value "$(ctr_pid "$id")" pids.max pids pids.max)" = "$want" ] ||
			fail "limit $limit: pids.max $(cgroup_value "$(ctr_pid "$id")" pids.max pids pids.max), want $want"
		testcontainer "$id" running
		runtime_ok delete --force "$id"
	done
}

@test "cgroups: pids limit 1: a created container waits for start under it" {
	requires_cgroup
	configure '{"pids": {"limit": 1}}' sleep 1000
	runtime_ok create -b "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/$CID.pid" "$CID"
	local pid
	pid=$(ctr_pid)
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = 1 ]
	# init, waiting for start with the limit written, must not need a
	# thread it can no longer have.
	sleep 1
	testcontainer "$CID" created
	runtime_ok start "$CID"
	testcontainer "$CID" running
	[ "$(cgroup_value "$pid" pids.current pids pids.current)" = 1 ]
}

@test "cgroups: pids limit 2 holds for the container's program from its start" {
	requires_cgroup
	# The shell and one child: the second fork fails, and the shell (a
	# non-interactive ash) exits on it.
	configure '{"pids": {"limit": 2}}' sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 5 & done; wait; echo all-forked'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"can't fork"* || "$output" == *"Resource temporarily unavailable"* ]] || fail "output: $output"
	[[ "$output" != *all-forked* ]]
}

@test "cgroups: a cpu quota of 10% slows a busy loop" {
	requires_cgroup
	configure '{"cpu": {"quota": 10000, "period": 100000}}' sh -c 'while :; do :; done'
	start_detached
	local u0 u1 t0 t1 ratio
	u0=$(cpu_usage_ns "$CID")
	t0=$(date +%s%N)
	# A window of at least a second (a measurement, not a wait), and until
	# the loop has used some CPU: a loaded machine may not schedule it at
	# once.
	sleep 1
	retry 100 0.05 eval '[ "$(cpu_usage_ns "$CID")" -gt $((u0 + 1000000)) ]'
	u1=$(cpu_usage_ns "$CID")
	t1=$(date +%s%N)
	# CPU time over wall time, in percent: about 10, and far from the
	# 100 an unlimited loop gets.
	ratio=$(((u1 - u0) * 100 / (t1 - t0)))
	echo "busy loop used ${ratio}% of one CPU"
	[ "$ratio" -lt 50 ]
	[ "$ratio" -gt 0 ]
	if cgroup_v2; then
		[ "$(cgroup_value "$(ctr_pid)" cpu.max)" = "10000 100000" ]
	else
		[ "$(cgroup_value "$(ctr_pid)" - cpu cpu.cfs_quota_us)" = 10000 ]
	fi
}

@test "cgroups: podman's deny-all device rule keeps the default devices" {
	# Device rules are the v1 devices cgroup or the v2 eBPF filter: root only.
	requires root
	update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"}] | .linux.cgroupsPath = $p' \
		"$BUNDLE" --arg p "/libpod_parent/libpod-$CID"
	run_sh 'echo x > /dev/null && head -c 3 /dev/zero | wc -c && head -c 3 /dev/urandom | wc -c &&
		head -c 3 /dev/random | wc -c && echo x > /dev/full; exec 3<>/dev/ptmx && echo ptmx
		exec 4<>/dev/fuse && echo fuse-opened'
	[ "${lines[0]}" = 3 ] && [ "${lines[1]}" = 3 ] && [ "${lines[2]}" = 3 ]
	[[ "$output" == *"No space left on device"* ]] # /dev/full is usable
	[[ "$output" == *ptmx* ]]
	# A configured node the rules do not allow cannot be opened.
	[[ "$output" == *"/dev/fuse: Operation not permitted"* ]]
	[[ "$output" != *fuse-opened* ]]

	set_resources '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rw"}]}'
	run_sh 'exec 4<>/dev/fuse && echo fuse-opened'
	[ "$status" -eq 0 ]
	[ "$output" = fuse-opened ]
}

@test "cgroups: a device node made inside cannot be opened past the device rules" {
	requires root
	# With CAP_MKNOD the container may make any node (as in runc, m is
	# allowed for every device); opening one is the device rules' to
	# refuse. The node: /dev/kmsg's (c 1:11, which every kernel has; with
	# CAP_SYSLOG its driver lets root read it), beside a twin of
	# /dev/null, which the rules allow; made in /dev, the one writable
	# file system of the bundle and one without nodev.
	(exec 3<>/dev/kmsg) 2>/dev/null || skip "the host cannot open /dev/kmsg"
	update_config '.process.capabilities.bounding += ["CAP_MKNOD", "CAP_SYSLOG"]
		| .process.capabilities.effective += ["CAP_MKNOD", "CAP_SYSLOG"]
		| .process.capabilities.permitted += ["CAP_MKNOD", "CAP_SYSLOG"]'
	local probe='mknod /dev/nbx-kmsg c 1 11 && mknod /dev/nbx-null c 1 3 && echo made
		echo x >/dev/nbx-null && echo null-written
		(exec 3</dev/nbx-kmsg) && echo kmsg-opened-r
		(exec 3>/dev/nbx-kmsg) && echo kmsg-opened-w
		(exec 3<>/dev/nbx-kmsg) && echo kmsg-opened-rw
		true'
	run_sh "$probe"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *made* && "$output" == *null-written* ]] || fail "$output"
	[[ "$output" != *opened* ]] || fail "a device past the rules was opened: $output"

	# Allow by default, writing the device denied: opening it for
	# reading is allowed, for writing or for both is not, as the v1
	# devices cgroup decides (the v2 program must not let the read bit
	# carry the write through).
	set_resources '{"devices": [{"allow": true, "access": "rwm"}, {"allow": false, "type": "c", "major": 1, "minor": 11, "access": "w"}]}'
	run_sh "$probe"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *kmsg-opened-r$'\n'* ]] || fail "$output"
	[[ "$output" != *kmsg-opened-w* && "$output" != *kmsg-opened-rw* ]] || fail "the device was opened for writing: $output"
}

@test "cgroups: cgroupsPath absolute, relative and empty" {
	requires_cgroup
	local abs=/nanobox-test/$CID
	if is_rootless; then
		# Inside the subtree delegated to the test user.
		abs=${NANOBOX_TEST_CGROUP_PARENT#/sys/fs/cgroup}/$CID
	fi
	local path dir
	for path in "$abs" "nbx-rel/$CID" ""; do
		update_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "1000"]' "$BUNDLE" --arg p "$path"
		start_detached
		dir=$(cgroup_path "$(ctr_pid)" memory)
		echo "cgroupsPath '$path': $dir"
		case "$path" in
		/*) [[ "$dir" == /sys/fs/cgroup*"$path" ]] ;;
		?*) [[ "$dir" == /sys/fs/cgroup*/"$path" ]] ;;
		*) [[ "$dir" == /sys/fs/cgroup*/"$CID" ]] ;;
		esac
		runtime_ok delete --force "$CID"
		[ ! -e "$dir" ]
	done
	# Like runc, the runtime leaves the parents it made (on v1, one per
	# controller); tidy up.
	find /sys/fs/cgroup -maxdepth 6 -type d \( -name nbx-rel -o -name nanobox-test \) \
		-exec rmdir {} + 2>/dev/null || true
}

@test "cgroups: the systemd form slice:prefix:name without --systemd-cgroup is a relative cgroupfs path, as in runc" {
	requires root
	# containerd's CRI plugin (cgroupfs driver) turns a ".slice" pod parent
	# into this form; runc's fs manager joins it, as one name, to the
	# caller's own cgroup in each v1 hierarchy (on v2, to its parent).
	local name="k8s-$CID.slice:cri-containerd:$CID" pid line ctrl own want n=0
	update_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "1000"]' "$BUNDLE" --arg p "$name"
	start_detached
	pid=$(ctr_pid)
	while IFS= read -r line; do
		ctrl=${line#*:}
		ctrl=${ctrl%%:*}
		own=${line#*:*:}
		if cgroup_v2; then
			want=$(dirname "$own")/$name
		else
			want=${own%/}/$name
		fi
		want=${want//\/\//\/}
		grep -qxF "${line%%:*}:$ctrl:$want" "/proc/$pid/cgroup" ||
			fail "hierarchy '$ctrl': want $want, have: $(cat "/proc/$pid/cgroup")"
		n=$((n + 1))
	done </proc/self/cgroup
	[ "$n" -gt 0 ]
	[ "$(cgroup_value "$pid" pids.max pids pids.max)" = max ]

	runtime_ok delete --force "$CID"
	left=$(find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name "k8s-$CID.slice*")
	[ -z "$left" ] || fail "cgroups left: $left"

	# --systemd-cgroup still needs systemd.
	runtime --systemd-cgroup run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *systemd* ]]
	[ ! -e "$ROOT/$CID" ]
	[ -z "$(host_mounts_under "$BUNDLE")" ]
}

@test "cgroups: delete removes the cgroup after the container was SIGKILLed" {
	requires_cgroup
	configure '{"memory": {"limit": 67108864}}' sleep 1000
	start_detached
	local pid cg
	pid=$(ctr_pid)
	cg=$(cgroup_path "$pid" memory)
	[ -d "$cg" ]
	kill -9 "$pid"
	wait_for_status "$CID" stopped
	[ -d "$cg" ]
	runtime_ok delete "$CID"
	[ ! -e "$cg" ]
}

@test "cgroups: kill --all signals every process of the cgroup" {
	requires_cgroup
	# init ignores TERM; its two children (started before the trap, which
	# they would inherit) do not.
	set_cmd 'sleep 1000 & sleep 1000 & trap "" TERM; while :; do sleep 1; done'
	start_detached
	retry 50 0.1 eval '[ "$(__runtime ps --format json "$CID" | jq length)" -ge 4 ]'
	runtime_ok kill --all "$CID" TERM
	# Left: init and its current `sleep 1`.
	retry 50 0.1 eval '[ "$(__runtime ps --format json "$CID" | jq length)" -le 2 ]'
	testcontainer "$CID" running
	runtime_ok kill --all "$CID" KILL
	wait_for_status "$CID" stopped
}

@test "cgroups: kill --all without a pid namespace reaches processes init left behind" {
	requires root
	update_config 'del(.linux.namespaces[] | select(.type == "pid"))'
	set_cmd 'sleep 1000 & sleep 1000 & exec sleep 1000'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	retry 50 0.1 eval '[ "$(__runtime ps --format json "$CID" | jq length)" -eq 3 ]'
	local pids
	pids=$(__runtime ps --format json "$CID" | jq -r '.[]')
	runtime_ok kill --all "$CID" KILL
	wait_for_status "$CID" stopped
	local p
	for p in $pids; do
		wait_pid_gone "$p"
	done
	runtime_ok delete "$CID"
}

@test "cgroups: rootless without a delegated subtree: a limit is a clear error, no limit runs" {
	requires rootless
	configure '{"memory": {"limit": 67108864}, "pids": {"limit": 20}}' true
	run_without_delegation run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot set memory limit: container could not join or create cgroup: the resource limits in linux.resources (memory, pids) need a cgroup"* ]]
	[[ "$output" == *"run as root"*"delegated"* ]]
	assert_nothing_left "$CID"

	update_config 'del(.linux.resources) | .process.args = ["sh", "-c", "echo ran"]'
	run_without_delegation run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[ "$output" = ran ]
}

@test "cgroups: rootless, a cgroupsPath that cannot be made is an error even without limits, as in runc" {
	requires rootless
	# Outside any subtree delegated to the test user (in the VM too).
	update_config '.linux.cgroupsPath = $p | .process.args = ["true"]' "$BUNDLE" --arg p "/nbx-undelegated/$CID"
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"unable to apply cgroup configuration"*"permission denied"* ]]
	if ! is_runc; then
		[[ "$output" == *"leave linux.cgroupsPath out"* ]]
		[ "$(echo "$output" | wc -l)" -eq 1 ]
	fi
	assert_nothing_left "$CID"
	[ ! -e /sys/fs/cgroup/nbx-undelegated ] && [ ! -e /sys/fs/cgroup/memory/nbx-undelegated ]
}

@test "cgroups: with a cgroup namespace /sys/fs/cgroup shows the own cgroup, read-only (rootless: over the /sys bound from the host)" {
	cgroup_v2 || skip "cgroup v2 hosts (the VM: make test-cgroup2); v1 and hybrid ones bind the container's own directories"
	requires_cgroup
	# runc's "cgroupv2 mount inside container". Rootless, /sys is the
	# host's (rbind), so /sys/fs/cgroup already is the host's cgroup2 mount,
	# and mount(2) of the namespace's cgroup2 there fails with EBUSY (same
	# superblock): it used to fall back to a bind of the whole hierarchy.
	update_config 'if any(.linux.namespaces[]; .type == "cgroup") then . else .linux.namespaces += [{type: "cgroup"}] end'
	run_sh 'cat /proc/self/cgroup; find /sys/fs/cgroup -type d | wc -l; test -e /sys/fs/cgroup/cgroup.procs && echo procs; mkdir /sys/fs/cgroup/nbx 2>&1 || echo refused'
	[ "$status" -eq 0 ] || fail "exited $status: $output"
	[ "${lines[0]}" = "0::/" ] || fail "not in a cgroup namespace: $output"
	[ "${lines[1]}" = 1 ] || fail "the container sees other cgroups than its own: $output"
	[ "${lines[2]}" = procs ] || fail "no cgroup files: $output"
	[[ $output == *"Read-only file system"*refused* ]] || fail "/sys/fs/cgroup is writable: $output"
}

@test "cgroups: rootless with no cgroup and no pid namespace of its own: runc's warning" {
	requires rootless
	is_runc && skip "runc 1.1 predates this warning (runc 1.2 added it)"
	update_config '.linux.namespaces |= map(select(.type != "pid")) | (.mounts[] | select(.destination == "/proc")) |= {destination: "/proc", type: "bind", source: "/proc", options: ["rbind", "nosuid", "noexec", "nodev"]} | .process.args = ["true"]'
	run_without_delegation run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"no cgroup and no private pid namespace"*"strongly discouraged"* ]]

	# With a pid namespace of its own (the kernel ends its processes with
	# init), or with a cgroup, no warning.
	setup_bundle "$BATS_TEST_TMPDIR/own-pidns"
	set_args true
	run_without_delegation run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" != *"strongly discouraged"* ]]
}

@test "cgroups: rootless in cgroup v1 directories delegated to the user: exec, ps, pause and delete work" {
	# As runc's rootless CI sets it up (tests/rootless.sh enable_cgroup):
	# a parent cgroup in each v1 hierarchy whose group is the user's. The
	# runtime skips the devices cgroup (an unprivileged user cannot write
	# device rules), and may not write the hybrid cgroup2 mount: paths it
	# never made must not be kept, or exec cannot join them, ps lists
	# nothing, and delete of a paused container cannot thaw it.
	requires rootless
	[[ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]] || skip "test of cgroup v1 hierarchies"
	local parent="nbx-rl-$$" c d
	CLEANUP_CGROUP="$parent/ctr $parent"
	for c in cpu cpuacct cpuset memory devices freezer blkio pids; do
		d=/sys/fs/cgroup/$c/$parent
		[[ -d /sys/fs/cgroup/$c ]] || continue
		mkdir -p "$d"
		if [[ $c == cpuset ]]; then
			cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$d/cpuset.cpus"
			cat /sys/fs/cgroup/cpuset/cpuset.mems >"$d/cpuset.mems"
		fi
		chgrp -R "$(test_gid)" "$d"
		chmod g+rwx "$d"
		chmod g+rw "$d/cgroup.procs" "$d/tasks"
	done
	update_config '.linux.cgroupsPath = "/'"$parent"'/ctr"'
	run_detached
	local pid
	pid=$(cat "$BATS_TEST_TMPDIR/$CID.pid")
	grep -q ":pids:/$parent/ctr\$" "/proc/$pid/cgroup" || fail "init is not in the delegated cgroup: $(cat "/proc/$pid/cgroup")"
	runtime exec "$CID" sh -c 'echo exec-ran'
	[[ $status -eq 0 && "$output" == exec-ran ]] || fail "exec: $output"
	runtime_ok ps "$CID"
	[[ "$output" == *"$pid"* ]] || fail "ps lists no processes: $output"
	runtime_ok pause "$CID"
	runtime delete --force "$CID"
	[[ $status -eq 0 ]] || fail "delete --force of a paused container: $output"
	retry 100 0.05 test ! -e "/proc/$pid" || fail "init $pid survived delete --force: $(grep State "/proc/$pid/status")"
	[[ ! -d "/sys/fs/cgroup/pids/$parent/ctr" ]] || fail "the container's cgroup is left"
}

@test "cgroups: root in a user namespace, as rootless podman runs the runtime: state in \$XDG_RUNTIME_DIR, no cgroup needed" {
	# Rootless podman runs the runtime as uid 0 of its own user namespace,
	# with the user's XDG_RUNTIME_DIR and USER, on a config with no user
	# namespace and (cgroup v1) no cgroupsPath. runc then keeps its state
	# under $XDG_RUNTIME_DIR and treats cgroups as rootless; we made
	# /run/nanobox-runc's state there and failed to mkdir the v1 cgroup.
	requires rootless
	command -v unshare >/dev/null || skip "test requires unshare (util-linux)"
	local xdg="$BATS_TEST_TMPDIR/xdg"
	test_user_dir "$xdg"
	update_config 'del(.linux.uidMappings, .linux.gidMappings, .linux.cgroupsPath) | .linux.namespaces |= map(select(.type != "user"))'
	set_args sleep 30
	status=0
	output=$("${AS_USER[@]}" env XDG_RUNTIME_DIR="$xdg" USER="$TEST_USER" unshare --user --map-root-user sh -c '
		set -e
		"$1" run -d -b "$2" "$3" </dev/null >/dev/null
		ls -d "$XDG_RUNTIME_DIR/nanobox-runc/$3" "$XDG_RUNTIME_DIR"/*/"$3" 2>/dev/null | head -1
		"$1" exec "$3" sh -c "echo exec-ran as \$(id -u)"
		# Root here is no root on the host: the device cgroup is left
		# alone, so the user namespace must be what keeps a device node
		# (/dev/mem) from being made and read.
		if "$1" exec "$3" sh -c "mknod /tmp/mem c 1 1 && head -c1 /tmp/mem >/dev/null" 2>/dev/null; then
			echo "made and read /dev/mem"
		fi
		"$1" state "$3" | grep -q "\"status\": \"running\""
		"$1" delete -f "$3"
		echo deleted' _ "$RUNTIME" "$BUNDLE" "$CID" 2>&1) || status=$?
	echo "$output"
	[ "$status" -eq 0 ] || fail "the runtime failed in the user namespace"
	[[ "$output" == "$xdg/"*"/$CID"* ]] || fail "state not under \$XDG_RUNTIME_DIR"
	[[ "$output" == *"exec-ran as 0"* && "$output" == *deleted ]]
	[[ "$output" != *"made and read /dev/mem"* ]] || fail "a device node was made and read"
	[[ ! -e "/run/nanobox-runc/$CID" ]]
	# Without XDG_RUNTIME_DIR root's state root is the default, which is
	# not this root's: the error says what to set.
	status=0
	output=$("${AS_USER[@]}" env -u XDG_RUNTIME_DIR USER="$TEST_USER" unshare --user --map-root-user \
		"$RUNTIME" list 2>&1) || status=$?
	echo "$output"
	if [[ -e /run/nanobox-runc ]] && ! is_runc; then
		[ "$status" -ne 0 ]
		[[ "$output" == *"uid 0 of a user namespace: set XDG_RUNTIME_DIR"* ]]
	fi
}

@test "cgroups: root in a user namespace that maps every id (systemd's PrivateUsers=full) is not host root" {
	# Its uid_map, "0 0 4294967295", is the initial namespace's. Taken for
	# host root (moby/sys/userns before v0.2, runc before 1.5.2), the
	# runtime wrote the device cgroup, which needs CAP_SYS_ADMIN in the
	# initial namespace, and failed: "devices.deny: operation not
	# permitted", or bpf_prog_query on cgroup v2.
	requires root
	command -v unshare >/dev/null || skip "test requires unshare (util-linux)"
	local gate="$BATS_TEST_TMPDIR/gate" out="$BATS_TEST_TMPDIR/full.out" pid m
	mkfifo "$gate"
	set_args sh -c 'echo ran as $(id -u)'
	unshare --user sh -c 'read -r _ <"$1"; shift; exec "$@"' _ "$gate" \
		"$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID" </dev/null >"$out" 2>&1 &
	pid=$!
	# The maps can be written once unshare(1) has made the namespace; on
	# failure the waiting shell is killed, not left on its gate.
	if ! retry 200 0.02 sh -c '[ "$(readlink "/proc/$1/ns/user")" != "$(readlink /proc/self/ns/user)" ]' _ "$pid"; then
		kill "$pid"
		fail "unshare made no user namespace"
	fi
	for m in uid_map gid_map; do
		echo "0 0 4294967295" >"/proc/$pid/$m" || { kill "$pid"; fail "cannot write $m"; }
	done
	echo go >"$gate"
	status=0
	wait "$pid" || status=$?
	cat "$out"
	[ "$status" -eq 0 ] || fail "run as root of a full-identity user namespace failed"
	grep -qx "ran as 0" "$out"
	[[ ! -e "$ROOT/$CID" ]] || fail "state left behind"
	[[ -z "$(find /sys/fs/cgroup -maxdepth 3 -name "$CID" 2>/dev/null)" ]] || fail "cgroup left behind"
}

# run_outside_delegation ARGS...: `runtime ARGS` from the root cgroup, where
# the unprivileged user may not create cgroups.
run_outside_delegation() {
	RUNTIME_CALLS=$((RUNTIME_CALLS + 1))
	status=0
	output=$(
		echo "$BASHPID" >/sys/fs/cgroup/cgroup.procs
		timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@" </dev/null 2>&1
	) || status=$?
	echo "\$ (root cgroup) $(basename "$RUNTIME") $* (status $status)"
	echo "$output"
}

# run_without_delegation ARGS...: the runtime where no delegated subtree
# gives it a cgroup: as it is on a host without one, from the root cgroup
# in the VM (run_outside_delegation).
run_without_delegation() {
	if can_have_cgroup; then
		run_outside_delegation "$@"
	else
		runtime "$@"
	fi
}

@test "cgroups: a limit the host cannot enforce fails create and leaves no cgroup" {
	requires_cgroup
	if cgroup_v2; then
		set_resources '{"unified": {"nosuch.max": "1"}}'
	elif ! mountpoint -q /sys/fs/cgroup/hugetlb && [[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]]; then
		# The hybrid layout: hugetlb only on the cgroup2 mount. (Asked of
		# the mount, not the directory: conmon makes
		# /sys/fs/cgroup/hugetlb/libpod_parent on the tmpfs here when
		# podman runs, a plain directory that is no hierarchy.)
		set_resources '{"hugepageLimits": [{"pageSize": "2MB", "limit": 4194304}]}'
	else
		skip "no controller missing on this host"
	fi
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"need the cgroup"*"controller(s)"* ]]
	assert_nothing_left "$CID"
	[ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$CID")" ]
}

@test "cgroups: a limit the kernel refuses leaves no cgroup, in any hierarchy" {
	requires_cgroup
	# cpuset comes first among the v1 hierarchies: the cgroup failed
	# there before the devices one was made, which the cgroup library's
	# Exists looks at.
	set_resources '{"cpu": {"cpus": "999"}}'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *cpuset* ]]
	assert_nothing_left "$CID"
	[ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$CID")" ]
}

@test "cgroups: a memory limit too small for init is an error that says so, and leaves nothing" {
	requires_cgroup
	set_resources '{"memory": {"limit": 1048576}}'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	# (On cgroup v2 the kernel may refuse the stage's clone into the
	# cgroup first: an error about memory too.)
	[[ "$output" == *"OOM killer"*"memory limit is too small"* ]] || { cgroup_v2 && [[ "$output" == *memory* ]]; }
	assert_nothing_left "$CID"
	[ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$CID")" ]
}

# frozen_cgroup NAME: a frozen cgroup /NAME (on v1, in the freezer
# hierarchy), thawed and removed by the test's teardown.
frozen_cgroup() {
	local name=$1 dir
	if cgroup_v2; then
		dir=/sys/fs/cgroup/$name
		mkdir "$dir"
		echo 1 >"$dir/cgroup.freeze"
	else
		dir=/sys/fs/cgroup/freezer/$name
		mkdir "$dir"
		echo FROZEN >"$dir/freezer.state"
	fi
	CLEANUP_CGROUP=$name
}

# cleanup_cgroup: thaw and remove the cgroup /$CLEANUP_CGROUP in every
# hierarchy (the runtime may have made it in each).
cleanup_cgroup() {
	[[ -n "${CLEANUP_CGROUP:-}" ]] || return 0
	local d c
	# Several, space-separated: children first.
	for c in $CLEANUP_CGROUP; do
		for d in /sys/fs/cgroup/$c /sys/fs/cgroup/*/$c; do
			[[ -d "$d" ]] || continue
			[[ -f "$d/freezer.state" ]] && echo THAWED >"$d/freezer.state"
			[[ -f "$d/cgroup.freeze" ]] && echo 0 >"$d/cgroup.freeze"
			[[ -f "$d/cgroup.procs" ]] && for p in $(cat "$d/cgroup.procs"); do kill -9 "$p"; done
			# Killed tasks leave the cgroup once the kernel has reaped them.
			retry 100 0.05 rmdir "$d" 2>/dev/null || true
		done
	done
	CLEANUP_CGROUP=
	return 0
}

@test "cgroups: a pre-frozen cgroup is refused, and nothing is left" {
	requires root
	local name="nbx-frozen-$CID"
	frozen_cgroup "$name"
	update_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "1000"]' "$BUNDLE" --arg p "/$name"
	runtime run -d -b "$BUNDLE" "$CID"
	cleanup_cgroup
	[ "$status" -ne 124 ] || fail "run -d hung on a frozen cgroup"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		[[ "$output" == *"container's cgroup unexpectedly frozen"*"cannot hold a container: it is frozen"* ]]
	fi
	assert_nothing_left "$CID"
}

@test "cgroups: a cgroup below a frozen one is refused too" {
	requires root
	skip_if_runc "runc 1.1.5 checks only the container's own cgroup"
	local name="nbx-frozen-$CID"
	frozen_cgroup "$name"
	update_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "1000"]' "$BUNDLE" --arg p "/$name/child"
	runtime run -d -b "$BUNDLE" "$CID"
	[ "$status" -ne 124 ] || { cleanup_cgroup; fail "run -d hung below a frozen cgroup"; }
	[ "$status" -ne 0 ]
	[[ "$output" == *"/$name is frozen, and so would it be"* ]]
	local d
	for d in /sys/fs/cgroup/$name/child /sys/fs/cgroup/*/$name/child; do
		[[ -d "$d" ]] && rmdir "$d"
	done
	cleanup_cgroup
	assert_nothing_left "$CID"
}

@test "cgroups: a cgroup that already holds a process is refused, and nothing is left" {
	requires root
	skip_if_runc "runc 1.1.5 only warns; runc 1.2 and later refuse, as we do"
	local name="nbx-busy-$CID" dir
	if cgroup_v2; then dir=/sys/fs/cgroup/$name; else dir=/sys/fs/cgroup/pids/$name; fi
	mkdir "$dir"
	CLEANUP_CGROUP=$name
	sleep 1000 &
	local squatter=$!
	echo "$squatter" >"$dir/cgroup.procs"
	update_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "1000"]' "$BUNDLE" --arg p "/$name"
	runtime run -d -b "$BUNDLE" "$CID"
	local st=$status out=$output
	# The squatter is untouched by the refused container.
	local alive=0
	kill -0 "$squatter" 2>/dev/null && alive=1
	kill -9 "$squatter" 2>/dev/null || true
	wait "$squatter" 2>/dev/null || true
	cleanup_cgroup
	[ "$st" -ne 0 ]
	[[ "$out" == *"container's cgroup is not empty: 1 process(es) found ($squatter)"* ]]
	[ "$alive" -eq 1 ]
	assert_nothing_left "$CID"
}

@test "cgroups: device access strings as runc takes them (any order, repeats)" {
	requires root
	local access
	update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]'
	for access in wr rw mrw rwmr wrr; do
		set_resources '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "'"$access"'"}]}'
		run_sh 'exec 4<>/dev/fuse && echo fuse-opened'
		[ "$output" = fuse-opened ] || fail "access '$access': $output"
	done
	# Read only: read-write is refused.
	set_resources '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "r"}]}'
	run_sh '(exec 4<>/dev/fuse) && echo fuse-opened; (exec 5</dev/fuse) && echo read-opened'
	[[ "$output" != *fuse-opened* ]]
	[[ "$output" == *read-opened* ]]
	# In a deny rule, other letters next to valid ones are dropped, as
	# runc does (its own suite denies "rwa"): that denies what r and w say.
	set_resources '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rwm"}, {"allow": false, "type": "c", "major": 10, "minor": 229, "access": "rwa"}]}'
	run_sh '(exec 4<>/dev/fuse) && echo fuse-opened; (exec 5</dev/fuse) && echo read-opened; echo ran'
	[[ "$output" != *opened* && "$output" == *ran* ]] || fail "deny rwa: $output"
}

@test "cgroups: device access strings runc refuses are refused" {
	requires root
	local access
	for access in x; do
		set_resources '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "'"$access"'"}]}'
		set_args true
		runtime run -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ] || fail "access '$access' was accepted"
		assert_nothing_left "$CID"
	done
	skip_if_runc "runc 1.1.5 drops an unknown letter next to valid ones (rwx is rw)"
	for access in rwx "r w"; do
		set_resources '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "'"$access"'"}]}'
		runtime run -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ] || fail "access '$access' was accepted"
		[[ "$output" == *"is not a combination of r, w and m"* ]]
		assert_nothing_left "$CID"
	done
}
