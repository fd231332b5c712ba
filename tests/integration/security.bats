#!/usr/bin/env bats
# Escape regression tests: each known container-breakout class, attempted
# from inside the container (or by the image the container runs), asserted
# to fail, and the host checked untouched. Rootful and rootless (ROOTLESS=1).
# The attackers are modes of tests/integration/sysprobe (static, copied
# into the rootfs).

load helpers
load gohelpers

setup() {
	setup_test
	use_sysprobe
	# A writable root: the attackers log to /tmp.
	update_config '.root.readonly = false'
	# A host directory the attacks aim at, with a marker file that only
	# the host has.
	HOSTDIR="$BATS_TEST_TMPDIR/host"
	MARKER="host-marker-$$"
	mkdir -p "$HOSTDIR"
	echo host-secret >"$HOSTDIR/$MARKER"
	give_to_user "$HOSTDIR"
	HOSTDIR_BEFORE=$(host_listing)
	RUNTIME_BEFORE=$(runtime_fingerprint)
}

teardown() {
	teardown_test
}

# host_listing: what $HOSTDIR holds (names, types, sizes, mtimes).
host_listing() {
	find "$HOSTDIR" -printf '%P %y %s %T@\n' | sort
}

# runtime_fingerprint: the runtime binary's hash, size, mtime and ctime.
runtime_fingerprint() {
	local bin
	bin=$(readlink -f "$RUNTIME")
	echo "$(sha256sum <"$bin" | cut -d' ' -f1) $(stat -c '%s %Y %Z' "$bin")"
}

# assert_host_untouched: $HOSTDIR as it was, nothing mounted on it, and the
# runtime binary unchanged.
assert_host_untouched() {
	local now
	now=$(host_listing)
	[ "$now" = "$HOSTDIR_BEFORE" ] || fail "host directory changed: was [$HOSTDIR_BEFORE], is [$now]"
	[ -z "$(host_mounts_under "$HOSTDIR")" ] || fail "mounted on the host: $(host_mounts_under "$HOSTDIR")"
	now=$(runtime_fingerprint)
	[ "$now" = "$RUNTIME_BEFORE" ] || fail "runtime binary changed: $RUNTIME_BEFORE -> $now"
	return 0
}

# attack_log: the attacker's log in the rootfs, printed; empty if none.
attack_log() {
	cat "$BUNDLE/rootfs/tmp/attack.log" 2>/dev/null
}

# assert_no_runtime_exe_written: the exe-attack log shows no write, and
# every runtime process the container saw ran from a memfd copy, never
# from the host binary.
assert_no_runtime_exe_written() {
	local log
	log=$(attack_log)
	echo "attacker's log:"
	echo "$log"
	grep -q '^done$' <<<"$log" || fail "the attacker did not finish"
	! grep -q '^WROTE' <<<"$log" || fail "the attacker wrote to a process's executable"
	return 0
}

# set_seccomp_default: linux.seccomp = Docker's default profile, as
# specconv.DefaultSeccompSpec gives it to presets and `spec` users.
set_seccomp_default() {
	local agent
	agent=$(build_test_helper seccompagent) || skip "cannot build tests/integration/seccompagent (needs go and libseccomp-dev)"
	update_config '.linux.seccomp = $s' "$BUNDLE" --argjson s "$("$agent" profile)"
}

# without_mount DEST...: drop the spec's mounts of those destinations, so
# the image's own directories are used.
without_mount() {
	local d
	for d in "$@"; do
		update_config 'del(.mounts[] | select(.destination == $d))' "$BUNDLE" --arg d "$d"
	done
}

# runtime_leaking DIR ARGS...: the runtime with DIR open on fds 3 to 10 and
# on fd 20, descriptors its caller leaked to it.
runtime_leaking() {
	local dir=$1 out="$BATS_TEST_TMPDIR/leak.out"
	shift
	status=0
	(
		exec 3<"$dir" 4<"$dir" 5<"$dir" 6<"$dir" 7<"$dir" 8<"$dir" 9<"$dir" 10<"$dir" 20<"$dir"
		exec timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@"
	) </dev/null >"$out" 2>&1 || status=$?
	output=$(cat "$out")
	echo "runtime $* (with $dir leaked on fds 3-10 and 20; status $status):"
	echo "$output"
}

