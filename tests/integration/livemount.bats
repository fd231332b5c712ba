#!/usr/bin/env bats
# nanobox-runc mount / umount / mounts: host directories added to a running
# OCI container or detached sandbox, and taken away again. Each test tries
# to break it: symlinked destinations, destinations out of the root, a
# read-only source, the container's own mounts, mounts the container made
# over an added one.

load helpers
load gohelpers

setup() {
	setup_test
	requires nanobox
	SRC="$BATS_TEST_TMPDIR/src"
	mkdir -p "$SRC"
	echo "from the host" >"$SRC/f"
	chmod -R a+rX "$SRC"
	give_to_user "$SRC"
}

teardown() {
	teardown_test
}

# run_container_sleeping [JQ]: a running busybox container (sleep 1000),
# with a writable root unless JQ says otherwise.
run_container_sleeping() {
	update_config ".root.readonly = false | ${1:-.}"
	run_detached
}

# with_sys_admin: the container's process gets CAP_SYS_ADMIN (in its user
# namespace when rootless), to try what a privileged container could.
with_sys_admin() {
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
}

# own_userns: as root, the container gets a user namespace (0..65535 mapped
# to 100000..), its rootfs and $SRC owned by its root; rootless it has one.
own_userns() {
	is_rootless && return 0
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	chown -R 100000:100000 "$BUNDLE/rootfs" "$SRC"
	open_tmp_path
}

# mount_json FIELD: a field of the last mount's JSON output.
mount_json() {
	jq -r ".$1" <<<"$output"
}

@test "mount: a host directory into a running container, read-only; mounts lists it; umount takes it away" {
	run_container_sleeping
	runtime_ok mount --ro "$CID" "$SRC" /tmp/data
	[[ "$(mount_json target)" == /tmp/data && "$(mount_json readOnly)" == true && "$(mount_json mountId)" -gt 0 ]] ||
		fail "mount output: $output"
	runtime_ok exec "$CID" sh -c 'cat /tmp/data/f; touch /tmp/data/x 2>&1; grep " /tmp/data " /proc/self/mountinfo'
	[[ "$output" == *"from the host"* && "$output" == *"Read-only file system"* ]] || fail "inside: $output"
	[[ "$output" == *"ro,nosuid,nodev"* ]] || fail "mount flags inside: $output"
	[[ ! -e "$SRC/x" ]] || fail "a write reached the host"
	runtime_ok mount "$CID" "$SRC" /tmp/rw
	runtime_ok exec "$CID" sh -c 'echo written >/tmp/rw/x'
	[[ "$(cat "$SRC/x")" == written ]] || fail "the host does not see the write"
	runtime_ok mounts "$CID"
	[[ "$(jq -r 'map(.target) | join(",")' <<<"$output")" == /tmp/data,/tmp/rw ]] || fail "mounts: $output"
	runtime mount "$CID" "$SRC" /tmp/data
	[[ $status -ne 0 && "$output" == *"already exists"* ]] || fail "second mount at the same place: $output"
	runtime_ok umount "$CID" /tmp/data
	runtime_ok exec "$CID" sh -c 'ls -A /tmp/data; grep -c " /tmp/data " /proc/self/mountinfo; true'
	[[ "$output" == 0 ]] || fail "still mounted: $output"
	runtime_ok mounts "$CID"
	[[ "$(jq -r 'map(.target) | join(",")' <<<"$output")" == /tmp/rw ]] || fail "mounts after umount: $output"
	runtime umount "$CID" /tmp/data
	[[ $status -ne 0 && "$output" == *"no mount added by nanobox-runc"* ]] || fail "second umount: $output"
}

@test "mount: on a read-only root a missing directory is refused, with the way out" {
	run_container_sleeping '.root.readonly = true'
	runtime mount "$CID" "$SRC" /data
	[[ $status -ne 0 && "$output" == *"read-only"*"existing"* ]] || fail "mount on a read-only root: $output"
	runtime mount "$CID" "$SRC" /new/deep/data
	[[ $status -ne 0 && "$output" == *"/new does not exist, and the container's root is read-only"* ]] || fail "nested: $output"
	# An existing directory works.
	runtime_ok mount "$CID" "$SRC" /home
	runtime_ok exec "$CID" cat /home/f
	[[ "$output" == "from the host" ]] || fail "inside: $output"
	runtime_ok mounts "$CID"
	[[ "$(jq length <<<"$output")" == 1 ]] || fail "mounts: $output"
}

