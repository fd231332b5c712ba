#!/usr/bin/env bats
# Landlock policies from the org.nanobox.landlock annotation, rootful and
# rootless. Paths in the policy are container paths.

load helpers
load gohelpers

setup() {
	requires nanobox
	setup_test
	update_config '.root.readonly = false'
}

teardown() {
	teardown_test
}

# landlock_abi: the running kernel's Landlock ABI, as `features` reports it.
landlock_abi() {
	__runtime features | jq -r '.annotations["org.nanobox.landlock.abi"] // "0"'
}

# requires_landlock [ABI]: skip unless the kernel has Landlock ABI >= ABI.
requires_landlock() {
	local abi
	abi=$(landlock_abi)
	[[ "$abi" -ge "${1:-1}" ]] || skip "test requires Landlock ABI ${1:-1} (this kernel: $abi)"
}

# landlock JSON: the container's Landlock policy.
landlock() {
	update_config '.annotations["org.nanobox.landlock"] = $p' "$BUNDLE" --arg p "$1"
}

@test "landlock: a read-only path cannot be written, a read-write one can" {
	requires_landlock
	landlock '{"readOnly": ["/"], "readWrite": ["/tmp"]}'
	run_sh 'echo x > /etc/f; echo etc=$?; mkdir /root/d; echo root=$?
		echo y > /tmp/f && cat /tmp/f && mkdir /tmp/d && mv /tmp/f /tmp/d/g && rm -r /tmp/d && echo tmp-ok
		head -1 /etc/passwd'
	[ "$status" -eq 0 ]
	[[ "$output" == *"can't create /etc/f: Permission denied"* && "$output" == *"etc=1"* ]]
	[[ "$output" == *"can't create directory '/root/d': Permission denied"* && "$output" == *"root=1"* ]]
	[[ "$output" == *$'y\ntmp-ok\nroot:x:0:0'* ]]
	[ ! -e "$BUNDLE/rootfs/etc/f" ]
}

@test "landlock: a path in no list cannot be read or listed" {
	requires_landlock
	landlock '{"readOnly": ["/bin"], "readWrite": ["/tmp"]}'
	run_sh 'cat /etc/passwd; echo cat=$?; ls /; echo ls=$?; ls /bin | grep -c busybox'
	[ "$status" -eq 0 ]
	[[ "$output" == *"can't open '/etc/passwd': Permission denied"* && "$output" == *"cat=1"* ]]
	[[ "$output" == *"ls=1"* ]]
	[[ "$output" == *$'\n1' ]]

	# A single file can be listed too.
	landlock '{"readOnly": ["/bin", "/etc/passwd"]}'
	run_sh 'head -1 /etc/passwd; cat /etc/group; echo group=$?'
	[ "$status" -eq 0 ]
	[[ "$output" == *"root:x:0:0"* && "$output" == *"group=1"* ]]
}

@test "landlock: the program itself must be in a list" {
	requires_landlock
	landlock '{"readOnly": ["/etc"]}'
	run_container sh -c 'echo should-not-run'
	[ "$status" -ne 0 ]
	[[ "$output" != *should-not-run* ]]
	[[ "$output" == *"ermission denied"* ]]
}

@test "landlock: sets no_new_privs for a process that would be refused without it" {
	requires_landlock
	update_config '.process.noNewPrivileges = false'
	landlock '{"readOnly": ["/"]}'
	run_sh 'grep NoNewPrivs /proc/self/status; echo x > /tmp/f; echo w=$?'
	[ "$status" -eq 0 ]
	[[ "$output" == *"NoNewPrivs:"*"1"* && "$output" == *"w=1"* ]]
}

@test "landlock: with seccomp, both apply" {
	requires_landlock
	landlock '{"readOnly": ["/"], "readWrite": ["/tmp"]}'
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]}'
	run_sh 'echo x > /etc/f; mkdir /tmp/d; echo y > /tmp/f && echo ok'
	[ "$status" -eq 0 ]
	[[ "$output" == *"Permission denied"* && "$output" == *"Function not implemented"* && "$output" == *ok ]]
}

@test "landlock: restrictNetwork denies TCP bind and connect except the listed ports" {
	requires_landlock 4
	landlock '{"restrictNetwork": true, "allowConnect": [7], "allowBind": [7007]}'
	# Nothing listens on these ports: an allowed connect is refused by the
	# peer, a denied one by Landlock.
	run_sh 'echo | nc 127.0.0.1 9; echo | nc 127.0.0.1 7
		timeout 30 nc -l -p 9009; echo bind9009=$?; timeout 1 nc -l -p 7007; echo bind7007=$?'
	[ "$status" -eq 0 ]
	[ "$(grep -c 'Permission denied' <<<"$output")" -eq 2 ]
	[[ "$output" == *"bind9009=1"* ]]
	# Allowed: nc listens until timeout kills it (SIGTERM: 143).
	[[ "$output" == *"bind7007=143"* ]]
	# The filesystem is not restricted by a network-only policy.
	run_sh 'echo x > /tmp/f && cat /tmp/f'
	[ "$status" -eq 0 ]
	[ "$output" = x ]
}

@test "landlock: required on a kernel without Landlock fails create; best effort warns" {
	local probe real=$RUNTIME
	# A seccomp filter that makes the Landlock system calls fail with
	# ENOSYS, around the runtime: to it the kernel has no Landlock.
	probe=$(build_test_helper sysprobe static) || skip "cannot build tests/integration/sysprobe (needs go)"
	printf '#!/bin/sh\nexec %s without-landlock %s "$@"\n' "$probe" "$real" >"$BATS_TEST_TMPDIR/no-landlock-runtime"
	chmod 0755 "$BATS_TEST_TMPDIR/no-landlock-runtime"
	RUNTIME="$BATS_TEST_TMPDIR/no-landlock-runtime"
	[ "$(landlock_abi)" = 0 ]

	landlock '{"readOnly": ["/"], "required": true}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"landlock is required but this kernel does not have it"* ]]
	assert_nothing_left "$CID"

	landlock '{"readOnly": ["/"]}'
	run_sh 'echo x > /etc/f && echo written'
	[ "$status" -eq 0 ]
	[[ "$output" == *"org.nanobox.landlock]: this kernel has no Landlock: the policy is not enforced"* ]]
	[[ "$output" == *written ]]
	RUNTIME=$real
}

@test "landlock: a bad policy fails create, naming the annotation" {
	landlock '{"readOnly": ["/"], "readWrit": ["/tmp"]}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'annotations[org.nanobox.landlock]: json: unknown field "readWrit"'* ]]
	assert_nothing_left "$CID"

	landlock '{"readOnly": ["etc"]}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'readOnly path "etc" must be an absolute container path'* ]]

	# A path missing from the rootfs fails create, not the start.
	landlock '{"readOnly": ["/bin", "/no/such/dir"]}'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"landlock: readOnly path /no/such/dir: no such file or directory"* ]]
	assert_nothing_left "$CID"
}
