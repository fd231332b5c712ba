#!/usr/bin/env bats
# config.json process and root settings, checked from inside the container.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

# status_field NAME: the value of NAME: in the container's /proc/self/status.
status_field() {
	awk -v f="$1:" '$1 == f {print $2}' <<<"$output"
}

@test "config: env replaces the environment" {
	update_config '.process.env = ["PATH=/bin", "FOO=bar baz", "EMPTY="]'
	run_container env
	[ "$status" -eq 0 ]
	[ "$(sort <<<"$output" | grep -v '^HOME=')" = "$(printf 'EMPTY=\nFOO=bar baz\nPATH=/bin')" ]
}

@test "config: cwd" {
	update_config '.process.cwd = "/tmp"'
	run_container pwd
	[ "$status" -eq 0 ]
	[ "$output" = /tmp ]
}

@test "config: a cwd the user cannot traverse to works, as in runc (entered before the uid changes)" {
	use_subid_mappings
	mkdir -p "$BUNDLE/rootfs/root/work"
	chmod 0700 "$BUNDLE/rootfs/root"
	update_config '.process.user = {uid: 42, gid: 42} | .process.cwd = "/root/work"'
	run_sh 'pwd; id -u; ls /root 2>&1 >/dev/null | grep -c "Permission denied"'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '/root/work\n42\n1')" ]

	# A cwd that does not exist for anyone is still an error.
	update_config '.process.cwd = "/etc/passwd/x"'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	is_runc || [[ "$output" == *"cwd /etc/passwd/x"* ]]
}

@test "config: HOME comes from the container's /etc/passwd when unset or empty" {
	use_subid_mappings
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.env = ["PATH=/bin"]'
	run_sh 'echo "HOME=$HOME"'
	[ "$status" -eq 0 ]
	[ "$output" = "HOME=/home/user" ]

	update_config '.process.env = ["PATH=/bin", "HOME="]'
	run_sh 'echo "HOME=$HOME"; env | grep -c "^HOME="'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'HOME=/home/user\n1')" ]

	# One that is set is kept; a uid without an entry gets /.
	update_config '.process.env = ["PATH=/bin", "HOME=/srv"]'
	run_sh 'echo "HOME=$HOME"'
	[ "$output" = "HOME=/srv" ]
	update_config '.process.user = {uid: 4242, gid: 4242} | .process.env = ["PATH=/bin", "HOME="]'
	run_sh 'echo "HOME=$HOME"'
	[ "$status" -eq 0 ]
	[ "$output" = "HOME=/" ]
}

@test "config: unknown capabilities are dropped with a warning, as runc 1.2 does" {
	skip_if_runc "runc 1.1.5 refuses unknown capabilities (1.2 warns and drops them)"
	update_config '.process.capabilities.bounding += ["CAP_FLY"] | .process.capabilities.effective += ["CAP_NO_SUCH"]'
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	[[ "$output" == *'process.capabilities.bounding: ignoring unknown capabilities \"CAP_FLY\"'* ||
		"$output" == *'process.capabilities.bounding: ignoring unknown capabilities "CAP_FLY"'* ]]
	[ "$(status_field CapEff)" = 0000000020000420 ]
}

@test "config: process.apparmorProfile on a host without AppArmor fails create with the fix, as runc fails, and leaves nothing" {
	[[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y* ]] ||
		skip "AppArmor is enabled on this host: the profile would be applied"
	local p
	for p in cri-containerd.apparmor.d unconfined; do
		update_config '.process.apparmorProfile = $p' "$BUNDLE" --arg p "$p"
		run_container true
		[ "$status" -ne 0 ]
		if is_runc; then
			[[ "$output" == *"apparmor failed to apply profile"* ]]
		else
			[ "${#lines[@]}" -eq 1 ]
			[[ "$output" == *"process.apparmorProfile \"$p\": AppArmor is not enabled on this host"*"leave process.apparmorProfile out"* ]]
		fi
		assert_nothing_left "$CID"
	done

	# exec --apparmor on the same host: the same refusal, the container
	# untouched.
	update_config 'del(.process.apparmorProfile)'
	run_detached
	runtime exec --apparmor docker-default "$CID" true
	[ "$status" -ne 0 ]
	is_runc || [[ "$output" == *'--apparmor "docker-default": AppArmor is not enabled on this host'* ]]
	[ "$(container_status "$CID")" = running ]
}

