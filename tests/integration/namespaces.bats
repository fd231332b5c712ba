#!/usr/bin/env bats
# linux.namespaces: new ones, shared ones, and joining existing ones by path.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
	if [[ -n "${HOLDER:-}" ]]; then
		kill -9 "$HOLDER" 2>/dev/null
		wait "$HOLDER" 2>/dev/null
	fi
	return 0
}

# container_ns TYPES...: run the bundle and print "type id" for each
# namespace type as the container sees itself.
container_ns() {
	local snippet="" t
	for t in "$@"; do
		snippet+="echo $t \$(readlink /proc/self/ns/$t); "
	done
	run_sh "$snippet"
	[ "$status" -eq 0 ]
}

ns_of() {
	awk -v t="$1" '$1 == t {print $2}' <<<"$output"
}

@test "namespaces: each configured namespace is new" {
	types=(mnt pid ipc uts)
	is_rootless && types+=(user) || types+=(net)
	container_ns "${types[@]}"
	for t in "${types[@]}"; do
		[ -n "$(ns_of "$t")" ]
		[ "$(ns_of "$t")" != "$(readlink /proc/self/ns/$t)" ] || fail "$t namespace is the host's"
	done
}

@test "namespaces: cgroup namespace when asked for" {
	update_config '.linux.namespaces += [{"type": "cgroup"}]'
	container_ns cgroup
	[ "$(ns_of cgroup)" != "$(readlink /proc/self/ns/cgroup)" ]
}

@test "namespaces: a type left out is shared with the host" {
	update_config 'del(.linux.namespaces[] | select(.type == "network" or .type == "uts")) | del(.hostname)'
	container_ns net uts
	[ "$(ns_of net)" = "$(readlink /proc/self/ns/net)" ]
	[ "$(ns_of uts)" = "$(readlink /proc/self/ns/uts)" ]
}

@test "namespaces: the host ipc namespace can be shared" {
	# A new user namespace cannot mount mqueue for an ipc namespace it does
	# not own.
	requires root
	update_config 'del(.linux.namespaces[] | select(.type == "ipc"))'
	container_ns ipc
	[ "$(ns_of ipc)" = "$(readlink /proc/self/ns/ipc)" ]
}

@test "namespaces: a new network namespace has only loopback" {
	requires root
	run_container cat /proc/net/dev
	[ "$status" -eq 0 ]
	# Two header lines, then lo only.
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[2]}" == *lo:* ]]
}

@test "namespaces: the container is pid 1 in a new pid namespace" {
	run_sh 'echo $$; ps -o pid,comm | wc -l'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1 ]
}

@test "namespaces: hostname needs a uts namespace" {
	update_config 'del(.linux.namespaces[] | select(.type == "uts")) | .hostname = "nope"'
	run_container true
	[ "$status" -ne 0 ]
	[ "$(hostname)" != nope ]
}

# start_holder NAMESPACES...: a sleeping process in new namespaces made by
# unshare(1), as the runtime's user (rootless: in its own user namespace,
# which the container then joins as well). Sets HOLDER.
start_holder() {
	local flags=("$@")
	is_rootless && flags+=(--user --map-root-user)
	# A simple command, so $! is the holder itself once unshare execs sh.
	"${AS_USER[@]}" unshare "${flags[@]}" sh -c 'hostname held-uts 2>/dev/null; exec sleep 1000' \
		</dev/null >/dev/null 2>&1 3>&- &
	HOLDER=$!
	retry 100 0.02 grep -qx sleep "/proc/$HOLDER/comm"
}

# join_config TYPE...: point the config's TYPE namespaces at the holder's.
join_config() {
	local t path
	for t in "$@"; do
		path="/proc/$HOLDER/ns/$(ns_file "$t")"
		update_config '(.linux.namespaces[] | select(.type == $t)) |= {type: $t, path: $p}
			| if any(.linux.namespaces[]; .type == $t) then . else .linux.namespaces += [{type: $t, path: $p}] end' \
			"$BUNDLE" --arg t "$t" --arg p "$path"
	done
	if is_rootless; then
		# Join the holder's user namespace too. Its mappings (0 -> caller,
		# from --map-root-user) are already written; the config keeps the
		# same ones, which runc 1.1.5 insists on.
		update_config '(.linux.namespaces[] | select(.type == "user")) |= {type: "user", path: $p}' \
			"$BUNDLE" --arg p "/proc/$HOLDER/ns/user"
	fi
}

