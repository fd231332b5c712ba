#!/usr/bin/env bats
# User namespaces: uid/gid maps as the container sees them, rootful with
# mappings, rootless with the caller's single id, and rootless with
# /etc/subuid ranges through newuidmap/newgidmap.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

# norm: squeeze whitespace of uid_map lines to "inside outside size".
norm() {
	awk 'NF == 3 {print $1, $2, $3}'
}

# config_map uid|gid: the config's mappings as uid_map lines.
config_map() {
	jq -r ".linux.${1}Mappings[] | \"\\(.containerID) \\(.hostID) \\(.size)\"" "$BUNDLE/config.json"
}

# rootful_userns: a user namespace mapping 0..65535 to 100000.., with the
# rootfs owned by the mapped root as a real image would be.
rootful_userns() {
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	chown -R 100000:100000 "$BUNDLE/rootfs"
	# The mapped root must be able to reach the bundle.
	open_tmp_path
}

@test "userns: the container's uid_map and gid_map are the config's mappings" {
	is_rootless || rootful_userns
	run_sh 'cat /proc/self/uid_map; echo --; cat /proc/self/gid_map'
	[ "$status" -eq 0 ]
	[ "$(sed -n '1,/^--$/p' <<<"$output" | norm)" = "$(config_map uid)" ]
	[ "$(sed -n '/^--$/,$p' <<<"$output" | norm)" = "$(config_map gid)" ]
}

@test "userns: rootful with mappings: root inside is 100000 outside" {
	requires root
	rootful_userns
	update_config '.root.readonly = false'
	run_sh 'cat /proc/self/uid_map; id -u; touch /tmp/made-inside'
	[ "$status" -eq 0 ]
	[ "$(head -n1 <<<"$output" | norm)" = "0 100000 65536" ]
	[ "${lines[1]}" = 0 ]
	[ "$(stat -c %u:%g "$BUNDLE/rootfs/tmp/made-inside")" = 100000:100000 ]
}

@test "userns: rootful user ns: a host-root-owned file is nobody's inside" {
	requires root
	rootful_userns
	chown 0:0 "$BUNDLE/rootfs/etc/passwd"
	run_sh 'stat -c %u /etc/passwd'
	[ "$status" -eq 0 ]
	[ "$output" = 65534 ]
}

@test "userns: rootless single mapping: uid 0 inside is the caller outside" {
	requires rootless
	uid=$(test_uid)
	gid=$(test_gid)
	update_config '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}]
		| .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}]
		| .root.readonly = false' "$BUNDLE" --argjson u "$uid" --argjson g "$gid"
	run_sh 'cat /proc/self/uid_map; cat /proc/self/gid_map; id -u; touch /tmp/made-inside'
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p <<<"$output" | norm)" = "0 $uid 1" ]
	[ "$(sed -n 2p <<<"$output" | norm)" = "0 $gid 1" ]
	[ "${lines[2]}" = 0 ]
	[ "$(stat -c %u:%g "$BUNDLE/rootfs/tmp/made-inside")" = "$uid:$gid" ]
}

@test "userns: rootless with /etc/subuid ranges through newuidmap" {
	requires rootless newuidmap
	use_subid_mappings
	su=$(awk -F: -v n="$TEST_USER" '$1 == n {print $2; exit}' /etc/subuid)
	sg=$(awk -F: -v n="$TEST_USER" '$1 == n {print $2; exit}' /etc/subgid)
	update_config '.root.readonly = false | .process.user = {uid: 1000, gid: 1000}'
	run_sh 'cat /proc/self/uid_map; id -u; touch /tmp/made-by-1000'
	[ "$status" -eq 0 ]
	[ "$(sed -n 1,2p <<<"$output" | norm)" = "$(printf '0 %s 1\n1 %s 65536' "$(test_uid)" "$su")" ]
	[ "${lines[2]}" = 1000 ]
	# Container uid 1000 is subuid start + 999 on the host.
	[ "$(stat -c %u:%g "$BUNDLE/rootfs/tmp/made-by-1000")" = "$((su + 999)):$((sg + 999))" ]
}

@test "userns: rootless mapping of an id the caller does not own is refused" {
	requires rootless
	update_config '.linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}]'
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}

