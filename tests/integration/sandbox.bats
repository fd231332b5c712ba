#!/usr/bin/env bats
# `nanobox-runc sandbox`: one program, no bundle, limits that fail closed,
# and the execution report. Every limit is tried by a program that tries to
# exceed it; each test asserts the report's status and the limit's fate,
# which depend on the host: a cgroup for root or a delegated cgroup v2
# subtree (enforced), none for an ordinary user on cgroup v1 (refused, or
# degraded when allowed).

load helpers

setup() {
	setup_test
	requires nanobox
	SB_OUT="$BATS_TEST_TMPDIR/sb.out"
	SB_ERR="$BATS_TEST_TMPDIR/sb.err"
	SB_REPORT="$BATS_TEST_TMPDIR/report.json"
}

teardown() {
	teardown_test
}

# sb ARGS...: `nanobox-runc sandbox ARGS`, as the test's user, with the
# test's state root; stdout in $SB_OUT (and $sb_out), stderr in $SB_ERR
# ($sb_err), the status in $status. Stdin is $SB_STDIN or /dev/null.
sb() {
	: >"$SB_OUT"
	: >"$SB_ERR"
	chmod 0666 "$SB_OUT" "$SB_ERR"
	status=0
	timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox "$@" \
		<"${SB_STDIN:-/dev/null}" >"$SB_OUT" 2>"$SB_ERR" 3>&- || status=$?
	sb_out=$(cat "$SB_OUT")
	sb_err=$(cat "$SB_ERR")
	echo "\$ nanobox-runc sandbox $* (status $status$(is_rootless && echo ", rootless"))"
	[[ -z "$sb_out" ]] || echo "stdout: $sb_out" | head -c 2000
	[[ -z "$sb_err" ]] || echo "stderr: $sb_err" | head -c 4000
	return 0
}

# sb_report ARGS...: sb with --report written to $SB_REPORT.
sb_report() {
	rm -f "$SB_REPORT"
	sb --report "$SB_REPORT" "$@"
	[[ -s "$SB_REPORT" ]] && cat "$SB_REPORT"
	return 0
}

# report JQ: the report's value at JQ.
report() {
	jq -r "$1" "$SB_REPORT"
}

# check_json JQ: how --check says this caller's limit is enforced.
check_limit() {
	"${AS_USER[@]}" "$RUNTIME" sandbox --check --report-format json | jq -r ".limits.$1"
}

# limit_by_cgroup LIMIT: true when a cgroup enforces LIMIT for this caller.
limit_by_cgroup() {
	[[ "$(check_limit "$1")" == "enforced by cgroup"* ]]
}

# assert_cgroup_where_expected LIMIT: as root, or in a cgroup v2 subtree the
# harness delegated (the cgroup v2 VM), LIMIT must be enforced by the
# cgroup, so that the test exercises that path there.
assert_cgroup_where_expected() {
	if ! is_rootless || [[ -n "${NANOBOX_TEST_CGROUP_PARENT:-}" ]]; then
		limit_by_cgroup "$1" || fail "$1 is not enforced by a cgroup, though this caller has one: $(check_limit "$1")"
	fi
	return 0
}

# assert_sandbox_clean: no state directory left in the state root.
assert_sandbox_clean() {
	local left
	left=$(state_root_left)
	[[ -z "$left" ]] || fail "left in the state root: $left"
}

@test "sandbox: echo hello with no bundle" {
	sb -- echo hello
	[[ $status -eq 0 ]] || fail "status $status"
	[[ "$sb_out" == hello ]] || fail "stdout $sb_out"
	assert_sandbox_clean
}

@test "sandbox: stdin, stdout and stderr are the caller's" {
	echo from-stdin >"$BATS_TEST_TMPDIR/in"
	SB_STDIN="$BATS_TEST_TMPDIR/in" sb -- sh -c 'cat; echo to-stderr >&2'
	[[ $status -eq 0 && "$sb_out" == from-stdin && "$sb_err" == to-stderr ]] || fail "out $sb_out err $sb_err"
}

