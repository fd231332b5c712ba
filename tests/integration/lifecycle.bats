#!/usr/bin/env bats
# create / start / state / kill / delete / run: the OCI lifecycle.
# Every test here runs rootful and, with ROOTLESS=1, as an unprivileged user.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "create, start: created -> running -> stopped, delete leaves nothing" {
	set_args sleep 1000
	runtime create -b "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" "$CID"
	[ "$status" -eq 0 ]
	testcontainer "$CID" created

	# The pid file holds the init pid, decimal, with no trailing newline.
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	[[ "$pid" =~ ^[0-9]+$ ]]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/pid")" -eq "${#pid}" ]
	[ "$pid" = "$(container_pid "$CID")" ]
	kill -0 "$pid"
	# create returned; init is waiting for start, not yet the user program.
	! grep -qx sleep "/proc/$pid/comm"

	runtime start "$CID"
	[ "$status" -eq 0 ]
	testcontainer "$CID" running
	# start execs the user program in place: same pid.
	[ "$pid" = "$(container_pid "$CID")" ]
	retry 50 0.05 grep -qx sleep "/proc/$pid/comm"

	runtime kill "$CID" KILL
	[ "$status" -eq 0 ]
	wait_for_status "$CID" stopped

	runtime delete "$CID"
	[ "$status" -eq 0 ]
	runtime state "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}

@test "create: the container's output appears only after start, on create's stdio" {
	set_cmd 'echo hello from the container'
	runtime_ok create -b "$BUNDLE" "$CID"
	out=$RUNTIME_OUTFILE
	[ ! -s "$out" ]
	runtime_ok start "$CID"
	wait_for_status "$CID" stopped
	retry 20 0.05 grep -q 'hello from the container' "$out"
	runtime_ok delete "$CID"
}

