#!/usr/bin/env bats
# exec: a new process in a running container's namespaces and cgroup, every
# flag of the command, exit codes and signals, --detach with the caller's
# subreaper (as conmon and containerd's shim run it), terminals, --process
# files, descriptors, and paused, stopped and created containers.

load helpers
load gohelpers

setup() {
	setup_test
	update_config '.root.readonly = false'
}

teardown() {
	teardown_test
}

# cpus_of LIST: the first and last CPU of a kernel CPU list ("0-3,7").
first_cpu() { sed 's/[-,].*//' <<<"$1"; }
last_cpu() { sed 's/.*[-,]//' <<<"$1"; }

# cpus_mask LIST: a CPU list ("0-2,5") as a hex mask ("0x27").
cpus_mask() {
	local part lo hi mask=0 c
	for part in ${1//,/ }; do
		lo=${part%-*} hi=${part#*-}
		for ((c = lo; c <= hi; c++)); do
			mask=$((mask | 1 << c))
		done
	done
	printf '%#x' "$mask"
}

# host_cpus: the CPUs this test (and so the runtime) may run on.
host_cpus() {
	awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status
}

# runtime_with_fds ARGS...: the runtime with fds 3 and 4 open on two files
# and fds 7 and 20 on host directories, the way a caller might leak them.
runtime_with_fds() {
	local out="$BATS_TEST_TMPDIR/fds.out"
	echo one >"$BATS_TEST_TMPDIR/f1"
	echo two >"$BATS_TEST_TMPDIR/f2"
	chmod 0644 "$BATS_TEST_TMPDIR/f1" "$BATS_TEST_TMPDIR/f2"
	status=0
	(
		exec 3<"$BATS_TEST_TMPDIR/f1" 4<"$BATS_TEST_TMPDIR/f2" 7</etc 20</
		exec timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@"
	) </dev/null >"$out" 2>&1 || status=$?
	output=$(cat "$out")
	echo "runtime $* (status $status):"
	echo "$output"
}

# fd_list: the fds the shell listed after its "fds:" line (see fds.bats).
fd_list() {
	sed -n '/^fds:$/,$p' <<<"$output" | grep -E '^[0-9]+$' | sort -n | tr '\n' ' '
}

# process_json FILE JQ-EXPR [JQ-OPTION...]: FILE = the container's own
# process object, changed by JQ-EXPR (what podman and containerd send).
process_json() {
	local file=$1 expr=$2
	shift 2
	jq "$@" ".process | $expr" "$BUNDLE/config.json" >"$file"
	chmod 0644 "$file"
}

@test "exec: runs a command and exits with its status" {
	run_detached
	runtime exec "$CID" echo hello
	[ "$status" -eq 0 ]
	[ "$output" = hello ]

	runtime exec "$CID" sh -c 'exit 42'
	[ "$status" -eq 42 ]

	# Killed by a signal: 128 + the signal, like a shell.
	runtime exec "$CID" sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]

	# A failure of exec itself exits 255, as runc's does, so that it is
	# never mistaken for the process's own status.
	runtime exec "$CID" /nonexistent
	[ "$status" -eq 255 ]
	[[ "$output" == *"exec failed"*"/nonexistent"* ]]
	runtime exec --pid-file /nonexistent/dir/pid "$CID" true
	[ "$status" -eq 255 ]
	runtime exec "no-such-$CID" true
	[ "$status" -eq 255 ]

	# The container is unaffected.
	testcontainer "$CID" running
}

@test "exec: stdin, stdout and stderr pass through" {
	run_detached
	printf 'line one\nline two\n' >"$BATS_TEST_TMPDIR/in"
	chmod 0644 "$BATS_TEST_TMPDIR/in"
	RUNTIME_STDIN="$BATS_TEST_TMPDIR/in" runtime exec "$CID" sh -c 'cat; echo to-stderr >&2'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'line one\nline two\nto-stderr')" ]
}

