#!/usr/bin/env bats
# linux.seccomp: every action, argument conditions, the notify listener, and
# Docker's default profile, rootful and rootless.

load helpers
load gohelpers

setup() {
	setup_test
	# A writable root, so that an unfiltered mkdir succeeds and a failing
	# one failed because of the filter.
	update_config '.root.readonly = false'
}

teardown() {
	teardown_test
}

# seccomp JSON: linux.seccomp = JSON.
seccomp() {
	update_config '.linux.seccomp = $s' "$BUNDLE" --argjson s "$1"
}

# deny_mkdir ACTION [ERRNO]: allow everything but mkdir/mkdirat, which get
# ACTION (with errnoRet ERRNO when given).
deny_mkdir() {
	local rule='{"names": ["mkdir", "mkdirat"], "action": $a}'
	[[ -z "${2:-}" ]] || rule='{"names": ["mkdir", "mkdirat"], "action": $a, "errnoRet": ($e | tonumber)}'
	update_config ".linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [$rule]}" \
		"$BUNDLE" --arg a "$1" --arg e "${2:-0}"
}

# old_profile [EXTRA-JQ]: a profile as written before close_range (5.9) and
# the calls after it existed: default ERRNO, Docker's unconditional allow
# list without close_range, faccessat2, clone3, openat2, pidfd_* and
# epoll_pwait2. EXTRA-JQ edits the list of allowed names ($n).
old_profile() {
	local agent names
	agent=$(build_test_helper seccompagent) || skip "cannot build tests/integration/seccompagent (needs go and libseccomp-dev)"
	names=$("$agent" profile | jq -c '[.syscalls[] | select(.action == "SCMP_ACT_ALLOW" and ((.args // []) | length) == 0)
		| .names[] | select(IN("close_range", "faccessat2", "clone3", "openat2", "pidfd_open", "pidfd_getfd",
			"pidfd_send_signal", "epoll_pwait2", "process_madvise") | not)] | '"${1:-.}")
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO", syscalls: [{names: $n, action: "SCMP_ACT_ALLOW"}]}' \
		"$BUNDLE" --argjson n "$names"
}

@test "seccomp: a profile that predates close_range runs the container, with or without no_new_privs" {
	local nnp
	for nnp in true false; do
		update_config '.process.noNewPrivileges = $v' "$BUNDLE" --argjson v "$nnp"
		old_profile
		run_sh 'echo ran; grep NoNewPrivs /proc/self/status'
		[ "$status" -eq 0 ] || fail "noNewPrivileges $nnp: run exited $status"
		[[ "$output" == "ran"*"NoNewPrivs:"*"$([[ $nnp == true ]] && echo 1 || echo 0)" ]]

		set_args sh -c 'echo started > /tmp/started; exec sleep 1000'
		runtime_ok create -b "$BUNDLE" "$CID"
		runtime_ok start "$CID"
		retry 100 0.05 test -e "$BUNDLE/rootfs/tmp/started"
		# exec'd processes get the same filter, and the same care.
		runtime exec "$CID" sh -c 'echo exec ran; grep NoNewPrivs /proc/self/status'
		[ "$status" -eq 0 ] || fail "noNewPrivileges $nnp: exec exited $status"
		[[ "$output" == "exec ran"*"NoNewPrivs:"*"$([[ $nnp == true ]] && echo 1 || echo 0)" ]]
		runtime_ok delete --force "$CID"
		rm -f "$BUNDLE/rootfs/tmp/started"
	done
}

@test "seccomp: a system call newer than the profile gets ENOSYS, not the default errno (the ENOSYS stub)" {
	[[ "$(uname -m)" == x86_64 ]] || skip "the system call numbers are x86_64's"
	use_sysprobe
	local agent names
	agent=$(build_test_helper seccompagent) || skip "cannot build tests/integration/seccompagent (needs go and libseccomp-dev)"
	# A profile of the 5.3 era: Docker's unconditional allow list up to
	# pidfd_open (434); what it does not list gets EXDEV.
	names=$("$agent" profile | jq -c '[.syscalls[] | select(.action == "SCMP_ACT_ALLOW" and ((.args // []) | length) == 0) | .names[]] + ["clone"]' |
		"$agent" below 435)
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO", defaultErrnoRet: 18, architectures: ["SCMP_ARCH_X86_64"],
		syscalls: [{names: $n, action: "SCMP_ACT_ALLOW"}]}' "$BUNDLE" --argjson n "$names"
	# clone3 (435) and an unassigned number above it: ENOSYS; reboot (169),
	# which the profile does not allow: its default errno.
	run_container sysprobe nr 435 1000 169
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '435: ENOSYS\n1000: ENOSYS\n169: EXDEV')" ]

	# A default errno of ENOSYS, or a permissive default, needs no stub.
	update_config '.linux.seccomp.defaultErrnoRet = 38'
	run_container sysprobe nr 1000 169
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '1000: ENOSYS\n169: ENOSYS')" ]
}