@test "config: args are passed verbatim" {
	run_container /bin/echo 'a  b' '$HOME' '"q"'
	[ "$status" -eq 0 ]
	[ "$output" = 'a  b $HOME "q"' ]
}

@test "config: user uid and gid" {
	use_subid_mappings
	update_config '.process.user = {uid: 1000, gid: 1000}'
	run_sh 'id -u; id -g; id -un'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[ "${lines[2]}" = user ]
}

@test "config: user additionalGids" {
	use_subid_mappings
	if is_runc && is_rootless; then
		skip "runc 1.1.5 refuses additional groups in any rootless container, even with newgidmap ranges"
	fi
	update_config '.process.user = {uid: 1000, gid: 1000, additionalGids: [1001, 29]}'
	run_sh 'grep ^Groups: /proc/self/status'
	[ "$status" -eq 0 ]
	groups=$(echo "${output#Groups:}" | tr -s ' \t' '\n' | grep . | sort -n | tr '\n' ' ')
	[ "$groups" = "29 1001 " ]
}

@test "config: root user by default" {
	run_sh 'id -u; id -g'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '0\n0')" ]
}

@test "config: umask" {
	update_config '.process.user.umask = 63'
	run_container sh -c umask
	[ "$status" -eq 0 ]
	[ "$output" = 0077 ]
}

@test "config: hostname" {
	update_config '.hostname = "box-test"'
	run_container hostname
	[ "$status" -eq 0 ]
	[ "$output" = box-test ]
	# The host's name is untouched.
	[ "$(hostname)" != box-test ]
}

@test "config: domainname" {
	skip_if_runc "runc 1.1.5 ignores domainname (the kernel keeps (none))"
	update_config '.hostname = "box-test" | .domainname = "example.test"'
	run_container cat /proc/sys/kernel/domainname
	[ "$status" -eq 0 ]
	[ "$output" = example.test ]
}

@test "config: rlimits" {
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 100, hard: 200},
		{type: "RLIMIT_CORE", soft: 0, hard: 0}]'
	run_sh 'ulimit -n; ulimit -Hn; grep "Max core" /proc/self/limits'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 100 ]
	[ "${lines[1]}" = 200 ]
	[[ "${lines[2]}" =~ Max\ core\ file\ size[[:space:]]+0[[:space:]]+0 ]]
}

@test "config: noNewPrivileges true and false" {
	update_config '.process.noNewPrivileges = true'
	run_container cat /proc/self/status
	[ "$(status_field NoNewPrivs)" = 1 ]
	update_config '.process.noNewPrivileges = false'
	run_container cat /proc/self/status
	[ "$(status_field NoNewPrivs)" = 0 ]
}

@test "config: oomScoreAdj" {
	update_config '.process.oomScoreAdj = 123'
	run_container cat /proc/self/oom_score_adj
	[ "$status" -eq 0 ]
	[ "$output" = 123 ]
}

@test "config: default capabilities are the spec's three" {
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	# CAP_KILL (5), CAP_NET_BIND_SERVICE (10), CAP_AUDIT_WRITE (29).
	[ "$(status_field CapEff)" = 0000000020000420 ]
	[ "$(status_field CapPrm)" = 0000000020000420 ]
	[ "$(status_field CapBnd)" = 0000000020000420 ]
	# Ambient capabilities not also inheritable are dropped by the kernel.
	[ "$(status_field CapAmb)" = 0000000000000000 ]
	[ "$(status_field CapInh)" = 0000000000000000 ]
}