# create_target ID ARGS...: create, not start, a second container ID running
# ARGS, in the pid namespace of the running container $CID (rootless, in its
# user namespace too, which owns that pid namespace), as in a pod that
# shares one: its init, the runtime waiting for start, is then a process
# the attacker in $CID can see. With LEAK_DIR set, the runtime's caller has
# that directory open (runtime_leaking); with HOST_PIDNS=1 both share the
# host's pid namespace instead; TARGET_PREP names a function run on the
# target's bundle ($BUNDLE) before create. Sets TARGET_PID (host pid) and
# TARGET_NSPID (as $CID sees it); $BUNDLE stays $CID's.
create_target() {
	local id=$1 attacker_bundle=$BUNDLE apid
	shift
	apid=$(container_pid "$CID")
	setup_bundle "$BATS_TEST_TMPDIR/target"
	update_config '.root.readonly = false'
	set_args "$@"
	if [[ "${HOST_PIDNS:-}" == 1 ]]; then
		use_host_pidns
	else
		update_config '(.linux.namespaces[] | select(.type == "pid")).path = $p' "$BUNDLE" --arg p "/proc/$apid/ns/pid"
	fi
	[[ -z "${TARGET_PREP:-}" ]] || "$TARGET_PREP"
	if is_rootless && [[ "${HOST_PIDNS:-}" != 1 ]]; then
		update_config '(.linux.namespaces[] | select(.type == "user")).path = $p | del(.linux.uidMappings, .linux.gidMappings)' \
			"$BUNDLE" --arg p "/proc/$apid/ns/user"
	fi
	if [[ -n "${LEAK_DIR:-}" ]]; then
		runtime_leaking "$LEAK_DIR" create -b "$BUNDLE" "$id"
	else
		runtime create -b "$BUNDLE" "$id"
	fi
	BUNDLE=$attacker_bundle
	[ "$status" -eq 0 ] || fail "create $id: $output"
	TARGET_PID=$(container_pid "$id")
	TARGET_NSPID=$(awk '/^NSpid:/ {print $NF}' "/proc/$TARGET_PID/status")
	echo "target $id: init $TARGET_PID on the host, $TARGET_NSPID in $CID"
}

# use_host_pidns: no pid namespace of the container's own.
use_host_pidns() {
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	if is_rootless; then
		# A new procfs needs a pid namespace of the container's own.
		update_config '(.mounts[] | select(.destination == "/proc")) |= {destination: "/proc", type: "bind", source: "/proc", options: ["rbind", "nosuid", "noexec", "nodev"]}'
	fi
}

# target_seccomp: a seccomp profile for the target (denies keyctl only).
target_seccomp() {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO"}]}'
}

# evil_script: /bin/evil in the rootfs, a script run by /proc/self/exe.
evil_script() {
	printf '#!/proc/self/exe\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 0755 "$BUNDLE/rootfs/bin/evil"
}

@test "security: CVE-2019-5736: init's /proc/PID/exe cannot be written from the container" {
	run_detached
	# A created container's init is the runtime waiting for start: the
	# classic target.
	create_target "$CID-t" sleep 1000
	runtime_ok exec "$CID" sysprobe exe-attack 0.5 /tmp/attack.log
	assert_no_runtime_exe_written
	if is_rootless; then
		# Dumpable, as runc's (an unprivileged runtime's exec into the
		# created container needs it; see the next test for one confined
		# at start): the link reads, its file cannot be written.
		attack_log | grep -Eq "^saw $TARGET_NSPID /"
		attack_log | grep -Eq "^(open-rw|write) $TARGET_NSPID: (ETXTBSY|EPERM|EACCES|EROFS)$"
	else
		# Not dumpable: not even its exe link can be read.
		attack_log | grep -Eq "^saw $TARGET_NSPID readlink: (EACCES|EPERM)$"
	fi

	# With CAP_SYS_PTRACE the link may open (rootful; rootless, init's
	# memory belongs to the host's user namespace and it stays out of
	# reach) and leads to a file that cannot be written: a sealed memfd
	# copy (EPERM), a read-only bind mount (EROFS), or a binary the
	# container's users may not write (EACCES), executing anyway (ETXTBSY).
	rm -f "$BUNDLE/rootfs/tmp/attack.log"
	runtime_ok exec --cap CAP_SYS_PTRACE "$CID" sysprobe exe-attack 0.5 /tmp/attack.log
	assert_no_runtime_exe_written
	attack_log | grep -Eq "^(open-rw|write) $TARGET_NSPID: (ETXTBSY|EPERM|EACCES|EROFS)$"
	is_rootless || attack_log | grep -Eq "^saw $TARGET_NSPID /"
	assert_host_untouched
}