@test "exec: the process is in every namespace and the cgroup of the container" {
	update_config '.linux.namespaces += [{"type": "cgroup"}]'
	if ! is_rootless; then
		# A user namespace rootful too, so all seven kinds are covered.
		update_config '.linux.namespaces += [{"type": "user"}]
			| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
			| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
		chown -R 100000:100000 "$BUNDLE/rootfs"
		open_tmp_path
	fi
	run_detached
	local init pid ns
	init=$(container_pid "$CID")
	runtime_ok exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CID" sleep 1000
	pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	[ "$pid" -gt 0 ]
	for ns in pid mnt net uts ipc user cgroup; do
		echo "$ns: init $(proc_ns "$init" $ns), exec $(proc_ns "$pid" $ns), host $(proc_ns $$ $ns)"
		[ "$(proc_ns "$pid" $ns)" = "$(proc_ns "$init" $ns)" ] || fail "exec'd process is not in the container's $ns namespace"
	done
	# The ones the config lists are the container's own, not the host's.
	for ns in pid mnt uts ipc user cgroup; do
		[ "$(proc_ns "$pid" $ns)" != "$(proc_ns $$ $ns)" ] || fail "$ns namespace is the host's"
	done
	[ "$(cat "/proc/$pid/cgroup")" = "$(cat "/proc/$init/cgroup")" ]

	# Seen from inside: a small pid in the container's pid namespace, with
	# init as pid 1.
	runtime exec "$CID" sh -c 'echo $$; tr "\0" " " </proc/1/cmdline'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -lt 100 ]
	[ "${lines[1]}" = "sleep 1000 " ]
}

@test "exec: --env, --cwd, --user and --additional-gids" {
	use_subid_mappings
	run_detached
	runtime exec --env FOO=bar --env TERM=dumb --cwd /tmp --user 1000:1000 --additional-gids 29 \
		"$CID" sh -c 'echo "$FOO $TERM"; pwd; id -u; id -g; id -G'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'bar dumb\n/tmp\n1000\n1000\n1000 29')" ]

	# A variable set again replaces the container's: the program gets it
	# once (getenv(3) returns the first of duplicates), as with runc.
	runtime exec -e TERM=dumb -e A=1 -e A=2 "$CID" env
	[ "$status" -eq 0 ]
	[ "$(grep -c '^TERM=' <<<"$output")" -eq 1 ]
	grep -qx 'TERM=dumb' <<<"$output"
	[ "$(grep '^A=' <<<"$output")" = A=2 ]

	runtime exec --cwd relative "$CID" true
	[ "$status" -ne 0 ]
	runtime exec --cwd /nonexistent "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"/nonexistent"* ]]
	runtime exec --user nobody "$CID" true
	[ "$status" -ne 0 ]
}

@test "exec: --user UID keeps the container's gid and groups, --additional-gids adds to them (runc)" {
	use_subid_mappings
	update_config '.process.user.gid = 100 | .process.user.additionalGids = [29]'
	run_detached
	runtime exec "$CID" id -G
	[ "$status" -eq 0 ]
	[ "$output" = "100 29" ]
	# runc parses --user UID[:GID] over the container's process: without a
	# GID the container's gid stays, and the additional gids always do.
	runtime exec --user 1000 "$CID" sh -c 'echo $(id -u) $(id -g) $(id -G)'
	[ "$output" = "1000 100 100 29" ]
	runtime exec --user 1000:1000 "$CID" id -G
	[ "$output" = "1000 29" ]
	runtime exec --additional-gids 5 "$CID" id -G
	[ "$output" = "100 5 29" ]
}

@test "exec: supplementary groups are additionalGids only, never the rootfs's /etc/group (runc)" {
	use_subid_mappings
	# The busybox rootfs lists user (1000) in group extra (1001); runc
	# names the user uid:gid, which takes no groups from /etc/group.
	grep -qx 'extra:x:1001:user' "$BUNDLE/rootfs/etc/group"
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args sh -c 'id -G; sleep 1000'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	retry 50 0.1 grep -qx 1000 "$RUNTIME_OUTFILE"
	runtime exec "$CID" id -G
	[ "$output" = 1000 ]
	runtime exec --user 1000:1000 "$CID" id -G
	[ "$output" = 1000 ]
	runtime exec --user 0:0 "$CID" id -G
	[ "$output" = 0 ]
}

