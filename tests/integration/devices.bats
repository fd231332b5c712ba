#!/usr/bin/env bats
# /dev: the default device set, configured devices, masked and read-only paths.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "devices: the default set with the right numbers" {
	run_sh 'for d in null zero full random urandom tty; do
			stat -c "%n %F %t:%T" /dev/$d; done'
	[ "$status" -eq 0 ]
	# stat prints major:minor in hex.
	[ "${lines[0]}" = "/dev/null character special file 1:3" ]
	[ "${lines[1]}" = "/dev/zero character special file 1:5" ]
	[ "${lines[2]}" = "/dev/full character special file 1:7" ]
	[ "${lines[3]}" = "/dev/random character special file 1:8" ]
	[ "${lines[4]}" = "/dev/urandom character special file 1:9" ]
	[ "${lines[5]}" = "/dev/tty character special file 5:0" ]
}

@test "devices: the default devices work" {
	run_sh 'echo x > /dev/null && head -c 4 /dev/zero | od -An -tx1 && head -c 8 /dev/urandom | wc -c
		echo x > /dev/full || echo full-failed'
	[ "$status" -eq 0 ]
	[ "$(echo ${lines[0]})" = "00 00 00 00" ]
	[ "${lines[1]}" = 8 ]
	[[ "$output" == *"No space left on device"* && "$output" == *full-failed* ]]
}

@test "devices: ptmx, pts, shm, fd links; no console without a terminal" {
	run_sh 'readlink /dev/ptmx; readlink /dev/fd; readlink /dev/stdin; readlink /dev/stdout
		readlink /dev/stderr; test -d /dev/pts && echo pts; test -d /dev/shm && echo shm
		test -e /dev/console && echo console || echo no-console'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = pts/ptmx ]
	[ "${lines[1]}" = /proc/self/fd ]
	[ "${lines[2]}" = /proc/self/fd/0 ]
	[ "${lines[3]}" = /proc/self/fd/1 ]
	[ "${lines[4]}" = /proc/self/fd/2 ]
	[ "${lines[5]}" = pts ]
	[ "${lines[6]}" = shm ]
	[ "${lines[7]}" = no-console ]
}

@test "devices: /dev/ptmx listed in linux.devices is still the link to the container's devpts" {
	# As runc (its createDevices skips it): podman and docker configs list
	# it. Rootless the node would be a bind of the host's, which could not
	# be replaced by the link.
	update_config '.linux.devices += [{"path": "/dev/ptmx", "type": "c", "major": 5, "minor": 2, "fileMode": 438, "uid": 0, "gid": 0}]'
	run_sh 'readlink /dev/ptmx'
	[[ $status -eq 0 && "$output" == pts/ptmx ]] || fail "$output"
}

@test "devices: /dev holds only the default set" {
	run_sh 'ls -A /dev | sort | tr "\n" " "'
	[ "$status" -eq 0 ]
	[ "$output" = "fd full mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero " ]
}

@test "devices: a configured device node with its mode and owner" {
	# Rootless runtimes cannot mknod; they bind the host's node instead,
	# which needs the same path on the host.
	requires root
	update_config '.linux.devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3,
		"fileMode": 438, "uid": 1000, "gid": 1000}]'
	run_sh 'stat -c "%F %t:%T %a %u:%g" /dev/mynull; echo x > /dev/mynull && echo ok'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "character special file 1:3 666 1000:1000" ]
	[ "${lines[1]}" = ok ]
}

@test "devices: a configured device rootless is the host's node" {
	requires rootless
	# /dev/zero exists on every host; name it again under its own path.
	update_config '.linux.devices = [{"path": "/dev/zero", "type": "c", "major": 1, "minor": 5, "fileMode": 438}]'
	run_sh 'stat -c "%F %t:%T" /dev/zero'
	[ "$status" -eq 0 ]
	[ "$output" = "character special file 1:5" ]
}

# first_existing PATH...: the first PATH that exists on this host.
first_existing() {
	local p
	for p in "$@"; do
		[[ -e "$p" ]] && { echo "$p"; return 0; }
	done
	skip "none of $* exists on this kernel"
}

@test "devices: maskedPaths hide files and directories" {
	# Of the default masked paths, pick what this kernel has.
	file=$(first_existing /proc/kcore /proc/keys /proc/timer_list)
	dir=$(first_existing /proc/acpi /sys/firmware /proc/scsi)
	run_sh "wc -c < $file; ls -A $dir | wc -l; grep -c ' $file ' /proc/self/mountinfo"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 0 ]
	[ "${lines[1]}" = 0 ]
	[ "${lines[2]}" -ge 1 ]
}

@test "devices: empty maskedPaths masks nothing" {
	file=$(first_existing /proc/kcore /proc/keys /proc/timer_list)
	update_config '.linux.maskedPaths = []'
	run_sh "grep -c ' $file ' /proc/self/mountinfo || true"
	[ "$output" = 0 ]
}

@test "devices: readonlyPaths are read-only (EROFS)" {
	update_config '.root.readonly = false | .linux.readonlyPaths += ["/tmp"]'
	# /proc/sys is read-only by default; the uts namespace's hostname
	# would be writable otherwise.
	run_sh 'touch /tmp/x; echo name > /proc/sys/kernel/hostname'
	[ "$status" -ne 0 ]
	[ "$(grep -c 'Read-only file system' <<<"$output")" -eq 2 ]
	[ ! -e "$BUNDLE/rootfs/tmp/x" ]
}

@test "devices: a path listed twice in maskedPaths or readonlyPaths gets one mount; a mount at a masked path is masked" {
	local file dir
	file=$(first_existing /proc/kcore /proc/keys /proc/timer_list)
	dir=$(first_existing /proc/acpi /sys/firmware /proc/scsi)
	mkdir "$BATS_TEST_TMPDIR/data"
	echo secret >"$BATS_TEST_TMPDIR/data/f"
	give_to_user "$BATS_TEST_TMPDIR/data"
	# The same path, as given or in another spelling of it; and a bind
	# mount that is masked too (masks go on top of the mounts, as runc's).
	update_config '.root.readonly = false
		| .linux.maskedPaths += [$f, $f, $d, $d + "/", $d + "/.", "/data"]
		| .linux.readonlyPaths += ["/tmp", "/tmp/", "//tmp"]
		| .mounts += [{destination: "/data", type: "bind", source: $s, options: ["rbind"]}]' \
		"$BUNDLE" --arg f "$file" --arg d "$dir" --arg s "$BATS_TEST_TMPDIR/data"
	run_sh "for p in $file $dir /tmp /data; do grep -c \" \$p \" /proc/self/mountinfo; done; ls -A /data | wc -l; touch /tmp/x"
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 1 ]
	[ "${lines[2]}" = 1 ]
	[ "${lines[3]}" = 2 ]
	[ "${lines[4]}" = 0 ]
	[[ "${lines[5]}" == *"Read-only file system"* ]]
}

@test "devices: a masked path that does not exist is ignored" {
	update_config '.linux.maskedPaths += ["/no/such/path"] | .linux.readonlyPaths += ["/no/such/other"]'
	run_container true
	[ "$status" -eq 0 ]
}
