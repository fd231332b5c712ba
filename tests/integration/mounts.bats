#!/usr/bin/env bats
# config.json mounts: bind/rbind with flags, tmpfs, propagation, and mount
# destinations resolved inside the rootfs.

load helpers

setup() {
	setup_test
	VOL="$BATS_TEST_TMPDIR/vol"
	mkdir -p "$VOL"
	echo from-host >"$VOL/file"
	give_to_user "$VOL"
}

teardown() {
	teardown_test
}

# add_mount JSON: append one mount to config.json.
add_mount() {
	update_config '.mounts += [$m]' "$BUNDLE" --argjson m "$1"
}

# mountinfo_line PATH: the container's mountinfo line for mount point PATH,
# from $output of a `cat /proc/self/mountinfo` run.
mountinfo_line() {
	awk -v p="$1" '$5 == p' <<<"$output" | tail -n 1
}

@test "mounts: bind read-only: readable, writes fail with EROFS" {
	add_mount "{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"bind\", \"ro\"]}"
	run_sh 'cat /vol/file; touch /vol/new'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = from-host ]
	[[ "$output" == *"Read-only file system"* ]]
	[ ! -e "$VOL/new" ]
}

@test "mounts: bind read-write: writes reach the host" {
	add_mount "{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\", \"rw\"]}"
	run_sh 'echo from-container > /vol/new'
	[ "$status" -eq 0 ]
	[ "$(cat "$VOL/new")" = from-container ]
}

@test "mounts: bind of a single file" {
	add_mount "{\"destination\": \"/etc/hostfile\", \"type\": \"bind\", \"source\": \"$VOL/file\", \"options\": [\"bind\", \"ro\"]}"
	run_container cat /etc/hostfile
	[ "$status" -eq 0 ]
	[ "$output" = from-host ]
}

@test "mounts: nosuid, nodev, noexec on a bind mount" {
	cp "$BUNDLE/rootfs/bin/busybox" "$VOL/bb"
	give_to_user "$VOL"
	add_mount "{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"bind\", \"nosuid\", \"nodev\", \"noexec\"]}"
	run_sh 'grep " /vol " /proc/self/mountinfo; /vol/bb true'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	opts=$(awk '{print $6}' <<<"${lines[0]}")
	[[ ",$opts," == *,nosuid,* && ",$opts," == *,nodev,* && ",$opts," == *,noexec,* ]]
}

# mount_submount: a tmpfs mounted on the host at $VOL/sub.
mount_submount() {
	mkdir -p "$VOL/sub"
	mount -t tmpfs -o size=1m,mode=0755 sub-tmpfs "$VOL/sub"
	echo in-submount >"$VOL/sub/f"
	chmod 0644 "$VOL/sub/f"
}

@test "mounts: rbind carries submounts" {
	mount_submount
	add_mount "{\"destination\": \"/rb\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\", \"ro\"]}"
	run_container cat /rb/sub/f
	umount "$VOL/sub"
	[ "$status" -eq 0 ]
	[ "$output" = in-submount ]
}

@test "mounts: bind (not rbind) does not carry submounts" {
	# Rootless, the kernel refuses (EINVAL) a non-recursive bind that would
	# uncover what a locked submount hides, so this is a rootful test.
	requires root
	mount_submount
	add_mount "{\"destination\": \"/b\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"bind\", \"ro\"]}"
	run_sh 'ls /b/sub | wc -l'
	umount "$VOL/sub"
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
}

@test "mounts: tmpfs with mode and size" {
	add_mount '{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777", "size=1m"]}'
	run_sh 'stat -c %a /scratch; cat /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1777 ]
	line=$(mountinfo_line /scratch)
	[[ "$line" == *" - tmpfs "* ]]
	[[ "$line" == *size=1024k* ]]
	[[ "$(awk '{print $6}' <<<"$line")" == *nosuid* ]]
}