@test "seccomp: without no_new_privs the program gets exactly its capabilities, not the CAP_SYS_ADMIN held for seccomp(2)" {
	update_config '.process.noNewPrivileges = false'
	deny_mkdir SCMP_ACT_ERRNO 38
	run_sh 'grep -E "^Cap(Eff|Prm|Inh|Bnd|Amb)" /proc/self/status; mkdir /tmp/d'
	[ "$status" -eq 1 ]
	[[ "$output" == *"Function not implemented"* ]]
	local want
	want=$(printf '%016x' $(( (1 << 29) | (1 << 5) | (1 << 10) )))
	[[ "$output" == *"CapEff:"*"$want"* && "$output" == *"CapPrm:"*"$want"* ]]
}

@test "seccomp: a failure between start and execve is start's error, and start exits non-zero" {
	skip_if_runc "runc 1.1.5's start exits 0: its init can no longer report after the start"
	update_config '.process.noNewPrivileges = false'
	old_profile 'map(select(. != "execve"))'
	set_args sh -c 'echo ran > /tmp/ran'
	runtime_ok create -b "$BUNDLE" "$CID"
	runtime start "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"container $CID: exec "*"sh: operation not permitted"* ]]
	[ ! -e "$BUNDLE/rootfs/tmp/ran" ]
	testcontainer "$CID" stopped

	# run reports it as runc's init does, one line in init's words, and
	# leaves nothing.
	runtime run -b "$BUNDLE" "$CID-run"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "exec "*"sh: operation not permitted" ]]
	assert_nothing_left "$CID-run"
}

@test "seccomp: startContainer hooks run under the container's filter, as in runc" {
	deny_mkdir SCMP_ACT_ERRNO 38
	update_config '.hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", "mkdir /tmp/hookdir 2>/tmp/hook.err; echo $? > /tmp/hook.status"]}]'
	run_sh 'cat /tmp/hook.status /tmp/hook.err'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == 1 ]]
	[[ "$output" == *"Function not implemented"* ]]
	[ ! -e "$BUNDLE/rootfs/tmp/hookdir" ]
}

@test "seccomp: an errno rule returns its errnoRet, EPERM without one" {
	deny_mkdir SCMP_ACT_ERRNO 38
	run_sh 'mkdir /tmp/d; echo mkdir=$?; touch /tmp/f && echo touch-ok'
	[ "$status" -eq 0 ]
	[[ "$output" == *"can't create directory '/tmp/d': Function not implemented"* ]]
	[[ "$output" == *"mkdir=1"* && "$output" == *"touch-ok"* ]]

	deny_mkdir SCMP_ACT_ERRNO
	run_sh 'mkdir /tmp/d'
	[ "$status" -eq 1 ]
	[[ "$output" == *"can't create directory '/tmp/d': Operation not permitted"* ]]

	# Control: without the filter the same command works.
	update_config 'del(.linux.seccomp)'
	run_sh 'mkdir /tmp/d && echo made'
	[ "$status" -eq 0 ]
	[ "$output" = made ]
}

@test "seccomp: kill, kill-process, kill-thread and trap end the process with SIGSYS (exit 159)" {
	local a
	for a in SCMP_ACT_KILL SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD SCMP_ACT_TRAP; do
		deny_mkdir "$a"
		run_container mkdir /tmp/d
		# 128 + SIGSYS (31).
		[ "$status" -eq 159 ] || fail "$a: status $status"
		[ ! -e "$BUNDLE/rootfs/tmp/d" ] || fail "$a: the directory was made"
	done
	# From a shell: only the child dies.
	deny_mkdir SCMP_ACT_KILL
	run_sh 'mkdir /tmp/d; echo status=$?'
	[ "$status" -eq 0 ]
	[[ "$output" == *"status=159"* ]]
}

@test "seccomp: log and allow let the call through; trace without a tracer is ENOSYS" {
	deny_mkdir SCMP_ACT_LOG
	run_sh 'mkdir /tmp/d && echo made'
	[ "$status" -eq 0 ]
	[ "$output" = made ]

	deny_mkdir SCMP_ACT_TRACE 5
	run_sh 'mkdir /tmp/e'
	[ "$status" -eq 1 ]
	[[ "$output" == *"Function not implemented"* ]]
}