@test "security: a created container confined at start keeps its init out of the container's reach" {
	run_detached
	# With a seccomp profile still to apply at start, init stays
	# non-dumpable until its program executes, rootless too: a process of
	# the container can neither ptrace it around the filter nor read its
	# exe link.
	TARGET_PREP=target_seccomp create_target "$CID-t" sleep 1000
	runtime_ok exec "$CID" sysprobe exe-attack 0.5 /tmp/attack.log
	assert_no_runtime_exe_written
	attack_log | grep -Eq "^saw $TARGET_NSPID readlink: (EACCES|EPERM)$"
	if attack_log | grep -Eq "^saw $TARGET_NSPID /"; then
		fail "the exe link of init $TARGET_NSPID was read"
	fi
	assert_host_untouched
}

@test "security: CVE-2019-5736: a '#!/proc/self/exe' entrypoint cannot write the runtime binary" {
	run_detached
	# The attacker watches from its container while the target's init
	# executes a script whose interpreter, /proc/self/exe, is whatever init
	# runs from.
	runtime_ok exec -d --cap CAP_SYS_PTRACE "$CID" sysprobe exe-attack 3 /tmp/attack.log
	retry 50 0.05 test -e "$BUNDLE/rootfs/tmp/attack.log"
	TARGET_PREP=evil_script create_target "$CID-t" /bin/evil
	# Either way (the kernel may refuse the interpreter), nothing is written.
	runtime start "$CID-t"
	retry 100 0.05 grep -q '^done$' "$BUNDLE/rootfs/tmp/attack.log"
	assert_no_runtime_exe_written
	assert_host_untouched
}

@test "security: CVE-2019-5736: the runtime's processes in exec are out of reach too" {
	evil_script
	run_detached
	runtime_ok exec -d --cap CAP_SYS_PTRACE "$CID" sysprobe exe-attack 4 /tmp/attack.log
	retry 50 0.05 test -e "$BUNDLE/rootfs/tmp/attack.log"
	local i
	for i in $(seq 10); do
		# The exec'd process is the runtime until it executes the program;
		# these three make it execute the runtime itself, inside.
		__runtime exec "$CID" /bin/evil >/dev/null 2>&1 </dev/null || true
		__runtime exec "$CID" /proc/self/exe >/dev/null 2>&1 </dev/null || true
		__runtime exec "$CID" true >/dev/null 2>&1 </dev/null || true
	done
	retry 100 0.1 grep -q '^done$' "$BUNDLE/rootfs/tmp/attack.log"
	assert_no_runtime_exe_written
	echo "processes seen: $(attack_log | grep -c '^saw ')"
	assert_host_untouched
}

@test "security: CVE-2024-21626: a process.cwd of /proc/self/fd/N never reaches the host" {
	local n
	for n in 3 4 5 6 7 8 9 10; do
		update_config '.process.cwd = $c' "$BUNDLE" --arg c "/proc/self/fd/$n"
		set_args sh -c 'ls -a . ..; readlink /proc/self/cwd'
		runtime_leaking "$HOSTDIR" run -b "$BUNDLE" "$CID-$n"
		# Refused, or a cwd inside the container.
		if [ "$status" -eq 0 ]; then
			! grep -q "$MARKER" <<<"$output" || fail "cwd /proc/self/fd/$n is the host directory"
		fi
		! grep -q "$MARKER" <<<"$output" || fail "the host directory leaked for fd $n"
	done
	assert_host_untouched
}

@test "security: CVE-2024-21626: exec --cwd /proc/self/fd/N never reaches the host" {
	run_detached
	local n
	for n in 3 4 5 6 7 8 9 10; do
		runtime_leaking "$HOSTDIR" exec --cwd "/proc/self/fd/$n" "$CID" sh -c 'ls -a . ..'
		! grep -q "$MARKER" <<<"$output" || fail "exec cwd /proc/self/fd/$n is the host directory"
	done
	# And what the process sees: 0-2 only, in init and in exec'd ones.
	runtime_leaking "$HOSTDIR" exec "$CID" sh -c 'ls /proc/1/fd; echo --; ls /proc/$$/fd; true'
	[ "$status" -eq 0 ]
	[ "$(tr '\n' ' ' <<<"$output")" = "0 1 2 -- 0 1 2 " ]
	assert_host_untouched
}