@test "exec: --cap adds a capability, --no-new-privs sets no_new_privs" {
	update_config '.process.noNewPrivileges = false'
	run_detached
	local eff
	runtime exec "$CID" sh -c 'grep -E "^(CapEff|NoNewPrivs):" /proc/self/status'
	[ "$status" -eq 0 ]
	eff=$(awk '/^CapEff/ {print $2}' <<<"$output")
	[ $((0x$eff >> 21 & 1)) -eq 0 ] # CAP_SYS_ADMIN
	grep -Eq '^NoNewPrivs:\s+0$' <<<"$output"

	runtime exec --cap CAP_SYS_ADMIN --no-new-privs "$CID" sh -c 'grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status'
	[ "$status" -eq 0 ]
	eff=$(awk '/^CapEff/ {print $2}' <<<"$output")
	[ $((0x$eff >> 21 & 1)) -eq 1 ]
	eff=$(awk '/^CapBnd/ {print $2}' <<<"$output")
	[ $((0x$eff >> 21 & 1)) -eq 1 ]
	grep -Eq '^NoNewPrivs:\s+1$' <<<"$output"

	# As in runc (1.1 to 1.3): a name this kernel does not know, or one
	# not spelled CAP_X, is ignored with a warning and grants nothing.
	runtime exec --cap CAP_FLY --cap SYS_ADMIN --cap cap_sys_admin "$CID" sh -c 'grep "^CapEff:" /proc/self/status'
	[ "$status" -eq 0 ]
	eff=$(awk '/^CapEff/ {print $2}' <<<"$output")
	[ $((0x$eff >> 21 & 1)) -eq 0 ] || fail "a misspelt --cap granted CAP_SYS_ADMIN"
	if ! is_runc; then
		[[ "$output" == *"ignoring unknown capabilities CAP_FLY, SYS_ADMIN, cap_sys_admin"* ]]
	fi
}

@test "exec: --process runs an OCI process object, as podman and containerd send" {
	use_subid_mappings
	run_detached
	local proc="$BATS_TEST_TMPDIR/process.json"
	process_json "$proc" '.args = ["sh", "-c", "id -u; id -G; pwd; echo $FOO; ulimit -n; grep -E \"^(CapEff|NoNewPrivs):\" /proc/self/status"]
		| .env = ["PATH=/bin:/usr/bin", "FOO=from-json"] | .cwd = "/home/user"
		| .user = {uid: 1000, gid: 1000, additionalGids: [29]}
		| .capabilities = {bounding: ["CAP_KILL"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"],
			inheritable: ["CAP_KILL"], ambient: ["CAP_KILL"]}
		| .noNewPrivileges = true | .rlimits = [{type: "RLIMIT_NOFILE", hard: 512, soft: 256}]
		| .terminal = false'
	runtime exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = "1000 29" ]
	[ "${lines[2]}" = /home/user ]
	[ "${lines[3]}" = from-json ]
	[ "${lines[4]}" = 256 ]
	# CAP_KILL (5), kept across the uid change as an ambient capability.
	grep -Eq '^CapEff:\s+0000000000000020$' <<<"$output"
	grep -Eq '^NoNewPrivs:\s+1$' <<<"$output"

	if ! is_runc; then # runc 1.1.5 has no --process -
		process_json "$proc" '.args = ["echo", "from-stdin"]'
		RUNTIME_STDIN="$proc" runtime exec --process - "$CID"
		[ "$status" -eq 0 ]
		[ "$output" = from-stdin ]
	fi

	# A broken file is an error naming it.
	echo '{"args": ' >"$proc"
	runtime exec --process "$proc" "$CID"
	[ "$status" -ne 0 ]
	is_runc || [[ "$output" == *process.json* ]]
	process_json "$proc" '.args = []'
	runtime exec --process "$proc" "$CID"
	[ "$status" -ne 0 ]
}

@test "exec: the process gets the container's oomScoreAdj unless its own process sets one (runc)" {
	update_config '.process.oomScoreAdj = 123'
	run_detached
	# Not the runtime's own (a shim's -998, say): the container's, as runc.
	runtime exec "$CID" cat /proc/self/oom_score_adj
	[ "$status" -eq 0 ]
	[ "$output" = 123 ]
	is_runc && return 0 # runc takes the container's even then
	local proc="$BATS_TEST_TMPDIR/process.json"
	process_json "$proc" '.args = ["cat", "/proc/self/oom_score_adj"] | .oomScoreAdj = 200'
	runtime exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	[ "$output" = 200 ]
}