@test "sandbox: exit statuses: the program's, 128+N, 125, 126, 127" {
	sb -- sh -c 'exit 7'
	[[ $status -eq 7 ]] || fail "exit 7: status $status"
	# A fault kills the program (pid 1 of its pid namespace ignores only
	# the signals that are not forced).
	sb -- perl -e 'unpack "p", pack "L!", 1'
	[[ $status -eq 139 ]] || fail "segfault: status $status"
	sb -- no-such-program
	[[ $status -eq 127 ]] || fail "not found: status $status"
	[[ "$sb_err" == *'"no-such-program": executable file not found'*"use an absolute path"* ]] || fail "message: $sb_err"
	[[ $(wc -l <"$SB_ERR") -eq 1 ]] || fail "more than one line"
	sb -- /etc/passwd
	[[ $status -eq 126 && "$sb_err" == *"permission denied"* ]] || fail "not executable: status $status"
	sb --memory lots -- true
	[[ $status -eq 125 && "$sb_err" == *"--memory lots: want a size"* ]] || fail "bad flag: status $status"
	sb --mount /no/such/dir:/x -- true
	[[ $status -eq 125 && "$sb_err" == *"mounts[0].source"*"create it or fix the path"* ]] || fail "missing mount: $sb_err"
	assert_sandbox_clean
}

@test "sandbox: the report as JSON and as an isolate meta file" {
	sb_report --wall-time 30s -- sh -c 'echo out; exit 3'
	[[ $status -eq 3 ]]
	[[ "$(report .version)" == 1 && "$(report .status)" == exited && "$(report .exitCode)" == 3 ]] || fail "report"
	[[ "$(report .id)" == sb-* && "$(report .wallTime)" != null && "$(report .peakMemorySource)" != null ]] || fail "report fields"
	[[ "$(report .limits.wallTime.status)" == enforced ]] || fail "wall time fate"
	# --report - goes to stderr, after the program's output.
	sb --report - -- sh -c 'echo out; echo err >&2'
	[[ "$sb_out" == out ]] || fail "stdout $sb_out"
	[[ "$(head -1 "$SB_ERR")" == err ]] || fail "program's stderr first"
	tail -n +2 "$SB_ERR" | jq -e '.status == "ok"' >/dev/null || fail "report on stderr"
	sb --report "$SB_REPORT" --report-format isolate -- sh -c 'exit 2'
	grep -qx 'exitcode:2' "$SB_REPORT" && grep -qx 'status:RE' "$SB_REPORT" && grep -q '^time-wall:' "$SB_REPORT" ||
		fail "isolate meta: $(cat "$SB_REPORT")"
}

@test "sandbox: limit wallTime: sleep past the wall time" {
	sb_report --wall-time 300ms -- sh -c 'sleep 30 & sleep 31'
	[[ $status -eq 137 ]] || fail "status $status"
	[[ "$(report .status)" == wall-timeout && "$(report .killed)" == true ]] || fail "status"
	[[ "$(report .limits.wallTime.status)" == enforced && "$(report .limits.wallTime.hit)" == true ]] || fail "fate"
	assert_sandbox_clean
}

@test "sandbox: limit cpuTime: a busy loop" {
	sb_report --cpu-time 500ms --wall-time 60s -- sh -c 'while :; do :; done'
	[[ "$(report .status)" == cpu-timeout ]] || fail "status"
	[[ "$(report .limits.cpuTime.status)" == enforced && "$(report .limits.cpuTime.hit)" == true ]] || fail "fate"
	jq -e '.cpuUser + .cpuSystem >= 0.4' "$SB_REPORT" >/dev/null || fail "cpu time below the limit"
}

@test "sandbox: limit output: an output flood" {
	sb_report --output-limit 64K --wall-time 60s -- yes flood
	[[ "$(report .status)" == output-limit && "$(report .outputTruncated)" == true ]] || fail "status"
	[[ "$(report .limits.output.status)" == enforced && "$(report .limits.output.hit)" == true ]] || fail "fate"
	local n
	n=$(stat -c %s "$SB_OUT")
	[[ $n -le 65536 && $n -ge 32768 ]] || fail "$n bytes relayed, limit 65536"
}