@test "security: CVE-2024-21626: descriptors leaked by the runtime's caller never reach init" {
	# A process with CAP_SYS_PTRACE in a container sharing the pid
	# namespace may read init's descriptors while it waits for start; none
	# of them may be one the runtime's caller had open.
	run_detached
	LEAK_DIR=$HOSTDIR create_target "$CID-t" sleep 1000
	runtime_ok exec --cap CAP_SYS_PTRACE "$CID" sysprobe fd-attack 0.3 /tmp/attack.log "$MARKER"
	echo "attacker's log:"
	attack_log
	attack_log | grep -q '^done$'
	! attack_log | grep -q '^LEAK' || fail "a host directory the caller had open is reachable from the container"
	assert_host_untouched
}

@test "security: CVE-2024-21626: descriptors leaked by exec's caller never reach the container" {
	run_detached
	runtime_ok exec -d --cap CAP_SYS_PTRACE "$CID" sysprobe fd-attack 3 /tmp/attack.log "$MARKER"
	retry 50 0.05 test -e "$BUNDLE/rootfs/tmp/attack.log"
	local i
	for i in $(seq 15); do
		runtime_leaking "$HOSTDIR" exec "$CID" true >/dev/null
	done
	retry 100 0.1 grep -q '^done$' "$BUNDLE/rootfs/tmp/attack.log"
	echo "attacker's log:"
	attack_log
	! attack_log | grep -q '^LEAK' || fail "a host directory exec's caller had open is reachable from the container"
	assert_host_untouched
}

@test "security: CVE-2021-30465: a mount destination that is a symlink out of the rootfs stays inside" {
	local src="$BATS_TEST_TMPDIR/src"
	mkdir -p "$src"
	echo from-src >"$src/file"
	give_to_user "$src"
	ln -s "$HOSTDIR" "$BUNDLE/rootfs/abs"
	ln -s ../../../../../../../../../../"$HOSTDIR" "$BUNDLE/rootfs/rel"
	ln -s / "$BUNDLE/rootfs/root-link"
	update_config '.mounts += [
		{destination: "/abs", type: "tmpfs", source: "tmpfs"},
		{destination: "/rel", type: "bind", source: $s, options: ["rbind"]},
		{destination: "/root-link/sub", type: "tmpfs", source: "tmpfs"}]' "$BUNDLE" --arg s "$src"
	set_args sh -c 'touch /abs/pwned /rel/pwned /root-link/sub/pwned; cat /rel/file'
	runtime run -b "$BUNDLE" "$CID"
	if [ "$status" -eq 0 ]; then
		[ "${lines[-1]}" = from-src ]
	fi
	assert_host_untouched
	[ ! -e /sub/pwned ]
}

@test "security: CVE-2021-30465: symlinks swapped during set-up never mount outside the rootfs" {
	local vol="$BATS_TEST_TMPDIR/vol" sp i ok=0 refused=0
	sp=$(build_test_helper sysprobe static)
	# The volume (shared with an attacker in another container) holds a
	# directory and a symlink out, swapped as fast as the kernel allows
	# while containers mount a tmpfs on the directory.
	mkdir -p "$vol/d"
	ln -s / "$vol/l"
	ln -s "$HOSTDIR" "$vol/h"
	mkdir -p "$vol/e"
	give_to_user "$vol"
	update_config '.mounts += [{destination: "/vol", type: "bind", source: $v, options: ["rbind"]},
		{destination: "/vol/d", type: "tmpfs", source: "tmpfs"},
		{destination: "/vol/e", type: "tmpfs", source: "tmpfs"}]' "$BUNDLE" --arg v "$vol"
	# From inside: is the host's marker visible under any mount point?
	update_config '.process.env += ["M=" + $m]' "$BUNDLE" --arg m "$HOSTDIR/$MARKER"
	set_args sh -c 'while read -r _ _ _ _ mp _; do [ -e "$mp$M" ] && echo "LEAK $mp"; done </proc/self/mountinfo; echo checked'
	as_user "$sp" swap "$vol/d" "$vol/l" 30 >"$BATS_TEST_TMPDIR/swap1.out" 2>&1 &
	local swapper1=$!
	as_user "$sp" swap "$vol/e" "$vol/h" 30 >"$BATS_TEST_TMPDIR/swap2.out" 2>&1 &
	local swapper2=$!
	for i in $(seq 25); do
		runtime run -b "$BUNDLE" "$CID-$i"
		! grep -q '^LEAK' <<<"$output" || fail "run $i: the host is visible inside: $output"
		if [ "$status" -eq 0 ]; then ok=$((ok + 1)); else refused=$((refused + 1)); fi
		runtime delete --force "$CID-$i"
	done
	kill "$swapper1" "$swapper2" 2>/dev/null
	wait "$swapper1" "$swapper2" 2>/dev/null || true
	echo "$ok runs completed, $refused refused; $(cat "$BATS_TEST_TMPDIR"/swap*.out)"
	# The symlinks still point where they did; nothing landed on the host.
	[ -z "$(host_mounts_under "$vol")" ]
	[ -z "$(host_mounts_under /sub)" ]
	assert_host_untouched
}