@test "config: no process.capabilities grants none, as runc; an exec'd process file without them gets the container's" {
	update_config 'del(.process.capabilities)'
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	[ "$(status_field CapEff)" = 0000000000000000 ]
	[ "$(status_field CapPrm)" = 0000000000000000 ]
	[ "$(status_field CapBnd)" = 0000000000000000 ]

	update_config '.process.capabilities = {bounding: ["CAP_KILL"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"]}'
	run_detached
	local proc="$BATS_TEST_TMPDIR/process.json"
	jq '.process | .args = ["cat", "/proc/self/status"] | del(.capabilities) | .terminal = false' "$BUNDLE/config.json" >"$proc"
	chmod 0644 "$proc"
	runtime exec --process "$proc" "$CID"
	[ "$status" -eq 0 ]
	[ "$(status_field CapEff)" = 0000000000000020 ]
	[ "$(status_field CapBnd)" = 0000000000000020 ]
}

@test "config: capabilities, all five sets" {
	update_config '.process.capabilities = {
		bounding: ["CAP_CHOWN", "CAP_KILL", "CAP_SYS_ADMIN"],
		effective: ["CAP_CHOWN"],
		permitted: ["CAP_CHOWN", "CAP_KILL"],
		inheritable: ["CAP_KILL"],
		ambient: ["CAP_KILL"]}'
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	# The exec'd program: effective = permitted = ambient-derived for root
	# is the runtime's business; the sets the kernel reports after execve:
	[ "$(status_field CapBnd)" = 0000000000200021 ]
	[ "$(status_field CapInh)" = 0000000000000020 ]
	[ "$(status_field CapAmb)" = 0000000000000020 ]
	# As uid 0 the kernel recomputes permitted/effective from bounding on
	# execve (no SECBIT_NOROOT), so only check they stay within bounding.
	[ $((16#$(status_field CapEff) & ~16#200021)) -eq 0 ]
}

@test "config: a non-root user keeps exactly the ambient capabilities" {
	use_subid_mappings
	update_config '.process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {
			bounding: ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
			effective: ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
			permitted: ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
			inheritable: ["CAP_NET_BIND_SERVICE"],
			ambient: ["CAP_NET_BIND_SERVICE"]}'
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	[ "$(status_field CapEff)" = 0000000000000400 ]
	[ "$(status_field CapAmb)" = 0000000000000400 ]
	[ "$(status_field CapBnd)" = 0000000000000420 ]
}

@test "config: no capabilities at all" {
	update_config '.process.capabilities = {}'
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	[ "$(status_field CapEff)" = 0000000000000000 ]
	[ "$(status_field CapBnd)" = 0000000000000000 ]
}

@test "config: root.readonly makes / read-only (EROFS)" {
	update_config '.root.readonly = true'
	run_sh 'touch /newfile'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	[ ! -e "$BUNDLE/rootfs/newfile" ]
}

@test "config: root.readonly false lets the container write its rootfs" {
	update_config '.root.readonly = false'
	run_sh 'echo written > /newfile'
	[ "$status" -eq 0 ]
	[ "$(cat "$BUNDLE/rootfs/newfile")" = written ]
}

@test "config: root.path may be absolute" {
	mv "$BUNDLE/rootfs" "$BATS_TEST_TMPDIR/elsewhere"
	update_config '.root.path = $p' "$BUNDLE" --arg p "$BATS_TEST_TMPDIR/elsewhere"
	run_container echo absolute root
	[ "$status" -eq 0 ]
	[ "$output" = "absolute root" ]
}

@test "config: sysctl in the container's own namespaces" {
	update_config '.linux.sysctl = {"kernel.shmmax": "12345678", "fs.mqueue.msg_max": "17"}'
	run_sh 'cat /proc/sys/kernel/shmmax /proc/sys/fs/mqueue/msg_max'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 12345678 ]
	[ "${lines[1]}" = 17 ]
	[ "$(cat /proc/sys/kernel/shmmax)" != 12345678 ]
}

@test "config: network sysctl in a new network namespace" {
	requires root
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.forwarding": "1"}'
	run_container cat /proc/sys/net/ipv4/ip_forward
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
}