@test "userns: rootless without a user namespace is refused" {
	requires rootless
	update_config 'del(.linux.namespaces[] | select(.type == "user")) | del(.linux.uidMappings, .linux.gidMappings)'
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}

@test "userns: mappings without a user namespace are an error" {
	requires root
	skip_if_runc "runc 1.1.5 silently drops mappings when there is no user namespace"
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}

@test "userns: a bind source the mapped root cannot reach (under a 0700 directory) is opened by the runtime" {
	requires root
	rootful_userns
	local private="$BATS_TEST_TMPDIR/private"
	mkdir -p "$private/vol/dir"
	echo reached >"$private/vol/file"
	echo in-dir >"$private/vol/dir/f"
	chmod 0700 "$private"
	update_config '.mounts += [{destination: "/vol", type: "bind", source: $v, options: ["rbind", "ro"]},
		{destination: "/one", type: "bind", source: $f, options: ["bind"]}]' \
		"$BUNDLE" --arg v "$private/vol" --arg f "$private/vol/dir/f"
	run_sh 'cat /vol/file /one; touch /vol/x 2>&1; grep " /vol " /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = reached ]
	[ "${lines[1]}" = in-dir ]
	[[ "$output" == *"Read-only file system"* ]]
	# The container's mapped root still cannot reach the directory itself.
	[ "$(stat -c %a "$private")" = 700 ]
}

# locked_host_mount DIR OPTS: DIR made a bind mount of itself on the host,
# with OPTS (ro, nodev, noexec...) on that mount only.
locked_host_mount() {
	mkdir -p "$1"
	echo from-host >"$1/file"
	mount --bind "$1" "$1"
	mount -o "remount,bind,$2" "$1"
}

@test "userns: a bind of a host mount keeps the flags the host set, and the container's root cannot clear them" {
	requires root
	skip_if_runc "runc 1.1.5 fails the remount (EPERM) instead of keeping the locked flags (1.2 keeps them)"
	rootful_userns
	local vol="$BATS_TEST_TMPDIR/locked"
	locked_host_mount "$vol" ro,nodev,noexec
	# The container's root has CAP_SYS_ADMIN over its own mount namespace:
	# the kernel's locks on the host's flags are all that stops it.
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])
		| .mounts += [{destination: "/vol", type: "bind", source: $v, options: ["bind", "nosuid"]}]' \
		"$BUNDLE" --arg v "$vol"
	run_sh 'grep " /vol " /proc/self/mountinfo
		mount -o remount,bind,rw /vol && echo REMOUNTED-RW
		mount -o remount,bind,dev,exec,nosuid /vol && echo REMOUNTED-DEV
		mkdir -p /tmp/again && mount --bind /vol /tmp/again && mount -o remount,bind,rw /tmp/again && echo REBOUND-RW
		touch /vol/x /tmp/again/x 2>/dev/null && echo WROTE
		true'
	umount "$vol"
	[ "$status" -eq 0 ]
	opts=$(awk '{print $6}' <<<"${lines[0]}")
	[[ ",$opts," == *,ro,* && ",$opts," == *,nodev,* && ",$opts," == *,noexec,* && ",$opts," == *,nosuid,* ]]
	[[ "$output" != *REMOUNTED* && "$output" != *REBOUND* && "$output" != *WROTE* ]]
	[ ! -e "$vol/x" ]
}

@test "userns: a bind that asks to clear a flag the host set on its source fails with EPERM, as runc" {
	requires root
	skip_if_runc "runc 1.1.5 does not remount a bind that only clears flags (1.2 does)"
	rootful_userns
	local vol="$BATS_TEST_TMPDIR/locked"
	locked_host_mount "$vol" ro
	update_config '.mounts += [{destination: "/vol", type: "bind", source: $v, options: ["bind", "rw"]}]' \
		"$BUNDLE" --arg v "$vol"
	run_sh 'touch /vol/x'
	umount "$vol"
	[ "$status" -ne 0 ]
	# In runc's words, which its suite and its users' scripts match.
	[[ "$output" == *"run failed: unable to start container process: error during container init: error mounting \"$vol\" to rootfs at \"/vol\": "*"cannot clear locked flags ro: operation not permitted"* ]]
	[ ! -e "$vol/x" ]
	# Without a user namespace root may make the bind read-write.
	update_config 'del(.linux.uidMappings, .linux.gidMappings) | .linux.namespaces |= map(select(.type != "user"))'
	locked_host_mount "$vol" ro
	run_sh 'touch /vol/y && echo wrote'
	umount "$vol"
	[ "$status" -eq 0 ]
	[ "$output" = wrote ]
}