@test "seccomp: argument conditions select the calls" {
	# kill(pid, 0) denied, any other signal allowed.
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"errnoRet": 38, "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]}]}'
	run_sh 'kill -0 $$; echo zero=$?; kill -CONT $$; echo cont=$?'
	[ "$status" -eq 0 ]
	[[ "$output" == *"Function not implemented"* ]]
	[[ "$output" == *"zero=1"* && "$output" == *"cont=0"* ]]

	# Two conditions on the same argument are OR-ed (runc's behaviour).
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 1, "value": 18, "op": "SCMP_CMP_EQ"}, {"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]}]}'
	run_sh 'kill -0 $$; echo zero=$?; kill -CONT $$; echo cont=$?; kill -WINCH $$; echo winch=$?'
	[ "$status" -eq 0 ]
	[[ "$output" == *"zero=1"* && "$output" == *"cont=1"* && "$output" == *"winch=0"* ]]

	# SCMP_CMP_MASKED_EQ: odd signal numbers (TERM=15; CONT=18 is even).
	# pid 1 of a pid namespace ignores signals it has no handler for.
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 1, "value": 1, "valueTwo": 1, "op": "SCMP_CMP_MASKED_EQ"}]}]}'
	run_sh 'kill -TERM $$; echo term=$?; kill -CONT $$; echo cont=$?'
	[ "$status" -eq 0 ]
	[[ "$output" == *"term=1"* && "$output" == *"cont=0"* ]]
}

@test "seccomp: applies with noNewPrivileges false too" {
	# Then the filter goes in before capabilities are dropped (seccomp(2)
	# needs no_new_privs or CAP_SYS_ADMIN), as runc does.
	update_config '.process.noNewPrivileges = false'
	deny_mkdir SCMP_ACT_ERRNO 38
	run_sh 'mkdir /tmp/d; grep NoNewPrivs /proc/self/status'
	[ "$status" -eq 0 ]
	[[ "$output" == *"Function not implemented"* ]]
	[[ "$output" == *"NoNewPrivs:"*"0"* ]]
}

@test "seccomp: flags, architectures and unknown syscall names" {
	local flags
	runtime_ok features
	flags=$(jq -c '[(.linux.seccomp.supportedFlags // [])[] | select(. != "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")]' <<<"$output")
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"flags": '"$flags"', "syscalls": [{"names": ["no_such_syscall", "mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]}'
	[[ "$(uname -m)" == x86_64 ]] || update_config 'del(.linux.seccomp.architectures)'
	run_sh 'mkdir /tmp/d'
	[ "$status" -eq 1 ]
	[[ "$output" == *"Function not implemented"* ]]
}

# debug_flags EXPECTED: `--debug run` the bundle (its mkdir denied) and check
# the flags seccomp(2) was given, as runc logs them.
debug_flags() {
	runtime --debug run -b "$BUNDLE" "$CID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"can't create directory '/tmp/d': Operation not permitted"* ]]
	[[ "$output" == *"\"seccomp filter flags: $1\""* ]]
}

@test "seccomp: --debug logs the flags seccomp(2) is given; no flags field means SPEC_ALLOW, as in runc" {
	local spec_allow=0 nnp
	runtime_ok features
	if jq -e '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_SPEC_ALLOW")' <<<"$output" >/dev/null; then
		spec_allow=4
	fi
	deny_mkdir SCMP_ACT_ERRNO
	set_args sh -c 'mkdir /tmp/d'
	# Installed before ready or after start: the same line either way.
	for nnp in false true; do
		update_config ".process.noNewPrivileges = $nnp | del(.linux.seccomp.flags)"
		debug_flags "$spec_allow"
		update_config '.linux.seccomp.flags = []'
		debug_flags 0
		# SECCOMP_FILTER_FLAG_LOG is 2; TSYNC is accepted and not passed.
		update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_TSYNC"]'
		debug_flags 2
	done
	# An exec'd process is given the container's.
	update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_LOG"]'
	run_detached
	runtime --debug exec "$CID" true
	[ "$status" -eq 0 ]
	[[ "$output" == *'"seccomp filter flags: 2"'* ]]
}

@test "seccomp: an unknown action or operator fails create, naming the field" {
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_MAYBE"}]}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		[[ "$output" == *'linux.seccomp.syscalls[0].action: unknown action "SCMP_ACT_MAYBE"'* ]]
	fi
	assert_nothing_left "$CID"

	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 1, "value": 0, "op": "SCMP_CMP_ROUGHLY"}]}]}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		[[ "$output" == *'linux.seccomp.syscalls[0].args[0].op: unknown operator "SCMP_CMP_ROUGHLY"'* ]]
	fi
	assert_nothing_left "$CID"
}