@test "mount: a symlinked destination cannot leave the container's root" {
	run_container_sleeping
	local tag="nbx-live-$$-$RANDOM"
	runtime_ok exec "$CID" sh -c 'mkdir /tmp/in && ln -s / /tmp/abs && ln -s ../../../../.. /tmp/rel && ln -s /etc /tmp/etc-link'
	runtime_ok mount "$CID" "$SRC" "/tmp/abs/tmp/in/$tag"
	[[ "$(mount_json target)" == "/tmp/in/$tag" ]] || fail "absolute symlink: $output"
	runtime_ok mount "$CID" "$SRC" "/tmp/rel/$tag"
	[[ "$(mount_json target)" == "/$tag" ]] || fail "relative symlink: $output"
	runtime_ok mount "$CID" "$SRC" "/tmp/../../../../tmp/dots-$tag"
	[[ "$(mount_json target)" == "/tmp/dots-$tag" ]] || fail "dots: $output"
	runtime mount "$CID" "$SRC" /tmp/etc-link
	[[ $status -ne 0 && "$output" == *"symbolic link"* ]] || fail "symlink as the destination: $output"
	runtime mount "$CID" "$SRC" "/proc/1/root/tmp/$tag"
	[[ $status -ne 0 ]] || fail "a magic link was followed: $output"
	runtime mount "$CID" "$SRC" /tmp/../..
	[[ $status -ne 0 && "$output" == *"cannot replace the container's root"* ]] || fail "/: $output"
	runtime_ok exec "$CID" sh -c "cat /tmp/in/$tag/f /$tag/f /tmp/dots-$tag/f"
	[[ "$(grep -c 'from the host' <<<"$output")" == 3 ]] || fail "inside: $output"
	local p
	for p in "/$tag" "/tmp/$tag" "/tmp/in" "/tmp/dots-$tag"; do
		[[ ! -e "$p" ]] || fail "$p appeared on the host"
	done
	runtime_ok mounts "$CID"
	[[ "$(jq length <<<"$output")" == 3 ]] || fail "mounts: $output"
}

@test "mount: only what mount added can be removed, not the container's own mounts" {
	with_sys_admin
	run_container_sleeping
	runtime_ok exec "$CID" sh -c 'mkdir /tmp/own && mount -t tmpfs own /tmp/own'
	runtime umount "$CID" /tmp/own
	[[ $status -ne 0 && "$output" == *"no mount added by nanobox-runc"* ]] || fail "the container's own mount: $output"
	runtime umount "$CID" /proc
	[[ $status -ne 0 && "$output" == *"no mount added by nanobox-runc"* ]] || fail "/proc: $output"
	runtime_ok exec "$CID" sh -c 'grep -c " /tmp/own " /proc/self/mountinfo'
	[[ "$output" == 1 ]] || fail "the container's mount went away: $output"
	# The container mounts over an added mount: that one is not ours.
	runtime_ok mount "$CID" "$SRC" /tmp/added
	runtime_ok exec "$CID" mount -t tmpfs over /tmp/added
	runtime umount "$CID" /tmp/added
	[[ $status -ne 0 && "$output" == *"no longer the one"* ]] || fail "over the added mount: $output"
	runtime_ok exec "$CID" sh -c 'grep -c " /tmp/added " /proc/self/mountinfo'
	[[ "$output" == 2 ]] || fail "mounts at /tmp/added: $output"
	# Once the container's own is gone, the added one can go.
	runtime_ok exec "$CID" umount /tmp/added
	runtime_ok umount "$CID" /tmp/added
	runtime_ok exec "$CID" sh -c 'grep -c " /tmp/added " /proc/self/mountinfo; true'
	[[ "$output" == 0 ]] || fail "after umount: $output"
}