@test "security: CVE-2025-31133: masks hold when the rootfs's /dev/null is a symlink or a regular file" {
	local masked="" p core
	for p in /proc/keys /proc/timer_list /proc/kcore /proc/sched_debug /proc/latency_stats; do
		[ -e "$p" ] && masked+="$p "
	done
	[ -n "$masked" ] || skip "none of the default masked /proc files exists on this kernel"
	core=$(cat /proc/sys/kernel/core_pattern)
	# The image's own /dev, so that its /dev/null is the one used.
	without_mount /dev
	mkdir -p "$BUNDLE/rootfs/dev"
	set_args sh -c "for f in $masked; do stat -c '%n %F %t:%T %s' \$f; echo x > \$f; done; cat $masked | wc -c"

	# A symlink to a writable procfs file, and one out to a host file.
	for target in /proc/sys/kernel/core_pattern "$HOSTDIR/$MARKER"; do
		rm -rf "$BUNDLE/rootfs/dev/null"
		ln -s "$target" "$BUNDLE/rootfs/dev/null"
		runtime run -b "$BUNDLE" "$CID"
		if [ "$status" -eq 0 ]; then
			for p in $masked; do
				grep -q "^$p character special file 1:3 0$" <<<"$output" || fail "$p is not masked with /dev/null"
			done
			[ "${lines[-1]}" = 0 ]
		fi
		runtime delete --force "$CID"
	done

	# A regular file: the mask must not expose it, nor write to it.
	rm -f "$BUNDLE/rootfs/dev/null"
	echo image-secret >"$BUNDLE/rootfs/dev/null"
	runtime run -b "$BUNDLE" "$CID"
	if [ "$status" -eq 0 ]; then
		for p in $masked; do
			grep -q "^$p character special file 1:3 0$" <<<"$output" || fail "$p is not masked with /dev/null"
		done
		[ "${lines[-1]}" = 0 ]
	fi
	[ "$(cat "$BUNDLE/rootfs/dev/null")" = image-secret ]
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$core" ]
	assert_host_untouched
}

@test "security: CVE-2026-41579: a rootfs whose /dev is a symlink out of the rootfs" {
	local link
	for link in "$HOSTDIR" ../../../../../../../../../../"$HOSTDIR"; do
		for mountdev in yes no; do
			setup_bundle "$BATS_TEST_TMPDIR/bundle-$mountdev-${#link}"
			update_config '.root.readonly = false'
			[ $mountdev = yes ] || without_mount /dev /dev/pts /dev/shm /dev/mqueue
			set_args sh -c 'echo x >/dev/null && head -c 4 /dev/zero | wc -c'
			rm -rf "$BUNDLE/rootfs/dev"
			ln -s "$link" "$BUNDLE/rootfs/dev"
			runtime run -b "$BUNDLE" "$CID"
			if [ "$status" -eq 0 ]; then
				[ "$output" = 4 ]
			fi
			runtime delete --force "$CID"
			assert_host_untouched
		done
	done
}