@test "userns: a non-recursive bind of a host directory with a mount below it is refused, naming rbind" {
	requires root
	rootful_userns
	local vol="$BATS_TEST_TMPDIR/withsub"
	mkdir -p "$vol/sub"
	echo hidden >"$vol/sub/under"
	mount -t tmpfs -o size=1m sub-tmpfs "$vol/sub"
	update_config '.mounts += [{destination: "/vol", type: "bind", source: $v, options: ["bind"]}]' \
		"$BUNDLE" --arg v "$vol"
	run_sh 'cat /vol/sub/under'
	umount "$vol/sub"
	[ "$status" -ne 0 ]
	[[ "$output" == *"invalid argument"* ]]
	is_runc || [[ "$output" == *"rbind"* ]]
	[[ "$output" != *hidden* ]]
	runtime list -q
	[ "$output" = "" ]
}

@test "userns: an idmapped mount (idmap, ridmap, the mount's own mappings) shows host ids as the container's" {
	requires root
	skip_if_runc "runc 1.1.5 has no idmapped mounts (1.2 has)"
	rootful_userns
	update_config '.root.readonly = false'
	local src="$BATS_TEST_TMPDIR/idsrc"
	mkdir -p "$src/sub"
	echo root-owned >"$src/f"
	chown 0:0 "$src" "$src/f"
	chown 1000:1000 "$src/sub"
	mount -t tmpfs -o size=1m,mode=0755 idmap-sub "$src/sub"
	echo in-sub >"$src/sub/g"
	update_config '.mounts += [
		{destination: "/plain", type: "bind", source: $s, options: ["rbind"]},
		{destination: "/idm", type: "bind", source: $s, options: ["rbind", "idmap"]},
		{destination: "/ridm", type: "bind", source: $s, options: ["rbind", "ridmap"]},
		{destination: "/own", type: "bind", source: $s, options: ["bind", "idmap"],
			uidMappings: [{containerID: 0, hostID: 101000, size: 1}], gidMappings: [{containerID: 0, hostID: 101000, size: 1}]}]' \
		"$BUNDLE" --arg s "$src"
	run_sh 'stat -c %u /plain/f /idm/f /idm/sub/g /ridm/sub/g /own/f; touch /idm/made-inside && echo made'
	umount -l "$src/sub"
	[ "$status" -eq 0 ]
	# Host root is nobody without idmap; 0 through it. Only ridmap maps the
	# submount. The mount's own mappings put host 0 at container 1000.
	[ "$output" = "$(printf '65534\n0\n65534\n0\n1000\nmade')" ]
	# Written through the idmapped mount as the container's root: host 0.
	[ "$(stat -c %u "$src/made-inside")" = 0 ]
}

@test "userns: an idmapped mount of a source inside the rootfs follows the mounts before it, and stays inside the rootfs" {
	requires root
	skip_if_runc "runc 1.1.5 has no idmapped mounts (1.2 has)"
	rootful_userns
	update_config '.root.readonly = false'
	local src="$BATS_TEST_TMPDIR/early" rootfs="$BUNDLE/rootfs"
	mkdir -p "$src" "$rootfs/mnt"
	echo from-early >"$src/file"
	chown 0:0 "$src" "$src/file"
	# A source that only an earlier mount of the config makes (runc's
	# suite: "mount order, container idmap source"), and one through a
	# symlink of the container's own files to /etc: resolved inside the
	# rootfs, it is the rootfs's /etc, never the host's.
	ln -sfn /etc "$rootfs/escape"
	echo rootfs-etc >"$rootfs/etc/nbx-marker"
	update_config '.mounts += [
		{destination: "/mnt", type: "bind", source: $s, options: ["rbind"]},
		{destination: "/final", type: "bind", source: $m, options: ["rbind", "idmap"]},
		{destination: "/esc", type: "bind", source: $e, options: ["rbind", "idmap"]}]' \
		"$BUNDLE" --arg s "$src" --arg m "$rootfs/mnt" --arg e "$rootfs/escape"
	run_sh 'cat /final/file; stat -c %u /mnt/file /final/file; cat /esc/nbx-marker; test -e /esc/debian_version && echo host-etc; true'
	[ "$status" -eq 0 ]
	# Host root is nobody through the plain bind, 0 through the idmapped one.
	[ "$output" = "$(printf 'from-early\n65534\n0\nrootfs-etc')" ]
}