@test "mount: a source on a read-only filesystem stays read-only, whatever the container tries" {
	local ro="$BATS_TEST_TMPDIR/ro"
	mkdir -p "$ro"
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$ro"
	echo kept >"$ro/f"
	mount -o remount,ro "$ro"
	with_sys_admin
	run_container_sleeping
	runtime_ok mount "$CID" "$ro" /tmp/ro
	[[ "$(mount_json readOnly)" == true && "$(mount_json sourceReadOnly)" == true ]] || fail "mount of a read-only source: $output"
	# The container (with CAP_SYS_ADMIN) tries to make it writable.
	runtime exec "$CID" sh -c 'mount -o remount,rw,bind /tmp/ro; echo x >/tmp/ro/x'
	[[ $status -ne 0 ]] || fail "the read-only source was written: $output"
	[[ ! -e "$ro/x" ]] || fail "a write reached the source"
	if is_rootless; then
		# The source's read-only flag came from a more privileged mount
		# namespace: locked.
		[[ "$output" == *"Operation not permitted"* || "$output" == *[Pp]"ermission denied"* ]] ||
			fail "the remount was not refused: $output"
	fi
	runtime_ok exec "$CID" cat /tmp/ro/f
	[[ "$output" == kept ]] || fail "inside: $output"
	umount -l "$ro"
}

@test "mount: read-only into a container with a user namespace: its root, with CAP_SYS_ADMIN, cannot make it writable" {
	# Rootless, only the source's own flags can be locked (docs/long-lived.md).
	requires root
	own_userns
	with_sys_admin
	run_container_sleeping
	runtime_ok mount --ro "$CID" "$SRC" /tmp/m
	runtime exec "$CID" sh -c 'mount -o remount,bind,rw /tmp/m && echo REMOUNTED
		mount -o remount,bind,rw,suid,dev /tmp/m && echo REMOUNTED
		mkdir -p /tmp/again && mount --bind /tmp/m /tmp/again && mount -o remount,bind,rw /tmp/again && echo REMOUNTED
		echo x >/tmp/m/x && echo WROTE; true'
	[[ "$output" != *REMOUNTED* && "$output" != *WROTE* ]] || fail "the container's root made the mount writable: $output"
	[[ ! -e "$SRC/x" ]] || fail "a write reached the source"
	grep -q " /tmp/m " <(__runtime exec "$CID" cat /proc/self/mountinfo) || fail "the mount is gone"
}

@test "mount: in a user namespace the source's submounts are locked: they cannot be unmounted to show what they cover" {
	mkdir -p "$SRC/sub"
	echo "covered secret" >"$SRC/sub/secret"
	chmod a+r "$SRC/sub/secret"
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$SRC/sub"
	echo "on top" >"$SRC/sub/top"
	chmod a+r "$SRC/sub/top"
	own_userns
	with_sys_admin
	run_container_sleeping
	runtime_ok mount "$CID" "$SRC" /tmp/m
	runtime exec "$CID" sh -c 'cat /tmp/m/sub/top; umount /tmp/m/sub 2>&1; umount -l /tmp/m/sub 2>&1; cat /tmp/m/sub/secret 2>&1'
	[[ "$output" == *"on top"* ]] || fail "the submount did not come along: $output"
	[[ "$output" != *"covered secret"* ]] || fail "the submount was unmounted: $output"
	# EINVAL: a locked mount (EPERM would only say the caps are missing).
	[[ "$output" == *"Invalid argument"* ]] || fail "not refused as a locked mount: $output"
	umount -l "$SRC/sub"
}

@test "mount: into a detached sandbox, read-only root and all" {
	local sid="sb-$CID"
	runtime_ok sandbox --detach --name "$sid" -- sleep 1000
	runtime mount "$sid" "$SRC" /data
	[[ $status -ne 0 && "$output" == *"read-only"*"/tmp"* ]] || fail "mount on the sandbox's read-only root: $output"
	runtime_ok mount --ro "$sid" "$SRC" /tmp/data
	runtime_ok exec "$sid" sh -c 'cat /tmp/data/f; (echo x >/tmp/data/x) 2>&1; true'
	[[ "$output" == *"from the host"*"Read-only file system"* ]] || fail "inside: $output"
	runtime_ok umount "$sid" /tmp/data
	runtime umount "$sid" /tmp
	[[ $status -ne 0 && "$output" == *"no mount added"* ]] || fail "the sandbox's own /tmp: $output"
	runtime_ok delete --force "$sid"
}