@test "security: CVE-2026-41579: a rootfs whose /dev/ptmx or /dev/pts/ptmx is a symlink out of the rootfs" {
	requires recvtty
	local sock="$BATS_TEST_TMPDIR/console.sock" variant
	# devpts mounted over the image's /dev/pts or not; the image's
	# /dev/ptmx a symlink out too, or left to the runtime.
	for variant in devpts no-devpts no-devpts-pts-only; do
		setup_bundle "$BATS_TEST_TMPDIR/bundle-$variant"
		update_config '.root.readonly = false | .process.terminal = true'
		without_mount /dev
		[ $variant = devpts ] || without_mount /dev/pts
		mkdir -p "$BUNDLE/rootfs/dev/pts"
		ln -sf "$HOSTDIR/$MARKER" "$BUNDLE/rootfs/dev/pts/ptmx"
		if [ $variant != no-devpts-pts-only ]; then
			ln -sf "$HOSTDIR/$MARKER" "$BUNDLE/rootfs/dev/ptmx"
			ln -sf "$HOSTDIR/$MARKER" "$BUNDLE/rootfs/dev/console"
		fi
		set_args sh -c 'tty; echo pwned >/dev/ptmx; echo pwned >/dev/console; echo end'
		rm -f "$sock"
		"$RECVTTY" -mode 0777 -o "$BATS_TEST_TMPDIR/tty.out" "$sock" </dev/null >/dev/null 2>&1 3>&- &
		RECVTTY_PID=$!
		retry 100 0.02 test -S "$sock"
		runtime create --console-socket "$sock" -b "$BUNDLE" "$CID"
		if [ "$status" -eq 0 ]; then
			runtime_ok start "$CID"
			retry 200 0.05 eval '! kill -0 $RECVTTY_PID 2>/dev/null'
			echo "terminal: $(cat "$BATS_TEST_TMPDIR/tty.out")"
		fi
		kill -9 "$RECVTTY_PID" 2>/dev/null || true
		wait "$RECVTTY_PID" 2>/dev/null || true
		runtime delete --force "$CID"
		assert_host_untouched
	done
}

@test "security: CVE-2019-19921: a /proc that is a symlink, or not procfs, is refused" {
	local fake="$BATS_TEST_TMPDIR/fakeproc"
	mkdir -p "$fake/self" "$fake/sys/kernel"
	echo 0 >"$fake/self/oom_score_adj"
	give_to_user "$fake"
	set_args true

	# /proc a symlink out of the rootfs, or to another directory inside.
	for link in "$HOSTDIR" /sys; do
		rm -rf "$BUNDLE/rootfs/proc"
		ln -s "$link" "$BUNDLE/rootfs/proc"
		runtime run -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ] || fail "a /proc symlinked to $link was accepted"
		[[ "$output" == *"/proc"* ]]
		assert_nothing_left "$CID"
	done
	rm -f "$BUNDLE/rootfs/proc"
	mkdir "$BUNDLE/rootfs/proc"

	# Something else mounted on /proc, over or instead of procfs.
	local cfg
	cfg=$(cat "$BUNDLE/config.json")
	update_config '.mounts += [{destination: "/proc", type: "bind", source: $f, options: ["rbind"]}]' "$BUNDLE" --arg f "$fake"
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
	echo "$cfg" >"$BUNDLE/config.json"
	update_config '(.mounts[] | select(.destination == "/proc")) |= {destination: "/proc", type: "tmpfs", source: "tmpfs"}'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"

	# No procfs at all, and the image's /proc fakes the files the runtime
	# writes: it must notice, not write to the fake.
	echo "$cfg" >"$BUNDLE/config.json"
	without_mount /proc
	cp -a "$fake/." "$BUNDLE/rootfs/proc/"
	echo 5 >"$BUNDLE/rootfs/proc/sys/kernel/shmmax"
	update_config '.process.oomScoreAdj = 500'
	runtime run -b "$BUNDLE" "$CID"
	# Refused ("not on procfs"), or written to the real procfs before the
	# mounts: never to the image's file.
	[ "$(cat "$BUNDLE/rootfs/proc/self/oom_score_adj")" = 0 ]
	runtime delete --force "$CID"
	# A sysctl goes to the kernel (the container's ipc namespace), never to
	# the image's file.
	update_config 'del(.process.oomScoreAdj) | .linux.sysctl = {"kernel.shmmax": "123456"}'
	local shmmax
	shmmax=$(cat /proc/sys/kernel/shmmax)
	runtime run -b "$BUNDLE" "$CID"
	[ "$(cat "$BUNDLE/rootfs/proc/sys/kernel/shmmax")" = 5 ]
	[ "$(cat /proc/sys/kernel/shmmax)" = "$shmmax" ]
	assert_host_untouched
}