@test "config: annotations are accepted and not interpreted" {
	update_config '.annotations = {"io.example/anything": "at all", "empty": ""}'
	run_container true
	[ "$status" -eq 0 ]
}

@test "config: an unsupported field is an error, not ignored" {
	requires nanobox
	update_config '.linux.intelRdt = {"closID": "nanobox-test"}'
	run_container true
	[ "$status" -ne 0 ]
	[[ "$output" == *intelRdt* ]]
	assert_nothing_left "$CID"
}

@test "config: init joins a new session keyring _ses.<id>; --no-new-keyring keeps the caller's" {
	update_config '.linux.maskedPaths -= ["/proc/keys"]'
	set_args sh -c 'grep -c " keyring *_ses\.'"$CID"':" /proc/keys || true'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	set_args sh -c 'grep -c " keyring *_ses\.'"$CID"'-2:" /proc/keys || true'
	runtime run --no-new-keyring -b "$BUNDLE" "$CID-2"
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
}

@test "config: linux.personality LINUX32, for init and exec" {
	skip_if_runc "runc 1.1.5 has no linux.personality (1.2 has)"
	[[ "$(uname -m)" == x86_64 ]] || skip "LINUX32 is checked through uname -m on x86_64"
	update_config '.linux.personality = {domain: "LINUX32"}'
	run_container uname -m
	[ "$status" -eq 0 ]
	[ "$output" = i686 ]
	run_detached
	runtime exec "$CID" uname -m
	[ "$status" -eq 0 ]
	[ "$output" = i686 ]

	update_config '.linux.personality = {domain: "LINUX64"}'
	runtime run -b "$BUNDLE" "$CID-bad"
	[ "$status" -ne 0 ]
	[[ "$output" == *'linux.personality.domain "LINUX64" is not one of LINUX, LINUX32'* ]]
}

@test "config: linux.memoryPolicy binds the program's memory to the nodes, for init and exec" {
	skip_if_runc "runc 1.1.5 has no linux.memoryPolicy (1.3 has)"
	[[ -e /proc/self/numa_maps ]] || skip "the kernel has no NUMA (CONFIG_NUMA): no numa_maps to check"
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0"}'
	run_sh 'grep -c " bind:0 " /proc/self/numa_maps'
	[ "$status" -eq 0 ]
	[ "$output" -gt 0 ]
	run_detached
	runtime exec "$CID" sh -c 'grep -c " bind:0 " /proc/self/numa_maps'
	[ "$status" -eq 0 ]
	[ "$output" -gt 0 ]
	runtime_ok delete --force "$CID"

	# A node that is not online fails create with the reason.
	local last
	last=$(ls -d /sys/devices/system/node/node* | sed 's/.*node//' | sort -n | tail -1)
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: ($n | tostring)}' "$BUNDLE" --argjson n "$((last + 1))"
	runtime run -b "$BUNDLE" "$CID-bad"
	[ "$status" -ne 0 ]
	[[ "$output" == *"set linux.memoryPolicy: invalid memory policy: set_mempolicy: invalid argument: a node that is not online"* ]]
	assert_nothing_left "$CID-bad"
}

@test "config: a capability the runtime cannot grant is left out with a warning, not a failure" {
	skip_if_runc "runc 1.1.5 fails capset for a capability it does not hold"
	requires root
	# Root on this host lacks CAP_SYS_RESOURCE (see common set-up); where
	# it holds it, there is nothing to leave out.
	[[ $(( 16#$(awk '$1 == "CapBnd:" {print $2}' /proc/self/status) >> 24 & 1 )) -eq 0 ]] ||
		skip "the runtime holds CAP_SYS_RESOURCE here"
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_RESOURCE"])'
	run_container cat /proc/self/status
	[ "$status" -eq 0 ]
	[[ "$output" == *"capabilities CAP_SYS_RESOURCE cannot be granted: the runtime does not hold them"* ]]
	[ "$(status_field CapEff)" = 0000000020000420 ]
}