@test "mounts: a tmpfs without mode= has the mode of the directory it covers; mode= wins over it" {
	mkdir -p "$BUNDLE/rootfs/covered" "$BUNDLE/rootfs/given"
	chmod 2710 "$BUNDLE/rootfs/covered"
	chmod 2750 "$BUNDLE/rootfs/given"
	give_to_user "$BUNDLE/rootfs/covered" "$BUNDLE/rootfs/given"
	add_mount '{"destination": "/covered", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "size=1m"]}'
	add_mount '{"destination": "/given", "type": "tmpfs", "source": "tmpfs", "options": ["mode=1777"]}'
	add_mount '{"destination": "/made", "type": "tmpfs", "source": "tmpfs"}'
	run_sh 'stat -c %a /covered /given /made; grep -c " /covered .* - tmpfs " /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 2710 ]
	[ "${lines[1]}" = 1777 ]
	# Nothing was there to copy a mode from: tmpfs's own default.
	[ "${lines[2]}" = 1777 ]
	[ "${lines[3]}" = 1 ]
	# The image's directory itself is untouched.
	[ "$(stat -c %a "$BUNDLE/rootfs/covered")" = 2710 ]
}

@test "mounts: a tmpfs destination missing in the rootfs is created inside it" {
	add_mount '{"destination": "/new/deep/dir", "type": "tmpfs", "source": "tmpfs"}'
	run_sh 'grep -c " /new/deep/dir " /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	[ -d "$BUNDLE/rootfs/new/deep/dir" ]
}

@test "mounts: the default spec's proc, dev, devpts, shm, mqueue, sys and cgroup mounts" {
	run_container cat /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_line /proc)" == *" - proc "* ]]
	[[ "$(mountinfo_line /dev)" == *" - tmpfs "* ]]
	[[ "$(mountinfo_line /dev/pts)" == *" - devpts "* ]]
	[[ "$(mountinfo_line /dev/shm)" == *" - tmpfs "* ]]
	[[ "$(mountinfo_line /dev/mqueue)" == *" - mqueue "* ]]
	[[ "$(mountinfo_line /sys)" == *" - sysfs "* ]]
	[ -n "$(mountinfo_line /sys/fs/cgroup)" ]
	# /sys is read-only as the spec asks.
	[[ "$(awk '{print $6}' <<<"$(mountinfo_line /sys)")" == ro* ]]
}

@test "mounts: rslave propagation: host mounts made later appear inside" {
	# The source must be a shared mount for anything to propagate.
	mount --bind "$VOL" "$VOL"
	mount --make-shared "$VOL"
	mkdir -p "$VOL/late"
	add_mount "{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\", \"rslave\"]}"
	# The host creates /vol/mounted after its mount: mount propagation is
	# done by then, so one look at mountinfo tells.
	set_cmd 'while [ ! -e /vol/mounted ]; do sleep 0.05; done
		grep -q " /vol/late " /proc/self/mountinfo && echo seen || echo not-seen'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	out=$RUNTIME_OUTFILE
	mount -t tmpfs late "$VOL/late"
	touch "$VOL/mounted"
	wait_for_status "$CID" stopped
	umount "$VOL/late"
	umount "$VOL"
	grep -q seen "$out"
	! grep -q not-seen "$out"
}

@test "mounts: rprivate propagation: host mounts made later stay out" {
	mount --bind "$VOL" "$VOL"
	mount --make-shared "$VOL"
	mkdir -p "$VOL/late"
	add_mount "{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\", \"rprivate\"]}"
	set_cmd 'while [ ! -e /vol/mounted ]; do sleep 0.05; done
		grep -q " /vol/late " /proc/self/mountinfo && echo seen || echo not-seen'
	runtime_ok run -d -b "$BUNDLE" "$CID"
	out=$RUNTIME_OUTFILE
	mount -t tmpfs late "$VOL/late"
	touch "$VOL/mounted"
	wait_for_status "$CID" stopped
	umount "$VOL/late"
	umount "$VOL"
	grep -q not-seen "$out"
}

@test "mounts: a rootfs on a shared mount: pivot_root works and no container mount reaches the host" {
	requires root
	# init skips the parent mount's check after a recursive slave or
	# private propagation of /; try every propagation with the bundle on a
	# shared mount, which pivot_root refuses as the new root's parent, and
	# whose peers would otherwise get the container's mounts.
	mount --bind "$BUNDLE" "$BUNDLE"
	mount --make-shared "$BUNDLE"
	local prop leaked
	for prop in "" rslave rprivate slave private shared rshared; do
		if [[ -z "$prop" ]]; then
			update_config 'del(.linux.rootfsPropagation)'
		else
			update_config '.linux.rootfsPropagation = $p' "$BUNDLE" --arg p "$prop"
		fi
		set_args sleep 1000
		runtime_ok run -d -b "$BUNDLE" "$CID"
		leaked=$(awk -v r="$BUNDLE/rootfs" '$5 == r || index($5, r "/") == 1' /proc/self/mountinfo)
		runtime_ok delete --force "$CID"
		[[ -z "$leaked" ]] || fail "rootfsPropagation '$prop': container mounts on the host: $leaked"
	done
	umount "$BUNDLE"
}