ns_file() {
	case "$1" in
	network) echo net ;;
	mount) echo mnt ;;
	*) echo "$1" ;;
	esac
}

@test "namespaces: join an existing network namespace by path" {
	start_holder --net --uts
	join_config network
	container_ns net
	[ "$(ns_of net)" = "$(readlink /proc/$HOLDER/ns/net)" ]
	[ "$(ns_of net)" != "$(readlink /proc/self/ns/net)" ]
}

@test "namespaces: join an existing uts namespace by path" {
	start_holder --net --uts
	update_config 'del(.hostname)'
	join_config uts
	run_sh 'readlink /proc/self/ns/uts; hostname'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(readlink /proc/$HOLDER/ns/uts)" ]
	[ "${lines[1]}" = held-uts ]
}

@test "namespaces: join an existing ipc namespace by path" {
	start_holder --ipc
	join_config ipc
	container_ns ipc
	[ "$(ns_of ipc)" = "$(readlink /proc/$HOLDER/ns/ipc)" ]
}

@test "namespaces: join an existing mount namespace by path: the rootfs is set up in it, every time" {
	# As runc does: the joined namespace is the container's, in which its
	# rootfs is mounted and pivoted into (it used to run in the joined
	# namespace's own root: the host's files, or none of /proc).
	local i
	for i in $(seq 30); do
		start_holder --mount
		join_config mount
		run_sh 'readlink /proc/self/ns/mnt; readlink /bin/sh; test -e /proc/self/status && echo proc; echo $$'
		[ "$status" -eq 0 ] || fail "try $i: run exited $status"
		[ "${lines[0]}" = "$(readlink "/proc/$HOLDER/ns/mnt")" ] || fail "try $i: not in the holder's mount namespace"
		[ "${lines[1]}" = busybox ] || fail "try $i: / is not the bundle's rootfs"
		[ "${lines[2]}" = proc ] || fail "try $i: no /proc"
		[ "${lines[3]}" = 1 ] || fail "try $i: not pid 1"
		kill -9 "$HOLDER"
		wait "$HOLDER" 2>/dev/null || true
		HOLDER=
	done
}

@test "namespaces: joining the mount namespace of a running container is a one-line error naming it, and leaves nothing" {
	# The joined namespace is where the rootfs is set up (as in runc): a
	# container's, pivoted into its own rootfs, has no bundle in it. runc
	# 1.1.5 fails too ("open /proc/self/mountinfo").
	local bundle=$BUNDLE
	setup_bundle "$BATS_TEST_TMPDIR/a"
	run_detached "$CID-a"
	BUNDLE=$bundle
	HOLDER=$(ctr_pid "$CID-a")
	join_config mount
	HOLDER=
	run_sh 'true'
	[ "$status" -ne 0 ]
	is_runc || [[ "$output" == *"mount namespace /proc/"*"/ns/mnt does not see the bundle"*"join one whose root is the host's"* ]]
	is_runc || [ "${#lines[@]}" -eq 1 ]
	assert_nothing_left "$CID"
	# The running container is untouched.
	[ "$(container_status "$CID-a")" = running ]
}

# no_mount_ns: the bundle without a mount namespace, and without what
# needs one.
no_mount_ns() {
	update_config 'del(.linux.namespaces[] | select(.type == "mount")) | .root.readonly = false
		| del(.linux.maskedPaths) | del(.linux.readonlyPaths) | del(.linux.rootfsPropagation)'
}

@test "namespaces: without a mount namespace the container shares the runtime's, chrooted into its rootfs; delete takes its mounts back" {
	skip_if_runc "runc 1.1.5 makes the runtime's / rslave and leaves the container's mounts in the runtime's namespace"
	# The runtime's mount namespace is the host's here: only root may mount
	# in it.
	requires root
	no_mount_ns
	run_sh 'readlink /proc/self/ns/mnt; readlink /bin/sh; grep -c " /proc .* - proc " /proc/self/mountinfo; echo $$'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$HOST_MNTNS" ]
	[ "${lines[1]}" = busybox ]
	[ "${lines[2]}" -ge 1 ]
	[ "${lines[3]}" = 1 ]
	assert_nothing_left "$CID"

	# The mounts are the host's while the container exists, and go with it.
	create_sleeping
	[ -n "$(host_mounts_under "$BUNDLE/rootfs/proc")" ]
	runtime_ok delete --force "$CID"
	assert_nothing_left "$CID"
}