@test "create: a relative --bundle and a relative --pid-file are resolved against the cwd" {
	set_args sleep 1000
	cd "$BATS_TEST_TMPDIR"
	runtime_ok create -b bundle --pid-file rel.pid "$CID"
	[ -s "$BATS_TEST_TMPDIR/rel.pid" ]
	runtime_ok state "$CID"
	[ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
}

@test "create: --bundle defaults to the current directory" {
	set_args sleep 1000
	cd "$BUNDLE"
	runtime_ok create "$CID"
	runtime_ok state "$CID"
	[ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
}

@test "run: foreground run prints the output and exits with the program's status" {
	run_sh 'echo out; echo err >&2; exit 0'
	[ "$status" -eq 0 ]
	[[ "$output" == *out* && "$output" == *err* ]]

	run_sh 'exit 3'
	[ "$status" -eq 3 ]
}

@test "run: without --keep the container is deleted after it exits" {
	run_sh 'true'
	[ "$status" -eq 0 ]
	runtime state "$CID"
	[ "$status" -ne 0 ]
	runtime list -q
	[ -z "$output" ]
	assert_nothing_left "$CID"
}

@test "run --keep: the stopped container stays until delete" {
	set_cmd 'exit 5'
	runtime run --keep -b "$BUNDLE" "$CID"
	[ "$status" -eq 5 ]
	testcontainer "$CID" stopped
	runtime_ok delete "$CID"
	runtime state "$CID"
	[ "$status" -ne 0 ]
}

@test "run: a program killed by signal N makes run exit 128+N" {
	# Without a pid namespace the shell is not a namespace init, so its own
	# SIGTERM kills it (an init ignores signals it has no handler for). A
	# new procfs needs a new pid namespace when rootless: bind the host's.
	update_config 'del(.linux.namespaces[] | select(.type == "pid"))
		| (.mounts[] | select(.destination == "/proc")) |=
			{destination: "/proc", type: "bind", source: "/proc", options: ["rbind"]}
		| .linux.maskedPaths = [] | .linux.readonlyPaths = []'
	run_sh 'kill -TERM $$; sleep 10'
	[ "$status" -eq 143 ]

	CID=$CID-kill
	set_args sleep 1000
	runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	runtime_ok kill "$CID" KILL
	wait_bg
	[ "$status" -eq 137 ]
}

@test "run: foreground run forwards signals to the container" {
	set_cmd 'trap "echo got TERM; exit 42" TERM; echo ready; while :; do sleep 0.05; done'
	runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	retry 100 0.05 grep -q ready "$RUNTIME_BG_OUT"
	kill -TERM "$RUNTIME_BG_PID"
	wait_bg
	[ "$status" -eq 42 ]
	[[ "$output" == *"got TERM"* ]]
}

@test "run: every catchable signal but the runtime's own is forwarded; SIGPIPE and SIGWINCH are not, and do not kill the runtime" {
	# 1 HUP, 3 QUIT, 6 ABRT, 10 USR1, 12 USR2, 14 ALRM, 18 CONT, 34 RTMIN,
	# 37 RTMIN+3, 64 RTMAX; 13 PIPE and 28 WINCH are trapped to show that
	# they do not arrive.
	set_cmd 'for s in 1 3 6 10 12 13 14 18 28 34 37 64; do trap "echo got $s" $s; done
		trap "echo got TERM; exit 42" TERM; echo ready; while :; do sleep 0.05; done'
	runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	retry 100 0.05 grep -q ready "$RUNTIME_BG_OUT"
	local s
	for s in 1 3 6 10 12 14 18 34 37 64 13 28; do
		kill -"$s" "$RUNTIME_BG_PID" || fail "the runtime died before signal $s"
		if [[ $s != 13 && $s != 28 ]]; then
			retry 100 0.05 grep -qx "got $s" "$RUNTIME_BG_OUT" || fail "signal $s was not forwarded"
		fi
	done
	kill -TERM "$RUNTIME_BG_PID"
	wait_bg
	[ "$status" -eq 42 ] || fail "run exited $status, want 42: $output"
	[[ "$output" != *"got 13"* && "$output" != *"got 28"* ]] || fail "SIGPIPE or SIGWINCH was forwarded: $output"
}

# advised_vmas PID: how many of PID's mappings are advised MADV_HUGEPAGE
# (VmFlags "hg").
advised_vmas() {
	grep -c '^VmFlags:.* hg' "/proc/$1/smaps" || true
}

@test "huge pages: only NANOBOX_THP=1 makes the runtime's heap ask for them, never a container's init; GODEBUG=disablethp=1 undoes it" {
	skip_if_runc
	# MADV_HUGEPAGE marks the mapping ("hg") in every THP mode; only a
	# kernel without THP refuses it.
	[[ -d /sys/kernel/mm/transparent_hugepage ]] ||
		skip "this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage)"
	# A created init waits for start in Go code, holding its heap. Even
	# under a runtime that asks, it has no huge pages: its environment is
	# the runtime's own making (libbox.Config.InitHugePages is off in the
	# OCI face), with GODEBUG=disablethp=1.
	NANOBOX_THP=1 create_sleeping "$CID-created"
	local init
	init=$(cat "$BATS_TEST_TMPDIR/$CID-created.pid")
	tr '\0' '\n' <"/proc/$init/environ" | grep -qx 'GODEBUG=.*disablethp=1.*' ||
		fail "the created init's GODEBUG has no disablethp=1: $(tr '\0' ' ' <"/proc/$init/environ")"
	! tr '\0' '\n' <"/proc/$init/environ" | grep -q '^NANOBOX_THP=' ||
		fail "the created init inherited NANOBOX_THP"
	[ "$(advised_vmas "$init")" -eq 0 ] || fail "the created init has huge-page-advised mappings"

	set_args sleep 1000
	runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	[ "$(advised_vmas "$RUNTIME_BG_PID")" -eq 0 ] || fail "the runtime's heap is advised MADV_HUGEPAGE without NANOBOX_THP=1"
	runtime_ok kill "$CID" KILL
	wait_bg

	NANOBOX_THP=1 runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	[ "$(advised_vmas "$RUNTIME_BG_PID")" -ge 1 ] || fail "NANOBOX_THP=1: the runtime's heap is not advised MADV_HUGEPAGE"
	runtime_ok kill "$CID" KILL
	wait_bg

	NANOBOX_THP=1 GODEBUG=disablethp=1 runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	[ "$(advised_vmas "$RUNTIME_BG_PID")" -eq 0 ] || fail "GODEBUG=disablethp=1 left huge-page-advised mappings"
	runtime_ok kill "$CID" KILL
	wait_bg
	runtime_ok delete -f "$CID-created"
}

# image_prefaulted PID: "yes" when the first code mapping of a file (the
# binary's) is resident in full and its first writable file mapping (the
# initialised data) is the process's own in full; else what it found.
# Faults alone leave both partly untouched (the data's COW pages are the
# ones written); nsenter/thp.c's MADV_POPULATE_READ/WRITE fill them.
image_prefaulted() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {
			m = ""
			if (NF >= 6 && $6 !~ /^\[/) {
				if ($2 == "r-xp" && !x++) m = "x"
				else if ($2 == "rw-p" && !w++) m = "w"
			}
		}
		m == "x" && $1 == "Size:" {xs = $2}
		m == "x" && $1 == "Rss:" {xr = $2}
		m == "w" && $1 == "Size:" {ws = $2}
		m == "w" && $1 == "Anonymous:" {wa = $2}
		END {
			if (xs > 0 && xs == xr && ws > 0 && ws == wa) print "yes"
			else print "no: code " xr "/" xs " kB resident, data " wa "/" ws " kB written"
		}' "/proc/$1/smaps"
}

@test "prefaulted image: NANOBOX_PREFAULT=1 maps the code and writes the data of the runtime and of a created init when Go starts; =0 does not" {
	skip_if_runc
	# MADV_POPULATE_READ/WRITE came with Linux 5.14; older kernels refuse
	# them and the binary then takes its faults as before.
	local v
	v=$(uname -r)
	v=${v%%-*}
	awk -v v="$v" 'BEGIN {split(v, a, "."); exit !(a[1] > 5 || (a[1] == 5 && a[2] >= 14))}' ||
		skip "kernel $v has no MADV_POPULATE_READ/WRITE (5.14)"
	# Without the variable each process prefaults where a page fault is
	# dear (nsenter/thp.c times one); the variable decides for the runtime
	# and, passed on, for the init it starts.
	local init got p
	for p in 1 0; do
		NANOBOX_PREFAULT=$p create_sleeping "$CID-created"
		init=$(cat "$BATS_TEST_TMPDIR/$CID-created.pid")
		got=$(image_prefaulted "$init")
		if [[ $p = 1 ]]; then
			[ "$got" = yes ] || fail "NANOBOX_PREFAULT=1: the created init's image: $got"
		else
			[ "$got" != yes ] || fail "NANOBOX_PREFAULT=0: the created init's image is prefaulted"
		fi

		set_args sleep 1000
		NANOBOX_PREFAULT=$p runtime_bg run -b "$BUNDLE" "$CID"
		wait_for_status "$CID" running
		got=$(image_prefaulted "$RUNTIME_BG_PID")
		if [[ $p = 1 ]]; then
			[ "$got" = yes ] || fail "NANOBOX_PREFAULT=1: the runtime's image: $got"
		else
			[ "$got" != yes ] || fail "NANOBOX_PREFAULT=0: the runtime's image is prefaulted"
		fi
		runtime_ok kill "$CID" KILL
		wait_bg
		runtime_ok delete -f "$CID-created"
	done
}

# slack_threads PID NS: how many of PID's threads sleep with timer slack NS.
slack_threads() {
	local t n=0
	for t in /proc/"$1"/task/*; do
		[[ "$(cat "/proc/${t##*/}/timerslack_ns" 2>/dev/null)" != "$2" ]] || n=$((n + 1))
	done
	echo "$n"
}