@test "mounts: shared propagation option is visible in the container's mountinfo" {
	requires root
	add_mount '{"destination": "/sh", "type": "tmpfs", "source": "tmpfs", "options": ["shared"]}'
	update_config '.linux.rootfsPropagation = "shared"'
	run_container cat /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_line /sh)" == *" shared:"* ]]
}

@test "mounts: rootfsPropagation private: no shared or master mounts" {
	update_config '.linux.rootfsPropagation = "rprivate"'
	run_container cat /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[[ "$(mountinfo_line /)" != *shared:* && "$(mountinfo_line /)" != *master:* ]]
}

@test "mounts: a symlinked destination pointing outside the rootfs stays inside it" {
	outside="$BATS_TEST_TMPDIR/outside"
	mkdir -p "$outside"
	give_to_user "$outside"
	# /evil -> the host path of $outside, and a relative ../../ escape.
	ln -s "$outside" "$BUNDLE/rootfs/evil"
	ln -s ../../../../../../../../../../"$outside" "$BUNDLE/rootfs/evil2"
	add_mount '{"destination": "/evil", "type": "tmpfs", "source": "tmpfs"}'
	add_mount '{"destination": "/evil2/sub", "type": "tmpfs", "source": "tmpfs"}'
	update_config '.root.readonly = false'
	run_sh 'touch /evil/pwned /evil2/sub/pwned && echo wrote'
	# The runtime may refuse the mount or keep it inside the rootfs; it
	# must never mount on, or let the container write to, the host path.
	[ -z "$(host_mounts_under "$outside")" ]
	[ ! -e "$outside/pwned" ]
	[ ! -e "$outside/sub" ]
	if [ "$status" -eq 0 ]; then
		[ -d "$BUNDLE/rootfs/$outside" ]
	fi
}

@test "mounts: a symlinked bind source's destination is resolved in the rootfs too" {
	outside="$BATS_TEST_TMPDIR/outside"
	mkdir -p "$outside"
	give_to_user "$outside"
	ln -s "$outside" "$BUNDLE/rootfs/evil"
	add_mount "{\"destination\": \"/evil\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"bind\", \"ro\"]}"
	run_container cat /evil/file
	[ -z "$(host_mounts_under "$outside")" ]
	[ ! -e "$outside/file" ]
	if [ "$status" -eq 0 ]; then
		[ "$output" = from-host ]
	fi
}

@test "mounts: tmpcopyup fills a tmpfs with the image's files, and the image stays untouched" {
	mkdir -p "$BUNDLE/rootfs/srv/sub"
	echo from-image >"$BUNDLE/rootfs/srv/sub/f"
	chmod 0750 "$BUNDLE/rootfs/srv/sub"
	ln -s /etc/passwd "$BUNDLE/rootfs/srv/lnk"
	give_to_user "$BUNDLE/rootfs/srv"
	update_config '.root.readonly = true' "$BUNDLE"
	add_mount '{"destination": "/srv", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "tmpcopyup"]}'
	run_sh 'cat /srv/sub/f; stat -c %a /srv/sub; readlink /srv/lnk; echo new >/srv/sub/f && cat /srv/sub/f; grep " /srv " /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = from-image ]
	[ "${lines[1]}" = 750 ]
	[ "${lines[2]}" = /etc/passwd ]
	[ "${lines[3]}" = new ]
	[[ "${lines[4]}" == *" - tmpfs "* ]]
	# Writes went to the tmpfs, not to the image.
	[ "$(cat "$BUNDLE/rootfs/srv/sub/f")" = from-image ]
}

@test "mounts: a read-only /dev gets its devices, devpts and shm first, then is read-only" {
	update_config '(.mounts[] | select(.destination == "/dev")).options += ["ro"]'
	run_sh 'test -c /dev/null && echo null; test -e /dev/pts/ptmx && echo pts; grep -c " /dev/shm " /proc/self/mountinfo;
		touch /dev/newfile 2>&1; echo x > /dev/null && echo writes-to-null'
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == null && "${lines[1]}" == pts && "${lines[2]}" == 1 ]]
	[[ "$output" == *"Read-only file system"* ]]
	[[ "$output" == *writes-to-null* ]]
}