@test "exec: process.scheduler, ioPriority and execCPUAffinity" {
	requires nanobox
	use_sysprobe
	local cpus first last proc="$BATS_TEST_TMPDIR/process.json"
	cpus=$(host_cpus)
	first=$(first_cpu "$cpus")
	last=$(last_cpu "$cpus")
	# config.json's execCPUAffinity is for exec'd processes, never init.
	update_config '.process.execCPUAffinity = {final: $c}' "$BUNDLE" --arg c "$last"
	set_args sh -c 'grep Cpus_allowed_list /proc/self/status; sleep 1000'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	retry 50 0.1 grep -q Cpus_allowed_list "$RUNTIME_OUTFILE"
	[ "$(cat "$RUNTIME_OUTFILE")" = "$(printf 'Cpus_allowed_list:\t%s' "$cpus")" ]
	runtime exec "$CID" grep Cpus_allowed_list /proc/self/status
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'Cpus_allowed_list:\t%s' "$last")" ]

	# /proc/PID/stat after the ")": field 41 policy, 19 nice.
	process_json "$proc" '.args = ["sh", "-c", "set -- $(cut -d\")\" -f2- /proc/self/stat); echo policy=${39} nice=${17}; ionice; grep Cpus_allowed_list /proc/self/status"]
		| .scheduler = {policy: "SCHED_BATCH", nice: 3}
		| .ioPriority = {class: "IOPRIO_CLASS_IDLE", priority: 0}
		| .execCPUAffinity = {initial: $f, final: $l}' --arg f "$first" --arg l "$last"
	runtime exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "policy=3 nice=3" ]
	[ "${lines[1]}" = idle ]
	[ "${lines[2]}" = "$(printf 'Cpus_allowed_list:\t%s' "$last")" ]

	# Where the host does not allow it: a clear error naming the field.
	process_json "$proc" '.args = ["true"] | .execCPUAffinity = {final: "8000"}'
	runtime exec --process "$proc" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"process.execCPUAffinity.final: sched_setaffinity 8000: invalid argument"* ]]
	process_json "$proc" '.args = ["true"] | .scheduler = {policy: "SCHED_FIFO", priority: 10}'
	runtime exec --process "$proc" "$CID"
	if is_rootless; then
		[ "$status" -ne 0 ]
		[[ "$output" == *"set process.scheduler: sched_setattr SCHED_FIFO: operation not permitted: a real-time policy needs CAP_SYS_NICE"* ]]
	elif [ "$status" -ne 0 ]; then
		# Real-time group scheduling without a budget for the cgroup.
		[[ "$output" == *"linux.resources.cpu.realtimeRuntime"* ]]
	fi
	process_json "$proc" '.args = ["true"] | .ioPriority = {class: "IOPRIO_CLASS_RT", priority: 0}'
	runtime exec --process "$proc" "$CID"
	if is_rootless; then
		[ "$status" -ne 0 ]
		[[ "$output" == *"IOPRIO_CLASS_RT needs CAP_SYS_NICE or CAP_SYS_ADMIN"* ]]
	fi
	process_json "$proc" '.args = ["true"] | .scheduler = {policy: "SCHED_OTHER", nice: 25}'
	runtime exec --process "$proc" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"process.scheduler.nice 25 is out of range -20 to 19"* ]]
}

@test "config: SCHED_DEADLINE with a cpuset narrower than the host is refused in runc's words" {
	requires root
	[ "$(nproc --all)" -gt 1 ] || skip "needs more than one CPU"
	update_config '.linux.resources.cpu.cpus = "0"
		| .process.scheduler = {policy: "SCHED_DEADLINE", nice: 19, runtime: 42000, deadline: 1000000, period: 1000000}'
	set_args true
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	# runc's suite (scheduler.bats "scheduler vs cpus") matches this.
	[[ "$output" == *"process scheduler can't be used together with AllowedCPUs"* ]]
	[[ "$output" == *"has 1 of $(nproc --all)"* ]]
	assert_nothing_left "$CID"
}