@test "security: the default spec denies writes to /proc/sysrq-trigger, /proc/sys and /sys" {
	local core thp
	core=$(cat /proc/sys/kernel/core_pattern)
	thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
	# Each write puts back the value already there, so a write that got
	# through would still change nothing; it must fail all the same.
	set_args sh -c '
		w() { if (printf "%s\n" "$2" >"$1") 2>/dev/null; then echo "WROTE $1"; else echo "denied $1"; fi; }
		w /proc/sysrq-trigger h
		w /proc/sys/kernel/core_pattern "$(cat /proc/sys/kernel/core_pattern)"
		w /proc/sys/kernel/hostname "$(hostname)"
		w /proc/sys/vm/drop_caches 1
		w /sys/kernel/mm/transparent_hugepage/enabled "$(sed "s/.*\[\(.*\)\].*/\1/" /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
		w /sys/fs/cgroup/cgroup.procs $$
		mkdir /sys/fs/cgroup/nbx-escape 2>/dev/null && echo "WROTE mkdir cgroup" || echo "denied mkdir cgroup"
		true'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	! grep -q '^WROTE' <<<"$output" || fail "a write got through: $(grep '^WROTE' <<<"$output")"
	[ "$(grep -c '^denied' <<<"$output")" -eq 7 ]
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$core" ]
	[ "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)" = "$thp" ]
	# The masked files read as empty.
	set_args sh -c 'for f in /proc/keys /proc/timer_list /proc/kcore /proc/sched_debug /proc/acpi /proc/scsi /sys/firmware; do
		if [ -d $f ]; then echo "$f $(ls -A $f | wc -l)"; elif [ -e $f ]; then echo "$f $(head -c 64 $f | wc -c)"; fi; done'
	runtime run -b "$BUNDLE" "$CID-2"
	[ "$status" -eq 0 ]
	! grep -vq ' 0$' <<<"$output" || fail "a masked path shows content"
}

@test "security: a seccomp errno rule and a kill rule hold for init and for exec'd processes" {
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [
		{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 38},
		{names: ["sethostname"], action: "SCMP_ACT_KILL"}]}'
	local cmd='mkdir /tmp/d; echo mkdir=$?; hostname evil; echo hostname=$?'
	set_args sh -c "$cmd; sleep 1000"
	runtime_ok run -d -b "$BUNDLE" "$CID"
	retry 50 0.1 grep -q '^hostname=' "$RUNTIME_OUTFILE"
	output=$(cat "$RUNTIME_OUTFILE")
	[[ "$output" == *"can't create directory '/tmp/d': Function not implemented"* ]]
	grep -qx 'mkdir=1' <<<"$output"
	grep -qx 'hostname=159' <<<"$output" # 128 + SIGSYS
	runtime exec "$CID" sh -c "$cmd; hostname"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Function not implemented"* ]]
	grep -qx 'hostname=159' <<<"$output"
	[ "${lines[-1]}" != evil ]
	[ ! -e "$BUNDLE/rootfs/tmp/d" ]
}

@test "security: the default seccomp profile denies mount, unshare and keyctl; ptrace of the runtime fails" {
	set_seccomp_default
	# CAP_SYS_ADMIN, so that what stops these calls is the filter.
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
	local want
	want=$(printf 'mount: EPERM\nunshare: EPERM\nkeyctl: EPERM')
	set_args sysprobe mount unshare keyctl
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]

	# In exec'd processes too; and the runtime itself, a created
	# container's init waiting for start, cannot be traced.
	set_args sleep 1000
	runtime_ok run -d -b "$BUNDLE" "$CID-2"
	runtime exec "$CID-2" sysprobe mount unshare keyctl
	[ "$output" = "$want" ]
	local attacker=$CID prep=
	CID=$CID-2
	# Rootless, an init with nothing left to confine it at start is
	# dumpable, as runc's (exec into it needs that), and so traceable by
	# a process with its uid and no fewer capabilities: what that process
	# gains is what the target's program gives it once started. One
	# confined at start is out of reach in both modes.
	is_rootless && prep=target_seccomp
	TARGET_PREP=$prep create_target "$CID-t" sleep 1000
	runtime exec "$CID" sysprobe ptrace "$TARGET_NSPID"
	[ "$output" = "ptrace: EPERM" ]
	CID=$attacker
}