@test "userns: an idmapped mount without a user namespace or mappings, or rootless, is refused" {
	skip_if_runc "runc 1.1.5 has no idmapped mounts (1.2 has)"
	update_config '.mounts += [{destination: "/idm", type: "bind", source: $s, options: ["bind", "idmap"]}]' "$BUNDLE" --arg s "$BATS_TEST_TMPDIR"
	if is_rootless; then
		set_args true
		runtime run -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ]
		[[ "$output" == *"an idmapped mount of a host directory needs root on the host"* ]]
	else
		update_config 'del(.linux.namespaces[] | select(.type == "user")) | del(.linux.uidMappings, .linux.gidMappings)'
		set_args true
		runtime run -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ]
		[[ "$output" == *"takes the container's user namespace, and it has none"* ]]
	fi
	assert_nothing_left "$CID"
}

@test "userns: process.oomScoreAdj with a user namespace, in init and in exec (runc)" {
	# Rootful, root inside is 100000 outside: once the nsenter stage has
	# become it, its /proc/self files are host root's, so oom_score_adj
	# is written before (containerd's pods with hostUsers: false).
	is_rootless || rootful_userns
	update_config '.process.oomScoreAdj = 123'
	run_detached
	runtime exec "$CID" sh -c 'cat /proc/1/oom_score_adj /proc/self/oom_score_adj; cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 123 ]
	[ "${lines[1]}" = 123 ]
	[ "$(tail -n1 <<<"$output" | norm)" != "0 0 4294967295" ]
}

@test "userns: a new time namespace with linux.timeOffsets, owned by the container's user namespace" {
	skip_if_runc "runc 1.1.5 has no time namespace (1.2 has)"
	[[ -e /proc/self/ns/time ]] || skip "the kernel has no time namespaces (Linux 5.6+)"
	is_rootless || rootful_userns
	update_config '.linux.namespaces += [{type: "time"}]
		| .linux.timeOffsets = {boottime: {secs: 864000}, monotonic: {secs: 86400, nanosecs: 5}}'
	run_sh 'cut -d. -f1 /proc/uptime; cat /proc/self/timens_offsets; cat /proc/self/uid_map'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -ge 864000 ]
	[[ "$output" == *"monotonic"*"86400"*"5"* && "$output" == *"boottime"*"864000"*"0"* ]]
	# The container really is in a user namespace, not the host's.
	[ "$(tail -n1 <<<"$output" | norm)" != "0 0 4294967295" ]
}

@test "userns: joining a user namespace and a network namespace it does not own (the host's), as runc does" {
	# runc's userns.bats "join external namespaces [wrong userns owner]":
	# a namespace the container's user namespace does not own can only be
	# joined with the runtime's own credentials, before the user namespace.
	requires root
	rootful_userns
	run_detached
	local apid netpid userns netns
	apid=$(cat "$BATS_TEST_TMPDIR/$CID.pid")
	unshare --net sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
	netpid=$!
	retry 100 0.02 grep -qx sleep "/proc/$netpid/comm"
	update_config '.linux.namespaces |= map(if .type == "user" then .path = $u
			elif .type == "network" then .path = $n else . end)
		| del(.linux.uidMappings) | del(.linux.gidMappings)
		| .mounts |= map(if .type == "sysfs" then {destination, type: "bind", source: "/sys", options: ["rbind"]} else . end)' \
		"$BUNDLE" --arg u "/proc/$apid/ns/user" --arg n "/proc/$netpid/ns/net"
	set_args sh -c 'readlink /proc/self/ns/user; readlink /proc/self/ns/net'
	userns=$(readlink "/proc/$apid/ns/user")
	netns=$(readlink "/proc/$netpid/ns/net")
	runtime run -b "$BUNDLE" "$CID-b"
	kill "$netpid"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$userns" ]
	[ "${lines[1]}" = "$netns" ]
}