@test "exec --debug: logs the affinity execCPUAffinity.initial gives before the cgroup, as runc's nsexec" {
	requires nanobox # the wording of the log line
	local cpus first last mask proc="$BATS_TEST_TMPDIR/process.json"
	cpus=$(host_cpus)
	first=$(first_cpu "$cpus")
	last=$(last_cpu "$cpus")
	[ "$first" != "$last" ] || skip "needs two CPUs to tell an initial set from the rest"
	[ "$last" -lt 64 ] || skip "the logged mask covers CPUs 0-63"
	run_detached
	# The program sees only the final set: initial shows in the log alone.
	process_json "$proc" '.args = ["grep", "Cpus_allowed_list", "/proc/self/status"]
		| .execCPUAffinity = {initial: $l, final: $f}' --arg f "$first" --arg l "$last"
	runtime --debug exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	mask=$(printf '%#x' $((1 << last)))
	[[ "$output" == *"nsexec: pid "*": affinity: $mask\""* ]]
	[[ "$output" == *"$(printf 'Cpus_allowed_list:\t%s' "$first")"* ]]
	# Without an initial set: every CPU (the runtime's own affinity is reset).
	process_json "$proc" '.args = ["true"]'
	runtime --debug exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	mask=$(cpus_mask "$cpus")
	[[ "$output" == *"nsexec: pid "*": affinity: $mask\""* ]]
}

@test "exec: execCPUAffinity.initial alone is not undone once the process is in the cgroup" {
	local cpus first last proc="$BATS_TEST_TMPDIR/process.json"
	cpus=$(host_cpus)
	first=$(first_cpu "$cpus")
	last=$(last_cpu "$cpus")
	[ "$first" != "$last" ] || skip "needs two CPUs to tell an initial set from the rest"
	run_detached
	process_json "$proc" '.args = ["grep", "Cpus_allowed_list", "/proc/self/status"]
		| .execCPUAffinity = {initial: $l}' --arg l "$last"
	runtime exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	# Without a final set the runtime leaves the affinity to the kernel
	# (runtime-spec; runc 1.3 does the same). The process keeps the initial
	# set where it moves into no cgroup (rootless here) or, since Linux 6.2
	# (which keeps a sched_setaffinity mask across cpuset changes,
	# intersected with the cpuset), into the container's cpuset, which has
	# every CPU. Before 6.2 a cgroup v1 cpuset reset it on the move.
	local kv
	kv=$(uname -r | awk -F. '{print $1 * 1000 + $2}')
	if ! can_have_cgroup || [ "$kv" -ge 6002 ]; then
		[ "$output" = "$(printf 'Cpus_allowed_list:\t%s' "$last")" ]
	fi
}

@test "run and exec: the container's processes do not keep the runtime's CPU affinity" {
	command -v taskset >/dev/null || skip "needs taskset (util-linux)"
	local cpus first last proc="$BATS_TEST_TMPDIR/process.json"
	cpus=$(host_cpus)
	first=$(first_cpu "$cpus")
	last=$(last_cpu "$cpus")
	[ "$first" != "$last" ] || skip "needs two CPUs to tell the runtime's affinity from the rest"
	# A runtime started by taskset (or a service with CPUAffinity=):
	# init and exec'd processes run on every CPU the cgroup allows, as
	# runc's do (before Linux 6.2 a cpuset move hid the inherited mask).
	local AS_USER=(taskset -c "$first" "${AS_USER[@]}")
	set_args grep Cpus_allowed_list /proc/self/status
	runtime_ok run -b "$BUNDLE" "$CID"
	[ "$output" = "$(printf 'Cpus_allowed_list:\t%s' "$cpus")" ]

	# With a cpuset of the config, the cpuset.
	if can_have_cgroup; then
		set_resources "$(printf '{"cpu": {"cpus": "%s", "mems": "0"}}' "$cpus")"
	fi
	run_detached
	runtime exec "$CID" grep Cpus_allowed_list /proc/self/status
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'Cpus_allowed_list:\t%s' "$cpus")" ]
	# execCPUAffinity still decides where it is set.
	process_json "$proc" '.args = ["grep", "Cpus_allowed_list", "/proc/self/status"]
		| .execCPUAffinity = {final: $l}' --arg l "$last"
	runtime exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'Cpus_allowed_list:\t%s' "$last")" ]
}