@test "sandbox: limit openFiles: fd exhaustion" {
	sb_report --open-files 16 -- perl -e 'my @f; while (open(my $f, "<", "/dev/null")) { push @f, $f } print scalar(@f)+3, "\n"'
	[[ $status -eq 0 && "$sb_out" == 16 ]] || fail "opened $sb_out"
	[[ "$(report .limits.openFiles.status)" == enforced && "$(report .limits.openFiles.mechanism)" == RLIMIT_NOFILE ]] || fail "fate"
}

@test "sandbox: limit fileSize: a file past the size limit" {
	sb_report --file-size 1M -- sh -c 'head -c 3000000 /dev/zero >/tmp/f; echo $?; wc -c </tmp/f'
	[[ $status -eq 0 ]]
	# head is killed by SIGXFSZ once the file has 1 MiB.
	[[ "$sb_out" == $'153\n1048576' ]] || fail "output $sb_out"
	[[ "$(report .limits.fileSize.status)" == enforced ]] || fail "fate"
}

@test "sandbox: limit memory: a memory hog" {
	assert_cgroup_where_expected memory
	if limit_by_cgroup memory; then
		sb_report --memory 64M -- dd if=/dev/zero of=/dev/null bs=256M count=1
		[[ $status -eq 137 && "$(report .status)" == oom && "$(report .oomKilled)" == true ]] || fail "status $status"
		[[ "$(report .limits.memory.status)" == enforced && "$(report .limits.memory.hit)" == true ]] || fail "fate"
		[[ "$(report .peakMemorySource)" == cgroup* ]] || fail "peak source"
		return
	fi
	# No cgroup for this caller: refused, naming the limit and the fix...
	sb --memory 64M -- true
	[[ $status -eq 125 && "$sb_err" == *"limits.memory: needs a cgroup"*"--allow-degraded memory"* ]] || fail "not refused: $sb_err"
	# ...or degraded to RLIMIT_AS when allowed: the allocation fails.
	sb_report --memory 64M --allow-degraded memory -- dd if=/dev/zero of=/dev/null bs=256M count=1
	[[ $status -eq 1 && "$(report .status)" == exited && "$sb_err" == *memory* ]] || fail "status $status"
	[[ "$(report .limits.memory.status)" == degraded && "$(report .limits.memory.mechanism)" == RLIMIT_AS* ]] || fail "fate"
	[[ "$(report '.isolation.degraded[0]')" == memory:* ]] || fail "degradation not listed"
}

@test "sandbox: limit pids: a fork bomb" {
	assert_cgroup_where_expected pids
	local args=(--pids 8 --wall-time 60s)
	limit_by_cgroup pids || args+=(--allow-degraded pids)
	sb_report "${args[@]}" -- perl -e 'my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit } $n++ } print "$n\n"'
	[[ $status -eq 0 && "$sb_out" == 7 ]] || fail "$sb_out forks, want 7 (8 with the program)"
	if limit_by_cgroup pids; then
		[[ "$(report .limits.pids.status)" == enforced && "$(report .limits.pids.hit)" == true ]] || fail "fate"
	else
		[[ "$(report .limits.pids.status)" == degraded && "$(report .limits.pids.mechanism)" == RLIMIT_NPROC* ]] || fail "fate"
	fi
	assert_sandbox_clean
}

@test "sandbox: limit cpus: refused or enforced, never silently dropped" {
	assert_cgroup_where_expected cpus
	if limit_by_cgroup cpus; then
		sb_report --cpus 0.5 -- true
		[[ $status -eq 0 && "$(report .limits.cpus.status)" == enforced ]] || fail "fate"
		return
	fi
	sb --cpus 0.5 -- true
	[[ $status -eq 125 && "$sb_err" == *"limits.cpus"* ]] || fail "not refused"
	sb_report --cpus 0.5 --allow-degraded cpus -- true
	[[ $status -eq 0 && "$(report .limits.cpus.status)" == unavailable && "$(report .limits.cpus.reason)" != null ]] || fail "fate"
}