@test "mounts: a source under an earlier mount of the same config resolves after it (mount order)" {
	# /a is a bind of the volume; /b binds the rootfs's /a/sub, which only
	# exists once /a is mounted.
	mkdir -p "$VOL/sub"
	echo under-a >"$VOL/sub/f"
	give_to_user "$VOL"
	add_mount "{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\"]}"
	add_mount "{\"destination\": \"/b\", \"type\": \"bind\", \"source\": \"$BUNDLE/rootfs/a/sub\", \"options\": [\"rbind\", \"ro\"]}"
	# The same with a tmpfs filled by nothing: /c binds what /t is after its
	# mount, an empty tmpfs, not the image's /t.
	mkdir -p "$BUNDLE/rootfs/t/img"
	add_mount '{"destination": "/t", "type": "tmpfs", "source": "tmpfs"}'
	add_mount "{\"destination\": \"/c\", \"type\": \"bind\", \"source\": \"$BUNDLE/rootfs/t\", \"options\": [\"rbind\"]}"
	run_sh 'cat /b/f; ls /c | wc -l'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'under-a\n0')" ]
}

@test "mounts: a destination given as a host path into the rootfs mounts there (runc's stripRoot)" {
	# runc takes a destination lexically under the rootfs's host path as
	# relative to the rootfs: /final, not a copy of the host path inside.
	mkdir -p "$BUNDLE/rootfs/final"
	add_mount "{\"destination\": \"$BUNDLE/rootfs/final\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\"]}"
	run_sh "cat /final/file; if test -e '$BUNDLE'; then echo copied; fi"
	[ "$status" -eq 0 ]
	[ "$output" = from-host ]
}

@test "mounts: a host-path destination cannot climb out of the rootfs, by .. or by a symlink" {
	# ".." is cleaned away before the rootfs is stripped: the destination
	# is then not under the rootfs and stays a path inside the container.
	add_mount "{\"destination\": \"$BUNDLE/rootfs/../escape\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\"]}"
	# A symlink in the rootfs pointing at the host's bundle: once stripped
	# the destination is /link/x, resolved inside the rootfs.
	ln -s "$BUNDLE" "$BUNDLE/rootfs/link"
	add_mount "{\"destination\": \"$BUNDLE/rootfs/link/x\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\"]}"
	run_sh "cat '$BUNDLE/escape/file' '$BUNDLE/x/file'"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'from-host\nfrom-host')" ]
	[ ! -e "$BUNDLE/escape" ]
	[ ! -e "$BUNDLE/x" ]
	[ -d "$BUNDLE/rootfs/$BUNDLE/x" ]
}

@test "mounts: recursive attributes (rro, rnosuid, rnoexec, rnoatime) reach every submount" {
	mount_submount
	give_to_user "$VOL/sub"
	# In a user namespace the atime mode of mounts from the host is locked
	# (changing it is EPERM, runc's too): rootless, rnoatime is left out.
	local atime='"rnoatime"'
	is_rootless && atime='"rnosuid"'
	add_mount "{\"destination\": \"/rb\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\", \"rro\", \"rnosuid\", \"rnoexec\", $atime]}"
	# A plain "ro" leaves the submount writable; "rro" does not.
	add_mount "{\"destination\": \"/plain\", \"type\": \"bind\", \"source\": \"$VOL\", \"options\": [\"rbind\", \"ro\"]}"
	run_sh 'touch /rb/sub/x 2>&1; touch /plain/sub/y && echo plain-sub-writable; cat /proc/self/mountinfo'
	umount -l "$VOL/sub"
	[ "$status" -eq 0 ]
	[[ "$output" == *"touch: /rb/sub/x: Read-only file system"* ]]
	[[ "$output" == *plain-sub-writable* ]]
	local opts
	opts=$(mountinfo_line /rb/sub | awk '{print $6}')
	[[ "$opts" == ro,* && "$opts" == *nosuid* && "$opts" == *noexec* ]] || fail "/rb/sub: $opts"
	is_rootless || [[ "$opts" == *noatime* ]] || fail "/rb/sub: $opts"
	opts=$(mountinfo_line /rb | awk '{print $6}')
	[[ "$opts" == ro,* && "$opts" == *noexec* ]] || fail "/rb: $opts"
}