@test "seccomp: the default profile denies mount, unshare and keyctl" {
	use_sysprobe
	local agent profile
	agent=$(build_test_helper seccompagent) || skip "cannot build tests/integration/seccompagent (needs go and libseccomp-dev)"
	profile=$("$agent" profile)
	# CAP_SYS_ADMIN, so that what stops these calls is the filter (made
	# for the default capabilities), not the missing capability.
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
	run_container sysprobe mount unshare keyctl
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'mount: ok\nunshare: ok\nkeyctl: ok')" ]

	seccomp "$profile"
	run_container sysprobe mount unshare keyctl
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'mount: EPERM\nunshare: EPERM\nkeyctl: EPERM')" ]

	# defaultErrnoRet replaces EPERM for what no rule lists.
	update_config '.linux.seccomp.defaultErrnoRet = 38'
	run_container sysprobe keyctl
	[ "$status" -eq 0 ]
	[ "$output" = "keyctl: ENOSYS" ]

	# The profile lets an ordinary shell session through.
	run_sh 'mkdir /tmp/d && echo hi > /tmp/d/f && cat /tmp/d/f && ls /tmp/d'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'hi\nf')" ]
}

@test "seccomp: notify hands the fd and the container state to the listener" {
	local agent sock="$BATS_TEST_TMPDIR/agent.sock" state="$BATS_TEST_TMPDIR/agent.state" flags='[]'
	agent=$(build_test_helper seccompagent) || skip "cannot build tests/integration/seccompagent (needs go and libseccomp-dev)"
	runtime_ok features
	if jq -e '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")' <<<"$output" >/dev/null; then
		flags='["SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"]'
	fi
	# The agent answers ENOSPC (28) to every notification.
	as_user "$agent" listen "$sock" "$state" 28 2>"$BATS_TEST_TMPDIR/agent.log" &
	retry 100 0.05 test -S "$sock"
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$sock"'", "listenerMetadata": "nbx-meta",
		"flags": '"$flags"', "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
	set_args sh -c 'mkdir /tmp/d; echo mkdir=$?; touch /tmp/f && echo touch-ok'
	runtime --debug run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"can't create directory '/tmp/d': No space left on device"* ]]
	# NEW_LISTENER (8), and WAIT_KILLABLE_RECV (32) when the kernel has it.
	if [ "$flags" = '[]' ]; then
		[[ "$output" == *'"seccomp filter flags: 8"'* ]]
	else
		[[ "$output" == *'"seccomp filter flags: 40"'* ]]
	fi
	[[ "$output" == *"mkdir=1"* && "$output" == *"touch-ok"* ]]
	[ ! -e "$BUNDLE/rootfs/tmp/d" ]

	echo "listener received: $(cat "$state")"
	jq -e --arg id "$CID" '.fds == ["seccompFd"] and .metadata == "nbx-meta" and .pid > 0
		and .state.id == $id and .state.status == "creating" and .state.pid == .pid
		and (.ociVersion | startswith("1."))' "$state"
	grep -q "mkdir" "$BATS_TEST_TMPDIR/agent.log"
}

@test "seccomp: notify without a listener fails create" {
	seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$BATS_TEST_TMPDIR/nobody.sock"'",
		"syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		[[ "$output" == *"failed to connect with seccomp agent at listenerPath $BATS_TEST_TMPDIR/nobody.sock"* ]]
	fi
	assert_nothing_left "$CID"
}

@test "seccomp: features reports every action, operator and flag" {
	requires nanobox
	runtime_ok features
	jq -e '.linux.seccomp.enabled' <<<"$output"
	jq -e '.linux.seccomp.actions | length == 9' <<<"$output"
	jq -e '.linux.seccomp.operators | length == 7' <<<"$output"
	jq -e '.linux.seccomp.knownFlags | length == 4' <<<"$output"
	jq -e '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_LOG")' <<<"$output"
	jq -e '.linux.seccomp.archs | length > 0' <<<"$output"
	jq -e '.annotations["io.github.seccomp.libseccomp.version"] | test("^2\\.")' <<<"$output"
}