@test "sandbox: the host's secrets are not visible" {
	sb -- sh -c 'wc -c </etc/shadow; wc -c </etc/gshadow; for k in /etc/ssh/ssh_host_*_key; do [ -e "$k" ] && wc -c <"$k"; done; ls /home /root /run 2>&1 | wc -l'
	[[ $status -eq 0 ]]
	local lines
	mapfile -t lines <<<"$sb_out"
	[[ "${lines[0]}" == 0 && "${lines[1]}" == 0 ]] || fail "shadow readable: $sb_out"
	for l in "${lines[@]:2}"; do [[ "$l" == 0 || "$l" == 3 ]] || fail "secret or home visible: $sb_out"; done
}

@test "sandbox: escape attempts from the default root fail" {
	sb -- sh -c '
		touch /usr/x 2>/dev/null && echo ESCAPE write-usr
		mount -t tmpfs t /mnt 2>/dev/null && echo ESCAPE mount
		mount -o remount,rw /etc 2>/dev/null && echo ESCAPE remount
		unshare -U true 2>/dev/null && echo ESCAPE userns
		echo 1 >/proc/sys/vm/drop_caches 2>/dev/null && echo ESCAPE sysctl
		mknod /tmp/mem c 1 1 2>/dev/null && echo ESCAPE mknod
		cp /bin/sh /tmp/sh && chmod 4755 /tmp/sh 2>/dev/null && echo ESCAPE setuid
		chmod 2755 /tmp/sh 2>/dev/null && echo ESCAPE setgid
		[ "$(cat /proc/1/comm)" = sh ] || echo ESCAPE pid 1 is $(cat /proc/1/comm)
		ls /proc | grep "^[0-9]" >/tmp/pids; [ "$(wc -l </tmp/pids)" -le 4 ] || echo ESCAPE host pids
		echo done'
	[[ $status -eq 0 && "$sb_out" == done ]] || fail "$sb_out"
}

