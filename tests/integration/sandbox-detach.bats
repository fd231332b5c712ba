#!/usr/bin/env bats
# `nanobox-runc sandbox --detach --name ID -- CMD`: a sandbox that outlives
# the command, a container under the runtime's --root, managed by the
# existing exec, ps, kill, delete, list and state on that id.

load helpers

setup() {
	setup_test
	requires nanobox
	SID="sb-$CID"
}

teardown() {
	teardown_test
}

@test "sandbox --detach: exec, ps, kill and delete work on it" {
	runtime_ok sandbox --detach --name "$SID" -- sh -c 'echo one >/tmp/kept; exec sleep 1000'
	testcontainer "$SID" running
	runtime_ok list -q
	[[ "$output" == *"$SID"* ]] || fail "list does not show the sandbox"
	# exec joins the same sandbox: its /tmp, its pid namespace (sleep is 1).
	runtime_ok exec "$SID" sh -c 'cat /tmp/kept; tr "\0" " " </proc/1/cmdline; echo; hostname'
	[[ "${lines[0]}" == one && "${lines[1]}" == "sleep 1000 " && "${lines[2]}" == sandbox ]] ||
		fail "exec saw another sandbox: $output"
	# The sandbox's confinement holds for exec'd programs too.
	runtime exec "$SID" sh -c 'touch /usr/x'
	[[ $status -ne 0 && "$output" == *"Read-only file system"* ]] || fail "/usr is writable from exec"
	runtime exec "$SID" sh -c 'ls /root'
	[[ $status -ne 0 ]] || fail "/root is visible"
	runtime_ok ps "$SID"
	[[ "$output" == *"sleep 1000"* ]] || fail "ps does not list the program"
	local pid
	pid=$(container_pid "$SID")
	# pid 1 of its namespace ignores SIGTERM without a handler, as in any
	# container: KILL.
	runtime_ok kill "$SID" KILL
	wait_pid_gone "$pid"
	wait_for_status "$SID" stopped
	runtime_ok delete "$SID"
	runtime state "$SID"
	[[ $status -ne 0 ]] || fail "state after delete"
	[[ ! -e "$ROOT/$SID" ]] || fail "state dir left behind"
}

@test "sandbox --detach: the program keeps the caller's stdio, and its limits" {
	local out="$BATS_TEST_TMPDIR/detached.out"
	: >"$out"
	chmod 0666 "$out"
	# Started through as_user directly: the program's stdout is our file.
	as_user "$RUNTIME" --root "$ROOT" sandbox --detach --name "$SID" --open-files 64 -- \
		sh -c 'echo started; ulimit -n; exec sleep 1000' </dev/null >"$out" 2>&1
	retry 100 0.05 grep -q '^64$' "$out" || fail "output: $(cat "$out")"
	grep -q '^started$' "$out" || fail "output: $(cat "$out")"
	runtime_ok exec "$SID" sh -c 'ulimit -n'
	[[ "$output" == 64 ]] || fail "exec'd rlimit: $output"
	runtime_ok delete --force "$SID"
	[[ ! -e "$ROOT/$SID" ]] || fail "state dir left behind"
}

# The cgroup-dependent part (in the cgroup v2 VM stage too,
# scripts/test-cgroup2.sh): the sandbox's cgroup is that of every program
# exec'd into it, and goes with delete.
@test "sandbox --detach: its cgroup's pids limit holds for exec'd programs, and delete removes the cgroup" {
	local how
	how=$("${AS_USER[@]}" "$RUNTIME" sandbox --check --report-format json | jq -r .limits.pids)
	[[ "$how" == "enforced by cgroup"* ]] ||
		skip "no cgroup enforces a pids limit for this caller ($how): sandbox.bats tests the degraded form"
	runtime_ok sandbox --detach --name "$SID" --pids 8 -- sleep 1000
	local pid cg
	pid=$(container_pid "$SID")
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		cg=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' "/proc/$pid/cgroup")
	else
		cg=/sys/fs/cgroup/pids$(awk -F: '$2 == "pids" {print $3}' "/proc/$pid/cgroup")
	fi
	[[ -d "$cg" && "$cg" != /sys/fs/cgroup/ && "$cg" != /sys/fs/cgroup/pids/ ]] || fail "no cgroup of its own: $cg"
	# sleep and perl are 2 of the 8: 6 forks work. The children let go of
	# exec's stdout, so that exec returns with perl.
	runtime_ok exec "$SID" perl -e 'my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { close STDOUT; close STDERR; sleep 30; exit } $n++ } print "$n\n"'
	[[ "$output" == 6 ]] || fail "$output forks worked in exec, want 6 (8 with sleep and perl)"
	runtime_ok delete --force "$SID"
	[[ ! -e "$cg" ]] || fail "cgroup $cg left behind"
	[[ ! -e "$ROOT/$SID" ]] || fail "state dir left behind"
}

@test "sandbox --detach: what cannot work detached is refused, with the fix" {
	runtime sandbox --detach -- true
	[[ $status -eq 125 && "$output" == *"--detach needs --name"* ]] || fail "no --name: $output"
	runtime sandbox --name "$SID" -- true
	[[ $status -eq 125 && "$output" == *"add --detach"* ]] || fail "--name alone: $output"
	runtime sandbox --detach --name "$SID" --tty -- true
	[[ $status -eq 125 && "$output" == *"exec -t"* ]] || fail "--tty: $output"
	runtime sandbox --detach --name "$SID" --wall-time 10s -- true
	[[ $status -eq 125 && "$output" == *"limits.wallTime"*"supervisor"* ]] || fail "--wall-time: $output"
	runtime sandbox --detach --name "$SID" --output-limit 1M -- true
	[[ $status -eq 125 && "$output" == *"limits.output"* ]] || fail "--output-limit: $output"
	runtime sandbox --detach --name "bad/id" -- true
	[[ $status -eq 125 && "$output" == *"invalid container id"* ]] || fail "bad id: $output"
	runtime sandbox --detach --name "$SID" -- /no/such/program
	[[ $status -eq 127 && "$output" == *"no such file"* ]] || fail "missing program: $output"
	[[ ! -e "$ROOT/$SID" ]] || fail "a refused sandbox left its state: $(ls "$ROOT")"
	# The id is taken while the sandbox exists.
	runtime_ok sandbox --detach --name "$SID" -- sleep 1000
	runtime sandbox --detach --name "$SID" -- sleep 1000
	[[ $status -eq 125 && "$output" == *"already exists"* ]] || fail "duplicate id: $output"
	runtime_ok delete --force "$SID"
}