@test "namespaces: without a mount namespace, the host's / as rootfs runs in the host's own root" {
	skip_if_runc "runc 1.1.5 makes the runtime's / rslave without a mount namespace"
	no_mount_ns
	echo marker >"$BATS_TEST_TMPDIR/marker"
	chmod 0644 "$BATS_TEST_TMPDIR/marker"
	update_config '.root.path = "/" | .mounts = []'
	run_sh "readlink /proc/self/ns/mnt; cat $BATS_TEST_TMPDIR/marker"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$HOST_MNTNS" ]
	[ "${lines[1]}" = marker ]

	# Mounts would cover the host's own paths: refused.
	update_config '.mounts = [{destination: "/proc", type: "proc", source: "proc"}]'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"mounts with the host's / as rootfs need a mount namespace"* ]]
}

@test "namespaces: root.readonly without a mount namespace is refused, as runc 1.6 refuses it" {
	# runc 1.1.5 remounts the runtime's / read-only; runc 1.3 to 1.5 run
	# the container with its root writable; the spec says it MUST be
	# read-only, which only a mount namespace of its own can give.
	skip_if_runc "runc 1.1.5 remounts the runtime's / read-only"
	# Refused before anything is mounted: rootless too.
	no_mount_ns
	update_config '.root.readonly = true'
	run_sh 'touch /written && echo wrote'
	[ "$status" -ne 0 ]
	[[ "$output" == *"root.readonly needs a mount namespace: add {\"type\": \"mount\"} to linux.namespaces"* ]]
	[[ "$output" != *wrote* ]]
	[ ! -e "$BUNDLE/rootfs/written" ]
	assert_nothing_left "$CID"
}

@test "namespaces: masked and read-only paths and rootfsPropagation need a mount namespace" {
	local setting settings=('.linux.maskedPaths = ["/proc/kcore"]' '.linux.readonlyPaths = ["/proc/sys"]')
	# runc 1.1.5 refuses these two; it takes rootfsPropagation, and then
	# re-propagates mounts of the runtime's namespace.
	is_runc || settings+=('.linux.rootfsPropagation = "rprivate"')
	for setting in "${settings[@]}"; do
		no_mount_ns
		update_config "$setting"
		set_args true
		runtime create -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ] || fail "$setting: create exited 0"
		is_runc || [[ "$output" == *"needs a mount namespace"* ]] || fail "$setting: $output"
		assert_nothing_left "$CID"
		runtime delete --force "$CID"
	done
}

@test "namespaces: linux.timeOffsets move the boottime and monotonic clocks of a new time namespace" {
	skip_if_runc "runc 1.1.5 has no time namespace (1.2 has)"
	[[ -e /proc/self/ns/time ]] || skip "the kernel has no time namespaces (Linux 5.6+)"
	update_config '.linux.namespaces += [{type: "time"}]
		| .linux.timeOffsets = {boottime: {secs: 864000}, monotonic: {secs: 86400, nanosecs: 5}}'
	run_sh 'cut -d. -f1 /proc/uptime; cat /proc/self/timens_offsets'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -ge 864000 ]
	[[ "$output" == *"monotonic"*"86400"*"5"* && "$output" == *"boottime"*"864000"*"0"* ]]

	# Offsets for the runtime's own time namespace are refused.
	update_config 'del(.linux.namespaces[] | select(.type == "time"))'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"linux.timeOffsets need a new time namespace"* ]]
}

@test "namespaces: a path that is not a namespace is an error and leaves nothing" {
	touch "$BATS_TEST_TMPDIR/notns"
	update_config '(.linux.namespaces[] | select(.type == "ipc")) |= {type: "ipc", path: $p}' \
		"$BUNDLE" --arg p "$BATS_TEST_TMPDIR/notns"
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}

@test "namespaces: a namespace path of a type other than declared is an error" {
	start_holder --net --uts
	update_config '(.linux.namespaces[] | select(.type == "ipc")) |= {type: "ipc", path: $p}' \
		"$BUNDLE" --arg p "/proc/$HOLDER/ns/uts"
	run_container true
	[ "$status" -ne 0 ]
}