@test "timer slack: the Go runtime's sysmon alone sleeps with 1 ms; the container's processes keep the caller's" {
	skip_if_runc
	local mine init
	mine=$(cat /proc/self/timerslack_ns)
	[[ "$mine" != 1000000 ]] || skip "this shell's own timer slack is already 1 ms"

	create_sleeping "$CID-created"
	init=$(cat "$BATS_TEST_TMPDIR/$CID-created.pid")
	[ "$(slack_threads "$init" 1000000)" -eq 1 ] || fail "a created init has $(slack_threads "$init" 1000000) threads with 1 ms slack, not 1"
	runtime_ok delete -f "$CID-created"

	set_cmd 'cat /proc/self/timerslack_ns'
	runtime_ok run -b "$BUNDLE" "$CID"
	[ "$output" = "$mine" ] || fail "the container's program has slack $output, the caller $mine"
	runtime_ok delete -f "$CID"

	set_args sleep 1000
	runtime_bg run -b "$BUNDLE" "$CID"
	wait_for_status "$CID" running
	[ "$(slack_threads "$RUNTIME_BG_PID" 1000000)" -eq 1 ] || fail "the runtime has $(slack_threads "$RUNTIME_BG_PID" 1000000) threads with 1 ms slack, not 1"
	runtime exec "$CID" cat /proc/self/timerslack_ns
	[ "$status" -eq 0 ] && [ "$output" = "$mine" ] || fail "an exec'd process has slack $output (status $status), the caller $mine"
	runtime_ok kill "$CID" KILL
	wait_bg
}