@test "sandbox: the program cannot reach the caller's terminal or process group" {
	command -v script >/dev/null || skip "needs script(1) (bsdutils) for a terminal"
	# On a terminal (script's pty), as a program started from a shell is:
	# /dev/tty does not open, TIOCSTI (input pushed into the terminal, for
	# the caller's shell to run after the sandbox) fails, and with the
	# output capped the terminal on stdin is read-only.
	# The program is a file: script(1) runs its command with $SHELL, which
	# may be dash, and %q quotes a multi-line string in bash's $'...' form.
	local prog="$BATS_TEST_TMPDIR/tty.pl"
	cat >"$prog" <<-'EOF'
		$c = "x"; print open(my $t, "+<", "/dev/tty") ? "tty opened\n" : "no tty\n";
		print ioctl(STDIN, 0x5412, $c) ? "TIOCSTI worked\n" : "TIOCSTI: $!\n";
		print syswrite(STDIN, "") // 0 ? "" : "stdin: $!\n";
	EOF
	chmod 0644 "$prog"
	give_to_user "$BATS_TEST_TMPDIR"
	local cmd out
	cmd=$(printf '%q ' "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox --mount "$prog:/tty.pl:ro" --output-limit 1M -- perl /tty.pl)
	out=$(SHELL=/bin/sh script -q -e -c "$cmd" /dev/null </dev/null | tr -d '\r')
	echo "$out"
	[[ "$out" == $'no tty\nTIOCSTI: Operation not permitted\nstdin: Bad file descriptor' ]] || fail "terminal reached: $out"
	# kill(0, SIGKILL) reaches the program's own process group only: the
	# shell that started the sandbox (in a group of its own here) lives.
	out=$(setsid "${AS_USER[@]}" sh -c "$(printf '%q ' "$RUNTIME" --root "$ROOT" sandbox -- sh -c 'kill -KILL 0'); echo survived" </dev/null 2>&1)
	[[ "$out" == *survived* ]] || fail "the caller's process group was signalled: $out"
}

@test "sandbox: mounts, tmpfs, env, workdir, user, hostname" {
	local d="$BATS_TEST_TMPDIR/data"
	mkdir -p "$d/ro" "$d/rw"
	echo in >"$d/ro/f"
	give_to_user "$d"
	FOO=from-caller sb --mount "$d/ro:/in:ro" --mount "$d/rw:/out" --tmpfs /scratch:1M --env A=1 --env FOO \
		--workdir /out --user 1000:1000 -- sh -c '
		cat /in/f; touch /in/x 2>/dev/null && echo BAD ro
		echo result >/out/r
		head -c 2000000 /dev/zero >/scratch/big 2>/dev/null && echo BAD tmpfs size
		echo "$A $FOO $(pwd) $(id -u):$(id -g) $(hostname)"'
	[[ $status -eq 0 ]]
	[[ "$sb_out" == $'in\n1 from-caller /out 1000:1000 sandbox' ]] || fail "$sb_out"
	[[ "$(cat "$d/rw/r")" == result ]] || fail "rw mount"
	FOO=x sb --env FOO=y --env BAR -- true
	[[ $status -eq 125 && "$sb_err" == *"--env BAR: BAR is not set"* ]] || fail "unset env: $sb_err"
}

@test "sandbox: no network by default, the host's with --network host" {
	sb -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	[[ $status -eq 0 && "$sb_out" == lo ]] || fail "interfaces: $sb_out"
	sb --network host -- sh -c 'tail -n +3 /proc/net/dev | wc -l'
	[[ $status -eq 0 && "$sb_out" -ge 1 ]]
	[[ "$sb_out" == "$(tail -n +3 /proc/net/dev | wc -l)" ]] || fail "host interfaces: $sb_out"
	sb --network bridge -- true
	[[ $status -eq 125 && "$sb_err" == *"use none, host or allowlist"* ]]
}

@test "sandbox: seccomp strict, and a profile file" {
	# ptrace(PTRACE_TRACEME) (101 on x86_64): allowed by default, not by strict.
	[[ "$(uname -m)" == x86_64 ]] || skip "system call numbers of x86_64"
	sb -- perl -e 'print syscall(101, 0, 0, 0, 0), "\n"'
	[[ "$sb_out" == 0 ]] || fail "default: $sb_out"
	sb --seccomp strict -- perl -e 'print syscall(101, 0, 0, 0, 0), "\n"'
	[[ "$sb_out" == -1 ]] || fail "strict: $sb_out"
	cat >"$BATS_TEST_TMPDIR/profile.json" <<-'EOF'
		{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
	EOF
	chmod 0644 "$BATS_TEST_TMPDIR/profile.json"
	sb --seccomp "$BATS_TEST_TMPDIR/profile.json" -- sh -c 'mkdir /tmp/d && echo made || echo refused'
	[[ "$sb_out" == refused ]] || fail "profile file: $sb_out"
}

@test "sandbox: --options, --print-options and flags on top" {
	cat >"$BATS_TEST_TMPDIR/opts.json" <<-'EOF'
		{"version": 1, "env": ["X=from-json"], "limits": {"wallTime": 0.3}}
	EOF
	chmod 0644 "$BATS_TEST_TMPDIR/opts.json"
	sb_report --options "$BATS_TEST_TMPDIR/opts.json" --env Y=flag -- sh -c 'echo $X $Y; sleep 30'
	[[ $status -eq 137 && "$sb_out" == "from-json flag" && "$(report .status)" == wall-timeout ]] || fail "options"
	sb --options "$BATS_TEST_TMPDIR/opts.json" --memory 256M --print-options
	[[ $status -eq 0 ]]
	jq -e '.version == 1 and .limits.memory == 268435456 and .limits.wallTime == 0.3 and .env == ["X=from-json"]' <<<"$sb_out" >/dev/null || fail "printed $sb_out"
	echo '{"version": 1, "limitz": {}}' >"$BATS_TEST_TMPDIR/bad.json"
	chmod 0644 "$BATS_TEST_TMPDIR/bad.json"
	sb --options "$BATS_TEST_TMPDIR/bad.json" -- true
	[[ $status -eq 125 && "$sb_err" == *'unknown field "limitz"'* ]] || fail "bad options: $sb_err"
	echo '{"limits": {}}' >"$BATS_TEST_TMPDIR/bad.json"
	sb --options "$BATS_TEST_TMPDIR/bad.json" -- true
	[[ $status -eq 125 && "$sb_err" == *'"version" is missing'* ]] || fail "no version: $sb_err"
}

@test "sandbox: a set-up error is a report too, with its kind, field and fix" {
	# --validate checks the options as a run would, and runs nothing.
	sb --validate --wall-time 5s
	[[ $status -eq 0 && -z "$sb_out$sb_err" ]] || fail "valid options: status $status"
	sb_report --validate --mount /no/such/dir:/x
	[[ $status -eq 125 && "$sb_err" == *"mounts[0].source"* ]] || fail "status $status"
	[[ "$(report .status)" == setup-error && "$(report .exitCode)" == 125 && "$(report .errorKind)" == invalid-options ]] || fail "report"
	[[ "$(report '.problems[0].field')" == "mounts[0].source" && "$(report .error)" == *"create it or fix the path" ]] || fail "problem"
	sb_report -- no-such-program
	[[ $status -eq 127 && "$(report .errorKind)" == program-not-found && "$(report '.problems[0].fix')" == *"absolute path"* ]] || fail "not found"
	echo '{"version": 1, "limitz": {}}' >"$BATS_TEST_TMPDIR/bad.json"
	chmod 0644 "$BATS_TEST_TMPDIR/bad.json"
	sb_report --options "$BATS_TEST_TMPDIR/bad.json" -- true
	[[ $status -eq 125 && "$(report .status)" == setup-error && "$(report .error)" == *'unknown field "limitz"'* ]] || fail "bad options"
	[[ "$(report .errorKind)" == invalid-options ]] || fail "bad options: kind"
	if limit_by_cgroup memory; then
		sb_report --validate --memory 64M
		[[ $status -eq 0 ]] || fail "memory limit refused: $sb_err"
		return
	fi
	# A limit this caller cannot have: refused, naming the limit and the
	# fix, in the error and in the report.
	sb_report --validate --memory 64M --pids 8
	[[ $status -eq 125 && "$(report .errorKind)" == limit-unavailable ]] || fail "status $status"
	[[ "$(report '[.problems[].limit] | join(",")')" == memory,pids ]] || fail "limits named"
	[[ "$(report '.problems[0].fix')" == *'allowDegraded: ["memory"]'* && "$sb_err" == *"$(report '.problems[1].message')"* ]] || fail "fix"
}

@test "sandbox: presets" {
	local sub="$BATS_TEST_TMPDIR/sub"
	mkdir -p "$sub"
	echo 'echo judged' >"$sub/run.sh"
	give_to_user "$sub"
	local degrade=()
	limit_by_cgroup memory || degrade=(--allow-degraded memory,pids,cpus)
	sb_report --preset "code-judge=$sub" "${degrade[@]}" -- sh -c 'sh /submission/run.sh; touch /submission/x 2>/dev/null && echo BAD; true'
	[[ $status -eq 0 && "$sb_out" == judged ]] || fail "code-judge"
	[[ "$(report .isolation.seccomp)" == strict && "$(report .limits.wallTime.requested)" == 10 ]] || fail "judge report"
	if [[ ${#degrade[@]} -gt 0 ]]; then
		# Strict limits fail closed.
		sb --preset "code-judge=$sub" -- true
		[[ $status -eq 125 && "$sb_err" == *limits.memory* ]] || fail "code-judge did not fail closed"
	fi
	# agent-executor: the current directory is the workspace.
	local ws="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$ws/.git/hooks"
	echo '[core]' >"$ws/.git/config"
	give_to_user "$ws"
	cd "$ws"
	sb --preset agent-executor -- sh -c 'pwd; echo made >f; (echo x >.git/hooks/pre-commit) 2>/dev/null && echo BAD hook; (echo /tmp >.git/commondir) 2>/dev/null && echo BAD commondir; true'
	cd - >/dev/null
	[[ $status -eq 0 && "$sb_out" == /workspace ]] || fail "agent-executor: $sb_out"
	[[ "$(cat "$ws/f")" == made && ! -e "$ws/.git/hooks/pre-commit" ]] || fail "workspace"
	sb --preset data-analysis -- true
	[[ $status -eq 125 && "$sb_err" == *"INPUT,OUTPUT"* ]] || fail "data-analysis without dirs"
}

@test "sandbox: --check says what this host enforces, with fixes" {
	runtime_ok sandbox --check
	[[ "$output" == *"user namespaces:"* && "$output" == *"cgroup:"* && "$output" == *"landlock:"* && "$output" == *"limit memory:"* ]] || fail "check"
	if ! limit_by_cgroup memory; then
		[[ "$output" == *"FAIL cgroup:"* && "$output" == *"fix:"* ]] || fail "no fix for the missing cgroup"
	fi
	"${AS_USER[@]}" "$RUNTIME" sandbox --check --report-format json | jq -e '.userNamespaces.ok == true' >/dev/null
}

@test "sandbox: the caller's other fds do not reach the program" {
	exec 7>"$BATS_TEST_TMPDIR/caller-fd"
	sb -- sh -c 'ls /proc/self/fd | tr "\n" " "'
	exec 7>&-
	[[ "$sb_out" == "0 1 2 3 " ]] || fail "fds in the sandbox: $sb_out"
}

@test "sandbox: a signal to nanobox-runc kills the whole sandbox" {
	local d="$BATS_TEST_TMPDIR/sync" mark=$((6000000 + $$ % 100000))
	mkdir -p "$d"
	mkfifo "$d/ready"
	give_to_user "$d"
	"${AS_USER[@]}" "$RUNTIME" --root "$ROOT" sandbox --report "$SB_REPORT" --mount "$d:/sync" -- \
		sh -c "sleep $mark & sleep $mark & echo up >/sync/ready; wait" </dev/null >"$SB_OUT" 2>"$SB_ERR" &
	local pid=$!
	read -r line <"$d/ready"
	[[ "$line" == up ]]
	pgrep -f "^sleep $mark\$" >/dev/null || fail "sandbox not running"
	kill -TERM "$pid"
	local st=0
	wait "$pid" || st=$?
	[[ $st -eq 143 ]] || fail "status $st"
	[[ "$(report .status)" == cancelled ]] || fail "report $(cat "$SB_REPORT")"
	! pgrep -f "^sleep $mark\$" || fail "processes left"
	assert_sandbox_clean
}

@test "sandbox: --die-with-parent: the sandbox ends with the process that started it" {
	local d="$BATS_TEST_TMPDIR/sync" mark=$((6100000 + $$ % 100000))
	mkdir -p "$d"
	mkfifo "$d/ready"
	give_to_user "$d"
	# The parent: a shell that starts the sandbox and waits; killed with
	# SIGKILL, it cannot pass anything on.
	"${AS_USER[@]}" sh -c '"$@" & wait' sh "$RUNTIME" --root "$ROOT" sandbox --die-with-parent --report "$SB_REPORT" \
		--mount "$d:/sync" -- sh -c "sleep $mark & echo up >/sync/ready; wait" </dev/null >"$SB_OUT" 2>"$SB_ERR" &
	local parent=$!
	read -r line <"$d/ready"
	[[ "$line" == up ]]
	# The shell's child may not have become sleep yet (fork, then exec).
	local i
	for ((i = 0; i < 600; i++)); do
		pgrep -f "^sleep $mark\$" >/dev/null && break
		sleep 0.05
	done
	pgrep -f "^sleep $mark\$" >/dev/null || fail "sandbox not running"
	kill -KILL "$parent"
	wait "$parent" || true
	# The runtime ends the run on its own: poll for it, with a deadline.
	for ((i = 0; i < 600; i++)); do
		pgrep -f "^sleep $mark\$" >/dev/null || break
		sleep 0.05
	done
	! pgrep -f "^sleep $mark\$" || fail "the sandbox outlived its parent"
	for ((i = 0; i < 600; i++)); do
		[[ -s "$SB_REPORT" ]] && jq -e . "$SB_REPORT" >/dev/null 2>&1 && break
		sleep 0.05
	done
	[[ "$(report .status)" == cancelled ]] || fail "report $(cat "$SB_REPORT")"
	for ((i = 0; i < 600; i++)); do
		[[ -z "$(state_root_left)" ]] && break
		sleep 0.05
	done
	assert_sandbox_clean
	sb --die-with-parent --detach --name x -- true
	[[ $status -eq 125 && "$sb_err" == *"--die-with-parent and --detach"* ]] || fail "detach: $sb_err"
}

@test "sandbox: spec --preset writes a bundle runc and nanobox-runc run" {
	requires root
	command -v runc >/dev/null || skip "test requires runc"
	local b="$BATS_TEST_TMPDIR/preset" sub="$BATS_TEST_TMPDIR/sub"
	mkdir -p "$b" "$sub"
	echo 'echo judged' >"$sub/run.sh"
	runtime_ok spec --bundle "$b" --preset "code-judge=$sub"
	[[ "$output" == *"wall time limit"*"sandbox"* ]] || fail "no note on what only the sandbox enforces"
	[[ -d "$b/rootfs" ]]
	local cmd='sh /submission/run.sh; id -u; touch /x 2>/dev/null || echo ro; ls /dev/shm >/dev/null && echo shm'
	jq --arg c "$cmd" '.process.args = ["sh", "-c", $c]' "$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
	local want=$'judged\n0\nro\nshm'
	run timeout 60 runc --root "$BATS_TEST_TMPDIR/runc-root" run -b "$b" "nbx-runc-$$"
	echo "$output"
	[[ $status -eq 0 && "$output" == "$want" ]] || fail "runc: $output"
	runtime run -b "$b" "$CID"
	[[ $status -eq 0 && "$output" == "$want" ]] || fail "nanobox-runc: $output"
}

@test "sandbox: as uid 0 of a user namespace, the caller is rootless: its state in \$XDG_RUNTIME_DIR, cgroup limits as for a user" {
	# Root inside a user namespace (a rootless container, rootless podman's
	# namespace) is not root on the host. The sandbox took it for root: it
	# wanted /run/nanobox-sandbox (owned by nobody there) and promised
	# cgroup limits it could not set.
	requires rootless
	command -v unshare >/dev/null || skip "test requires unshare (util-linux)"
	local xdg="$BATS_TEST_TMPDIR/xdg-userns"
	test_user_dir "$xdg"
	local in_ns=("${AS_USER[@]}" XDG_RUNTIME_DIR="$xdg" unshare --user --map-root-user "$RUNTIME")
	status=0
	output=$("${in_ns[@]}" sandbox -- sh -c 'echo in-sandbox; id -u' 2>&1) || status=$?
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == $'in-sandbox\n0' ]]
	# State under $XDG_RUNTIME_DIR (nothing left but the compiled seccomp
	# filters kept on purpose), never root's.
	[[ -d "$xdg/nanobox-sandbox" ]] || fail "no state root under \$XDG_RUNTIME_DIR"
	local left
	left=$(ls -A "$xdg/nanobox-sandbox" | grep -v '^\.seccomp-' || true)
	[[ -z "$left" ]] || fail "left: $left"
	output=$("${in_ns[@]}" sandbox --check 2>&1) || true
	echo "$output"
	[[ "$output" == *"uid 0 of a user namespace (rootless"* ]]
	# A memory limit: a cgroup only where one is delegated, else refused
	# (fail closed) with the fix, never taken for root's.
	status=0
	output=$("${in_ns[@]}" sandbox --memory 64M -- true 2>&1) || status=$?
	echo "$output"
	if [[ -n "${NANOBOX_TEST_CGROUP_PARENT:-}" ]]; then
		[ "$status" -eq 0 ]
	else
		[ "$status" -eq 125 ]
		[[ "$output" == *"limits.memory"*"--allow-degraded memory"* ]]
	fi
}