@test "mount: errors name the problem" {
	runtime mount nosuch-$$ "$SRC" /tmp/x
	[[ $status -ne 0 && "$output" == *"does not exist"* ]] || fail "missing container: $output"
	run_container_sleeping
	runtime mount "$CID" "$BATS_TEST_TMPDIR/no-such-source" /tmp/x
	[[ $status -ne 0 && "$output" == *"no such file or directory"* ]] || fail "missing source: $output"
	runtime mount "$CID" "$SRC" relative/dst
	[[ $status -ne 0 && "$output" == *"absolute path"* ]] || fail "relative destination: $output"
	runtime mount "$CID" "$SRC/f" /tmp
	[[ $status -ne 0 && "$output" == *"is a directory, the source a file"* ]] || fail "file onto a directory: $output"
	runtime mount "$CID" "$SRC"
	[[ $status -ne 0 && "$output" == *"argument(s) expected"* ]] || fail "missing argument: $output"
	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime mount "$CID" "$SRC" /tmp/x
	[[ $status -ne 0 && "$output" == *"not running"* ]] || fail "stopped container: $output"
	runtime_ok mounts "$CID"
	[[ "$output" == "[]" ]] || fail "mounts: $output"
}

# remount TARGET ro|rw: Container.RemountMount of $CID (the CLI has no
# remount), through tests/integration/remount, as the test's user.
remount() {
	local bin
	bin=$(build_test_helper remount) || skip "cannot build tests/integration/remount (needs go)"
	status=0
	output=$(timeout -k 5 "$RUNTIME_TIMEOUT" "${AS_USER[@]}" "$bin" "$ROOT" "$CID" "$@" 2>&1 3>&-) || status=$?
	echo "\$ remount $CID $* (status $status): $output"
}

@test "mount: a symlink in the source's path is refused: a program that can write there could swap it" {
	# The container can write into $WS (its /ws): it plants a symlink to /
	# where the administrator's source will be, or swaps a mounted source.
	WS="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$WS/datasets" "$WS/data2"
	chmod -R 0777 "$WS"
	give_to_user "$WS"
	run_container_sleeping ".mounts += [{\"destination\": \"/ws\", \"type\": \"bind\", \"source\": \"$WS\", \"options\": [\"rbind\", \"rw\"]}]"
	runtime_ok exec "$CID" sh -c 'rmdir /ws/datasets && ln -s / /ws/datasets'
	runtime mount "$CID" "$WS/datasets" /tmp/ds
	[[ $status -ne 0 && "$output" == *"symbolic link in its path"*"realpath"* ]] || fail "a symlinked source: $output"
	runtime_ok exec "$CID" sh -c 'ls /tmp/ds 2>&1; true'
	[[ "$output" != *etc* ]] || fail "the host's / reached the container: $output"
	# A source mounted, then swapped for another directory or a symlink:
	# cloning it again for a remount refuses.
	runtime_ok mount --ro "$CID" "$WS/data2" /tmp/d2
	runtime_ok exec "$CID" sh -c 'mv /ws/data2 /ws/d2.real && ln -s / /ws/data2'
	remount /tmp/d2 rw
	[[ $status -ne 0 && "$output" == *"symbolic link"* ]] || fail "remount of a swapped source: $output"
	runtime_ok exec "$CID" sh -c 'rm /ws/data2 && mkdir /ws/data2'
	remount /tmp/d2 rw
	[[ $status -ne 0 && "$output" == *"no longer what was mounted"* ]] || fail "remount of a replaced source: $output"
	runtime_ok exec "$CID" sh -c 'touch /tmp/d2/x 2>&1; true'
	[[ "$output" == *"Read-only"* ]] || fail "the mount became writable: $output"
}