@test "security: the runtime cannot be traced from a container sharing the host's pid namespace" {
	use_host_pidns
	run_detached
	# Another container's init, the runtime waiting for start, seen with its
	# host pid.
	HOST_PIDNS=1 create_target "$CID-t" sleep 1000
	runtime exec "$CID" sysprobe ptrace "$TARGET_PID"
	[ "$output" = "ptrace: EPERM" ]
	# The runtime's `exec`, in the foreground on the host.
	runtime_bg exec "$CID" sleep 1000
	retry 50 0.1 eval '[ -n "$(pgrep -P $RUNTIME_BG_PID)" ]'
	runtime exec "$CID" sysprobe ptrace "$RUNTIME_BG_PID"
	[ "$output" = "ptrace: EPERM" ]
	kill -TERM "$RUNTIME_BG_PID"
	wait_bg
	# And `run` in the foreground.
	set_args sleep 1000
	runtime_bg run -b "$BUNDLE" "$CID-fg"
	# Until the container runs, not just until init is forked: a `run`
	# still creating it when teardown SIGKILLs it leaves its cgroups.
	retry 100 0.1 eval '[ "$(__runtime state "$CID-fg" 2>/dev/null | jq -r .status)" = running ]'
	runtime exec "$CID" sysprobe ptrace "$RUNTIME_BG_PID"
	[ "$output" = "ptrace: EPERM" ]
	runtime_ok kill "$CID-fg" KILL
	wait_bg
	[ ! -e "$ROOT/$CID-fg" ] || fail "state of $CID-fg left"
	[ -z "$(find /sys/fs/cgroup -maxdepth 2 -name "$CID-fg")" ] || fail "cgroups left: $(find /sys/fs/cgroup -maxdepth 2 -name "$CID-fg")"
}

@test "security: init and exec'd processes lead sessions of their own, away from the caller's terminal" {
	command -v script >/dev/null || skip "needs script(1) (bsdutils) for a terminal"
	# As runc's nsexec does (setsid for init and every exec'd process): a
	# process left in the caller's session could write to the caller's
	# terminal and push input into it (TIOCSTI on /dev/tty, run by the
	# caller's shell later), and a signal to the caller's process group
	# (timeout(1), ^C in a script) would reach it. /proc/self/stat's
	# fields 1, 5 and 6 (pid, process group, session) are the same number
	# in a session leader; 0 for a group or session outside the container.
	local probe='{ echo x >/dev/tty; } 2>/dev/null && echo TTY-REACHED; cut -d" " -f1,5,6 /proc/self/stat'
	local cmd out
	set_args sh -c "$probe"
	# script(1) runs its command with $SHELL: /bin/sh, so %q's quoting
	# must be plain (no bash $'...' forms: the strings have no newlines).
	cmd=$(printf '%q ' "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID")
	out=$(SHELL=/bin/sh script -q -e -c "$cmd" /dev/null </dev/null | tr -d '\r')
	echo "run: $out"
	[[ "$out" == "1 1 1" ]] || fail "init is in the caller's session or reached its terminal: $out"

	run_detached
	cmd=$(printf '%q ' "${AS_USER[@]}" "$RUNTIME" --root "$ROOT" exec "$CID" sh -c "$probe")
	out=$(SHELL=/bin/sh script -q -e -c "$cmd" /dev/null </dev/null | tr -d '\r')
	echo "exec: $out"
	[[ "$out" =~ ^([0-9]+)\ ([0-9]+)\ ([0-9]+)$ && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" && ${BASH_REMATCH[1]} == "${BASH_REMATCH[3]}" ]] ||
		fail "the exec'd process is in the caller's session or reached its terminal: $out"
	local pid
	pid=$(cat "$BATS_TEST_TMPDIR/$CID.pid")
	[[ "$(cut -d' ' -f5,6 "/proc/$pid/stat")" == "$pid $pid" ]] || fail "detached init: $(cat "/proc/$pid/stat")"

	# A signal to the group that ran `run -d` does not reach the container.
	runtime_ok delete --force "$CID"
	set_args sleep 1000
	timeout -s TERM 2 "${AS_USER[@]}" sh -c "$(printf '%q ' "$RUNTIME" --root "$ROOT" run -d -b "$BUNDLE" "$CID") >/dev/null 2>&1; sleep 10" </dev/null || true
	[[ "$(container_status "$CID")" == running ]] || fail "the caller's group signal reached init: $(container_status "$CID")"
}