@test "exec: --detach writes the pid file and leaves the process to the caller's subreaper" {
	local sp out pid
	sp=$(build_test_helper sysprobe static) || skip "cannot build tests/integration/sysprobe (needs go)"
	run_detached
	# conmon and containerd's shim are subreapers: the exec'd process, a
	# child of the runtime, becomes theirs once the runtime returns.
	out=$("$sp" subreaper "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" \
		"$CID" sh -c 'sleep 0.5; exit 7' </dev/null 2>&1)
	echo "$out"
	pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	[ "$(sed -n 1p <<<"$out")" = "cmd: exit 0" ]
	[ "$(sed -n 2p <<<"$out")" = "reaped $pid: exit 7" ]
	[ "$(wc -l <<<"$out")" -eq 2 ]
}

@test "exec: without --detach the process is the runtime's child and gets its signals" {
	run_detached
	runtime_bg exec --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CID" sleep 1000
	retry 100 0.05 test -s "$BATS_TEST_TMPDIR/exec.pid"
	local pid
	pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	[ "$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")" = "$RUNTIME_BG_PID" ]
	kill -TERM "$RUNTIME_BG_PID"
	wait_bg
	[ "$status" -eq 143 ]
	wait_pid_gone "$pid"
	testcontainer "$CID" running
}