@test "mount: made writable again, the source's own read-only submounts stay read-only" {
	is_rootless && skip "needs root to make the host's read-only submount"
	mkdir -p "$SRC/sub" "$BATS_TEST_TMPDIR/prot"
	echo keep >"$BATS_TEST_TMPDIR/prot/p"
	mount --bind "$BATS_TEST_TMPDIR/prot" "$SRC/sub"
	mount -o remount,bind,ro "$SRC/sub"
	run_container_sleeping
	runtime_ok mount --ro "$CID" "$SRC" /tmp/r
	remount /tmp/r rw
	umount_after=$?
	runtime_ok exec "$CID" sh -c 'echo top >/tmp/r/top && echo wrote-top; echo overwritten >/tmp/r/sub/p 2>&1; true'
	umount "$SRC/sub"
	[[ $status -eq 0 ]] || fail "exec failed"
	[[ "$output" == *wrote-top* ]] || fail "remount rw did not make the mount writable: $output"
	[[ "$(cat "$BATS_TEST_TMPDIR/prot/p")" == keep ]] || fail "the read-only submount was written through"
}

@test "mount: an added mount is private: nothing propagates between it and the host" {
	is_rootless && skip "a rootless runtime's mounts are in its own user namespace"
	SH="$BATS_TEST_TMPDIR/shared"
	mkdir -p "$SH"
	mount -t tmpfs nbx-shared "$SH"
	mount --make-shared "$SH"
	mkdir "$SH/h" "$SH/c"
	with_sys_admin
	run_container_sleeping
	runtime mount --ro "$CID" "$SH" /tmp/d
	local st=$status out=$output
	mount -t tmpfs nbx-hostsub "$SH/h"
	runtime exec "$CID" sh -c 'grep " /tmp/d" /proc/self/mountinfo; mount -t tmpfs nbx-ctrsub /tmp/d/c 2>&1; echo done'
	local inside=$output
	local host_sees
	host_sees=$(grep -c nbx-ctrsub /proc/self/mountinfo || true)
	umount "$SH/h" 2>/dev/null || true
	umount -R "$SH" 2>/dev/null || umount -l "$SH" || true
	[[ $st -eq 0 ]] || fail "mount: $out"
	[[ "$inside" != *"shared:"* ]] || fail "the added mount is in the host's peer group: $inside"
	[[ "$inside" != *nbx-hostsub* ]] || fail "a host mount made later appeared inside: $inside"
	[[ "$host_sees" == 0 ]] || fail "the container's mount appeared on the host"
}

@test "mount: a container that shares the host's mount namespace gets no added mount" {
	is_rootless && skip "a rootless container has a mount namespace of its own"
	update_config '.linux.namespaces |= map(select(.type != "mount")) | .linux.maskedPaths = [] | .linux.readonlyPaths = []
		| .mounts |= map(select(.destination == "/proc" or .destination == "/dev"))'
	run_container_sleeping
	mkdir -p "$BATS_TEST_TMPDIR/hm"
	runtime mount "$CID" "$SRC" "$BATS_TEST_TMPDIR/hm"
	[[ $status -ne 0 && "$output" == *"shares the host's mount namespace"* ]] || fail "mount into the host's namespace: $output"
	! grep -q " $BATS_TEST_TMPDIR/hm " /proc/self/mountinfo || fail "the mount landed on the host"
}

@test "mount: a destination that a symlink leads to an added mount's place, or into /proc, is refused" {
	run_container_sleeping
	runtime_ok mount "$CID" "$SRC" /tmp/a
	runtime_ok exec "$CID" sh -c 'ln -s /tmp /tmp/l; ln -s /proc/1 /tmp/p1; ln -s /proc/sys /tmp/psys'
	runtime mount "$CID" "$SRC" /tmp/l/a
	[[ $status -ne 0 && "$output" == *"already exists"* ]] || fail "a second mount through a symlink: $output"
	runtime_ok mounts "$CID"
	[[ "$(jq length <<<"$output")" == 1 ]] || fail "mounts: $output"
	runtime_ok umount "$CID" /tmp/a
	runtime mount "$CID" "$SRC/f" /tmp/p1/attr/current
	[[ $status -ne 0 && "$output" == *"/proc or /sys"* ]] || fail "a mount onto /proc/1/attr/current: $output"
	runtime mount "$CID" "$SRC" /tmp/psys/kernel
	[[ $status -ne 0 && "$output" == *"/proc or /sys"* ]] || fail "a mount onto /proc/sys/kernel: $output"
	runtime_ok exec "$CID" sh -c 'grep -c -e " /proc/1/attr/current " -e " /proc/sys/kernel " /proc/self/mountinfo; true'
	[[ "$output" == 0 ]] || fail "mounted in /proc: $output"
}