@test "run -d: returns while the container runs; init is the pid in the pid file" {
	run_detached
	testcontainer "$CID" running
	pid=$(cat "$BATS_TEST_TMPDIR/$CID.pid")
	[ "$pid" = "$(container_pid "$CID")" ]
	retry 50 0.05 grep -qx sleep "/proc/$pid/comm"
	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime_ok delete "$CID"
	assert_nothing_left "$CID"
}

@test "state: a container whose program exited is stopped, with pid 0" {
	set_cmd 'true'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime_ok state "$CID"
	[ "$(jq -r .pid <<<"$output")" = 0 ]
}

@test "delete: a created container that never started is killed and removed" {
	create_sleeping
	pid=$(cat "$BATS_TEST_TMPDIR/$CID.pid")
	runtime_ok delete --force "$CID"
	wait_pid_gone "$pid"
	assert_nothing_left "$CID"
}

@test "delete: a created container can be deleted without --force" {
	# runc (and so nanobox) treat created as not running for delete.
	create_sleeping
	pid=$(cat "$BATS_TEST_TMPDIR/$CID.pid")
	runtime delete "$CID"
	[ "$status" -eq 0 ]
	wait_pid_gone "$pid"
	assert_nothing_left "$CID"
}

@test "two containers from two bundles run side by side" {
	run_detached "$CID-a"
	B1=$BUNDLE
	setup_bundle "$BATS_TEST_TMPDIR/bundle2"
	run_detached "$CID-b"
	runtime_ok list -q
	[[ "$output" == *"$CID-a"* && "$output" == *"$CID-b"* ]]
	runtime_ok delete --force "$CID-a"
	testcontainer "$CID-b" running
	runtime_ok delete --force "$CID-b"
}

@test "create --pid-file: a temp file left by a killed run does not stop the write" {
	pd="$BATS_TEST_TMPDIR/pids"
	mkdir "$pd"
	give_to_user "$pd"
	# What the fixed temp name of an older nanobox-runc left behind.
	as_user touch "$pd/.ctr.pid.tmp"
	set_args sleep 1000
	runtime_ok create -b "$BUNDLE" --pid-file "$pd/ctr.pid" "$CID"
	[ "$(cat "$pd/ctr.pid")" = "$(container_pid "$CID")" ]
	[ "$(stat -c %a "$pd/ctr.pid")" = 644 ]
	# Nothing of its own is left beside it.
	[ "$(ls -A "$pd" | sort | tr '\n' ' ')" = ".ctr.pid.tmp ctr.pid " ]
}