@test "exec: --tty with --console-socket, detached and in the foreground" {
	requires recvtty
	local sock="$BATS_TEST_TMPDIR/console.sock" ttyout="$BATS_TEST_TMPDIR/tty.out"
	run_detached
	"$RECVTTY" -mode 0777 -o "$ttyout" "$sock" </dev/null >/dev/null 2>&1 3>&- &
	RECVTTY_PID=$!
	retry 100 0.02 test -S "$sock"
	runtime exec -t -d --console-socket "$sock" "$CID" sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo all-tty'
	[ "$status" -eq 0 ]
	retry 200 0.05 eval '! kill -0 $RECVTTY_PID 2>/dev/null'
	cat "$ttyout"
	[[ "$(tr -d '\r' <"$ttyout" | sed -n 1p)" == /dev/pts/* ]]
	tr -d '\r' <"$ttyout" | grep -qx all-tty

	if ! is_runc; then # runc 1.1.5 takes --console-socket only with -d
		"$RECVTTY" -mode 0777 -o "$ttyout" "$sock" </dev/null >/dev/null 2>&1 3>&- &
		RECVTTY_PID=$!
		retry 100 0.02 test -S "$sock"
		runtime exec -t --console-socket "$sock" "$CID" sh -c 'exit 3'
		[ "$status" -eq 3 ]
	fi

	runtime exec -t -d "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *console?socket* ]]
}

@test "exec: --tty without a console socket relays the terminal" {
	requires nanobox # runc needs its own stdin to be a terminal
	run_detached
	runtime exec -t "$CID" sh -c 'tty; exit 5'
	[ "$status" -eq 5 ]
	[[ "$(tr -d '\r' <<<"$output")" == /dev/pts/* ]]
}

@test "exec: --user leaves the host's /dev/null alone, with or without a terminal" {
	use_subid_mappings
	run_detached
	local before after
	before=$(stat -c '%u:%g %a %Z' /dev/null)
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec --user 1000:1000 "$CID" sh -c 'cat; echo x; echo y >&2' \
		</dev/null >/dev/null 2>/dev/null
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec -d --user 1000:1000 "$CID" true </dev/null >/dev/null 2>/dev/null
	runtime exec --user 1000:1000 "$CID" sh -c 'echo x >/dev/null && cat /dev/null && echo ok'
	[ "$output" = ok ]
	if ! is_runc; then
		runtime exec -t --user 1000:1000 "$CID" sh -c 'echo x >/dev/null; tty'
		[ "$status" -eq 0 ]
	fi
	if [[ -x "$RECVTTY" ]] || build_recvtty; then
		local sock="$BATS_TEST_TMPDIR/console.sock"
		"$RECVTTY" -mode 0777 -o "$BATS_TEST_TMPDIR/tty.out" "$sock" </dev/null >/dev/null 2>&1 3>&- &
		RECVTTY_PID=$!
		retry 100 0.02 test -S "$sock"
		runtime_ok exec -t -d --console-socket "$sock" --user 1000:1000 "$CID" sh -c 'echo x >/dev/null; id -u'
		retry 200 0.05 eval '! kill -0 $RECVTTY_PID 2>/dev/null'
		[ "$(tr -d '\r' <"$BATS_TEST_TMPDIR/tty.out")" = 1000 ]
	fi
	after=$(stat -c '%u:%g %a %Z' /dev/null)
	[ "$before" = "$after" ] || fail "host /dev/null changed: $before -> $after"
	# Inside, /dev/null still belongs to the container's root (rootless:
	# the host's node, owned by an unmapped root, so nobody).
	runtime exec "$CID" stat -c %u /dev/null
	if is_rootless; then [ "$output" = 65534 ]; else [ "$output" = 0 ]; fi
}

@test "exec: only fds 0-2 and the --preserve-fds ones reach the process" {
	run_detached
	runtime_with_fds exec "$CID" sh -c 'echo fds:; ls /proc/$$/fd; echo end'
	[ "$status" -eq 0 ]
	[ "$(fd_list)" = "0 1 2 " ]
	runtime_with_fds exec --preserve-fds 2 "$CID" sh -c 'cat <&3; cat <&4; echo fds:; ls /proc/$$/fd; echo end'
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p <<<"$output")" = one ]
	[ "$(sed -n 2p <<<"$output")" = two ]
	[ "$(fd_list)" = "0 1 2 3 4 " ]
	if ! is_runc; then
		runtime exec --preserve-fds -1 "$CID" true
		[ "$status" -ne 0 ]
	fi
}

@test "exec: into a paused container is refused unless --ignore-paused" {
	requires_cgroup
	run_detached
	runtime pause "$CID"
	[ "$status" -eq 0 ] || skip "pause is not available here: $output"
	testcontainer "$CID" paused
	runtime exec "$CID" echo hi
	[ "$status" -eq 255 ]
	# runc's text, which callers match.
	[[ "$output" == *"cannot exec in a paused container"* ]]
	# With --ignore-paused the process joins the frozen cgroup and runs once
	# the container is resumed.
	local out="$BATS_TEST_TMPDIR/exec-paused.out" pid
	__runtime exec --ignore-paused "$CID" echo hi >"$out" 2>&1 &
	pid=$!
	# Resumed only once the exec'd process is in the frozen cgroup.
	retry 100 0.05 eval '[ "$(__runtime ps --format json "$CID" | jq length)" -ge 2 ]'
	[ ! -s "$out" ]
	runtime_ok resume "$CID"
	wait "$pid"
	[ "$(cat "$out")" = hi ]
	testcontainer "$CID" running
}

@test "exec: into a created container works, as in runc" {
	create_sleeping
	testcontainer "$CID" created
	runtime exec "$CID" echo in-created
	[ "$status" -eq 0 ]
	[ "$output" = in-created ]
	testcontainer "$CID" created
	runtime_ok start "$CID"
	testcontainer "$CID" running
}

@test "exec: rootless, into a created container confined at start: a clear error, the container untouched" {
	requires rootless
	# A seccomp profile is applied at start: until then init stays out of
	# the container's (and so the unprivileged runtime's) reach.
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO"}]}'
	create_sleeping
	runtime exec "$CID" echo in-created
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot exec into a created container whose init is confined at start"*"start it first"* ]]
	testcontainer "$CID" created
	runtime_ok start "$CID"
	runtime_ok exec "$CID" echo started
	[ "$output" = started ]
}

@test "exec: into a stopped or missing container is a clear error" {
	set_args true
	runtime_ok run -d -b "$BUNDLE" "$CID-2"
	wait_for_status "$CID-2" stopped
	runtime exec "$CID-2" echo hi
	[ "$status" -ne 0 ]
	[[ "$output" == *"stopped"* ]]

	runtime exec "$CID-nope" echo hi
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]
}

@test "exec: a command or --process is required" {
	run_detached
	runtime exec "$CID"
	[ "$status" -ne 0 ]
	runtime exec
	[ "$status" -ne 0 ]
}

@test "exec: on cgroup v2, joins init's sub-cgroup where the container's cgroup takes no process" {
	requires root
	cgroup_v2 || skip "cgroup v2 only: its no-internal-process rule"
	run_detached
	local pid dir
	pid=$(ctr_pid)
	dir=$(cgroup_path "$pid")
	grep -qw memory "$dir/cgroup.controllers" || skip "no memory controller for the container's cgroup"
	# init moves to a sub-cgroup and enables a domain controller for it
	# (as systemd in a container does): the container's cgroup can hold
	# no process any more, and exec joins init's, as runc does.
	mkdir "$dir/leaf"
	echo "$pid" >"$dir/leaf/cgroup.procs"
	echo +memory >"$dir/cgroup.subtree_control"
	runtime_ok exec "$CID" cat /proc/self/cgroup
	[[ "$output" == *"/leaf" ]]
	# Asked for explicitly, the container's own cgroup is an error.
	runtime exec --cgroup / "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *" adding pid "*"device or resource busy"* ]]
	runtime_ok delete --force "$CID"
	rmdir "$dir/leaf" "$dir" 2>/dev/null || true
}

@test "exec --cgroup: the process goes in an existing sub-cgroup of the container's" {
	requires root
	run_detached
	local pid dir mdir= sub=nbx-sub
	pid=$(ctr_pid)
	if cgroup_v2; then
		dir=$(cgroup_path "$pid")
		mkdir "$dir/$sub"
		runtime_ok exec --cgroup "$sub" "$CID" cat /proc/self/cgroup
		[[ "$output" == *"/$sub" ]]
	else
		dir=$(cgroup_path "$pid" pids)
		mkdir "$dir/$sub"
		runtime_ok exec --cgroup "pids:$sub" "$CID" cat /proc/self/cgroup
		# In the pids hierarchy only; the rest is the container's.
		grep -Eq "^[0-9]+:pids:.*/$sub\$" <<<"$output"
		! grep -E "^[0-9]+:memory:.*/$sub\$" <<<"$output"
		runtime exec --cgroup "memory:$sub" "$CID" true
		[ "$status" -ne 0 ]
		# Several controllers before one path, comma-separated (runc's
		# suite: "cpu,cpuacct:subcpu"): the flag's value is not split.
		mdir=$(cgroup_path "$pid" memory)
		mkdir "$mdir/$sub"
		runtime_ok exec --cgroup "pids,memory:$sub" "$CID" cat /proc/self/cgroup
		grep -Eq "^[0-9]+:pids:.*/$sub\$" <<<"$output"
		grep -Eq "^[0-9]+:memory:.*/$sub\$" <<<"$output"
	fi
	# A sub-cgroup that does not exist, or one outside, is an error, in
	# runc's words (callers match them); "/" is the container's own.
	runtime exec --cgroup nosuch "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *" adding pid "*"/nosuch/cgroup.procs: no such file "* ]]
	runtime exec --cgroup ../escape "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad sub cgroup path: --cgroup ../escape is not a sub cgroup path (it leads out"* ]]
	runtime exec --cgroup .. "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad sub cgroup path: --cgroup .. is not a sub cgroup path (it leads out"* ]]
	# A sibling whose name starts with the container's cgroup's is out of
	# it too, with or without a controller.
	local sibling
	sibling=$(basename "$dir")-sibling
	mkdir "$dir-sibling"
	runtime exec --cgroup "../$sibling" "$CID" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad sub cgroup path: --cgroup ../$sibling is not a sub cgroup path (it leads out"* ]]
	if ! cgroup_v2; then
		runtime exec --cgroup "pids:../$sibling" "$CID" true
		[ "$status" -ne 0 ]
		[[ "$output" == *"bad sub cgroup path: --cgroup ../$sibling is not a sub cgroup path (it leads out"* ]]
	fi
	rmdir "$dir-sibling"
	if ! cgroup_v2; then
		runtime exec --cgroup whaaat:/ "$CID" true
		[ "$status" -ne 0 ]
		[[ "$output" == *"unknown controller whaaat"* ]]
	fi
	runtime_ok exec --cgroup / "$CID" cat /proc/self/cgroup
	! grep -q "/$sub\$" <<<"$output"
	runtime_ok delete --force "$CID"
	rmdir "$dir/$sub" 2>/dev/null || true
	[[ -z $mdir ]] || rmdir "$mdir/$sub" 2>/dev/null || true
}
