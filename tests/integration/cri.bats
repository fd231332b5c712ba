#!/usr/bin/env bats
# Kubernetes' path: containerd's CRI plugin, driven by crictl, runs pods on
# nanobox-runc through the runtime handler of the README (its BinaryName is
# the runtime under test), as a kubelet does through a RuntimeClass. One
# test per item of issue 14's "What must work". Root only; containerd runs
# with a private config, root, state and socket in a network namespace of
# its own, started and stopped by this file (clients/cri.bash).

load helpers
load clients/clients
load clients/images
load clients/cri

bats_require_minimum_version 1.5.0

# bats 1.8 cannot skip from setup_file: it leaves the reason for setup().
setup_file() {
	export CLIENTS_SKIP=
	local p
	if [[ "${ROOTLESS:-0}" == 1 ]]; then
		CLIENTS_SKIP="the CRI plugin runs as root (rootless containerd is not part of this suite)"
	elif [[ $EUID -ne 0 ]]; then
		CLIENTS_SKIP="the client suites run as root"
	fi
	for p in containerd ctr containerd-shim-runc-v2 nsenter ip gcc; do
		[[ -n "$CLIENTS_SKIP" ]] || command -v "$p" >/dev/null ||
			CLIENTS_SKIP="$p is not installed (apt-get install containerd containernetworking-plugins iproute2 gcc libc6-dev)"
	done
	[[ -n "$CLIENTS_SKIP" || -x /usr/lib/cni/bridge ]] ||
		CLIENTS_SKIP="the CNI plugins are not installed (apt-get install containernetworking-plugins)"
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	[[ -x "$RUNTIME" ]] || fail "runtime $RUNTIME is not built (go build -o nanobox-runc .)"
	export CRI_HANDLER CRI_SLICE="nbx-cri-$$.slice"
	CRI_HANDLER=$(cri_handler) || return 1
	cri_start "$BATS_FILE_TMPDIR/cri"
}

teardown_file() {
	cri_stop
	# The teardown test checks that none is left.
	cri_remove_slices
}

setup() {
	[[ -z "$CLIENTS_SKIP" ]] || skip "$CLIENTS_SKIP"
	P=nbx-pod-$BATS_TEST_NUMBER
}

teardown() {
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	if [[ -n "${BG_PID:-}" ]]; then
		kill "$BG_PID" 2>/dev/null
		wait "$BG_PID" 2>/dev/null
	fi
	cri_rm_all
}

# in_tty CMD...: CMD with a pty as its stdin/stdout.
in_tty() {
	script -qefc "$(printf '%q ' "$@")" /dev/null </dev/null
}

@test "cri: runp a pod on the nanobox handler, whose cgroup parent is a .slice" {
	runp "$P"
	cc_ok inspectp -o json "$POD"
	[ "$(jq -r .status.state <<<"$output")" = SANDBOX_READY ]
	[ "$(jq -r .status.runtimeHandler <<<"$output")" = "$CRI_HANDLER" ]
	[ "$(jq -r .info.runtimeOptions.binary_name <<<"$output")" = "$(clients_runtime_path)" ]
	pid=$(jq -r .info.pid <<<"$output")
	[ "$pid" -gt 0 ]
	grep -qx pause "/proc/$pid/comm"
	# nanobox-runc created it: its state is under the handler's Root.
	[ -f "$CRI_DIR/nanobox/$CRI_NS/$POD/state.json" ]
	# containerd turned the slice into "slice:cri-containerd:ID", which the
	# runtime took as one cgroup name below its caller's cgroup.
	[[ "$(cgroup_of "$pid" pids)" == */"$CRI_SLICE:cri-containerd:$POD" ]]
	# The CNI bridge gave it an address in the suite's namespace.
	[[ "$(jq -r .status.network.ip <<<"$output")" == 10.250.77.* ]]
}

TRAPPER='trap "echo bye; exit 0" TERM; echo started; while :; do sleep 0.1; done'

# logs_of ID: the container's log as crictl shows it (stdout and stderr).
logs_of() {
	crictl_cmd logs "$1" 2>&1
}

@test "cri: create, start, logs, stop and rm containers; exit codes" {
	runp "$P"
	start_ctr c1 . sh -c "$TRAPPER"
	retry 100 0.1 eval "logs_of $CTR | grep -q started"
	[ "$(ctr_state "$CTR")" = CONTAINER_RUNNING ]
	c1=$CTR
	[ -f "$CRI_DIR/nanobox/$CRI_NS/$c1/state.json" ]

	# StopContainer: SIGTERM (the trap exits 0), then the exit is recorded.
	cc_ok stop -t 30 "$c1"
	[ "$(ctr_state "$c1")" = CONTAINER_EXITED ]
	[ "$(crictl_cmd inspect -o json "$c1" | jq -r .status.exitCode)" = 0 ]
	logs_of "$c1" | grep -qx bye

	# A container that exits by itself, with output on both streams.
	start_ctr c2 . sh -c 'echo out; echo err >&2; exit 3'
	c2=$CTR
	wait_ctr_state "$c2" CONTAINER_EXITED
	cc_ok inspect -o json "$c2"
	[ "$(jq -r .status.exitCode <<<"$output")" = 3 ]
	[ "$(jq -r .status.reason <<<"$output")" = Error ]
	cc_ok logs "$c2"
	[ "$output" = out ]
	[ "$stderr" = err ]
	# The log file is in the pod's log directory, in the CRI format.
	grep -q ' stderr F err$' "$CRI_DIR/logs/$P/c2.log"

	cc_ok ps -a -q --pod "$POD"
	[ "$(wc -l <<<"$output")" -eq 2 ]
	cc_ok rm "$c1" "$c2"
	cc_ok ps -a -q --pod "$POD"
	[ -z "$output" ]
	[ ! -e "$CRI_DIR/nanobox/$CRI_NS/$c1" ]
	[ ! -e "$CRI_DIR/nanobox/$CRI_NS/$c2" ]
}

@test "cri: exec with and without a tty, sync and streaming, and exit codes" {
	runp "$P"
	start_ctr c1 . sleep 1000

	# ExecSync (crictl exec -s).
	cc exec -s "$CTR" sh -c 'echo in-container; exit 7'
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"exited with 7"* ]]
	cc_ok exec -s "$CTR" sh -c 'echo in-container'
	[ "$output" = in-container ]

	# Exec through the streaming server, with stdin.
	run --separate-stderr crictl_cmd exec -i "$CTR" sh -c 'read x; echo "got $x"; [ -t 0 ] || echo not-a-tty' <<<"ping"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "got ping" ]
	[ "${lines[1]}" = not-a-tty ]
	# crictl exits 1 and names the command's status.
	cc exec "$CTR" sh -c 'exit 5'
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"exit code 5"* ]]

	# -t: a pty from the runtime's console socket.
	run --separate-stderr in_tty nsenter --net="/run/netns/$CRI_NETNS" "$CRI_CRICTL" \
		--config "$CRI_DIR/crictl.yaml" exec -it "$CTR" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo stdio-is-tty; exit 6'
	echo "$output"
	[[ "$output" == *"/dev/pts/"* ]]
	[[ "$output" == *stdio-is-tty* ]]
	[[ "$output$stderr" == *"exit code 6"* ]]

	# A command that is not there.
	cc exec -s "$CTR" nosuch
	[ "$status" -ne 0 ]
	[[ "$output$stderr" == *nosuch* ]]
	[ "$(ctr_state "$CTR")" = CONTAINER_RUNNING ]
}

@test "cri: attach to a container's stdin and stdout" {
	runp "$P"
	start_ctr c1 '.stdin = true | .stdin_once = true' sh -c 'read x; echo "got $x"; exit 4'
	# attach streams until the container exits.
	run --separate-stderr crictl_cmd attach -i "$CTR" <<<"hello"
	echo "$output $stderr"
	[[ "$output" == *"got hello"* ]]
	wait_ctr_state "$CTR" CONTAINER_EXITED
	[ "$(crictl_cmd inspect -o json "$CTR" | jq -r .status.exitCode)" = 4 ]
	logs_of "$CTR" | grep -qx 'got hello'
}

@test "cri: stats and update of a running container" {
	runp "$P"
	# 8 MB in a tmpfs: memory the container's cgroup is charged for.
	start_ctr c1 '.linux.resources = {memory_limit_in_bytes: 134217728}' \
		sh -c 'head -c 8000000 /dev/zero >/dev/shm/fill; echo filled; sleep 1000'
	retry 100 0.1 eval "logs_of $CTR | grep -q filled"
	# containerd collects the stats from the shim's cgroup reader; poll
	# until it has a sample.
	retry 100 0.1 eval "crictl_cmd stats -o json $CTR | jq -e '.stats[0].memory.workingSetBytes.value | tonumber > 8000000'"
	cc_ok stats -o json "$CTR"
	[ "$(jq -r '.stats[0].attributes.id' <<<"$output")" = "$CTR" ]
	[ "$(jq -r '.stats[0].cpu.usageCoreNanoSeconds.value' <<<"$output")" -gt 0 ]
	# The limit is the container's cgroup's.
	pid=$(cri_ctr_pid "$CTR")
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq 134217728 ]
	[[ "$(cgroup_of "$pid" memory)" == */"$CRI_SLICE:cri-containerd:$CTR" ]]

	# UpdateContainerResources (a resize) -> the shim's `update --resources -`.
	cc_ok update --memory 100663296 --cpu-quota 50000 --cpu-period 100000 "$CTR"
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq 100663296 ]
	if cgroup_v2; then
		[ "$(cgroup_read "$pid" cpu - cpu.max)" = "50000 100000" ]
	else
		[ "$(cgroup_read "$pid" cpu cpu.cfs_quota_us -)" = 50000 ]
	fi
	[ "$(ctr_state "$CTR")" = CONTAINER_RUNNING ]
}

@test "cri: port-forward reaches a server on the pod's loopback" {
	runp "$P"
	start_ctr web . sh -c 'mkdir /tmp/www && echo hello-from-the-pod >/tmp/www/index.html &&
		exec httpd -f -p 127.0.0.1:8080 -h /tmp/www'
	crictl_cmd port-forward "$POD" 18080:8080 >"$BATS_TEST_TMPDIR/pf.log" 2>&1 &
	BG_PID=$!
	retry 300 0.1 grep -q "Forwarding from 127.0.0.1:18080" "$BATS_TEST_TMPDIR/pf.log"
	# From the suite's network namespace, where crictl listens.
	run retry 100 0.1 nsenter --net="/run/netns/$CRI_NETNS" /bin/busybox wget -q -O - http://127.0.0.1:18080/
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *hello-from-the-pod* ]]
}

@test "cri: a container over its memory limit is OOMKilled" {
	runp "$P"
	start_ctr hog '.linux.resources = {memory_limit_in_bytes: 33554432}' tail /dev/zero
	wait_ctr_state "$CTR" CONTAINER_EXITED
	cc_ok inspect -o json "$CTR"
	[ "$(jq -r .status.reason <<<"$output")" = OOMKilled ]
	[ "$(jq -r .status.exitCode <<<"$output")" = 137 ]
}

@test "cri: host path volumes, read-only, and through a symlink" {
	export VOL="$BATS_TEST_TMPDIR/vol"
	mkdir -p "$VOL/rw" "$VOL/ro"
	echo from-host >"$VOL/ro/in"
	ln -s rw "$VOL/link"
	runp "$P"
	start_ctr c1 '.mounts = [{container_path: "/rw", host_path: ($ENV.VOL + "/rw")},
		{container_path: "/ro", host_path: ($ENV.VOL + "/ro"), readonly: true},
		{container_path: "/link", host_path: ($ENV.VOL + "/link")}]' \
		sh -c 'echo from-container >/rw/out; cat /ro/in; echo x >/ro/out || echo ro-refused
			echo via-link >/link/link-out; [ -d /link ] && [ ! -L /link ] && echo link-is-dir; echo done'
	wait_ctr_state "$CTR" CONTAINER_EXITED
	cc_ok logs "$CTR"
	[ "${lines[0]}" = from-host ]
	[ "${lines[1]}" = ro-refused ]
	[ "${lines[2]}" = link-is-dir ]
	[[ "$stderr" == *"Read-only file system"* ]]
	[ "$(cat "$VOL/rw/out")" = from-container ]
	[ ! -e "$VOL/ro/out" ]
	# The symlinked host path is its target, as the kubelet's hostPath.
	[ "$(cat "$VOL/rw/link-out")" = via-link ]
}

@test "cri: a read-only root filesystem" {
	runp "$P"
	start_ctr c1 '.linux.security_context.readonly_rootfs = true' \
		sh -c 'grep " / " /proc/mounts; touch /file || echo refused'
	wait_ctr_state "$CTR" CONTAINER_EXITED
	cc_ok logs "$CTR"
	[[ "${lines[0]}" == *" ro,"* || "${lines[0]}" == *" ro "* ]]
	[ "${lines[1]}" = refused ]
	[[ "$stderr" == *"Read-only file system"* ]]
}

@test "cri: mount propagation private, rslave (host to container) and rshared (bidirectional)" {
	export PROP="$BATS_TEST_TMPDIR/prop"
	mkdir -p "$PROP"/{private,slave,shared}/m
	# containerd checks that the sources of rslave and rshared mounts are
	# on a shared mount.
	mount --bind "$PROP" "$PROP"
	mount --make-rshared "$PROP"
	runp "$P"
	start_ctr c1 '.mounts = [
		{container_path: "/private", host_path: ($ENV.PROP + "/private"), propagation: 0},
		{container_path: "/slave", host_path: ($ENV.PROP + "/slave"), propagation: 1},
		{container_path: "/shared", host_path: ($ENV.PROP + "/shared"), propagation: 2}]
		| .linux.security_context.capabilities.add_capabilities = ["SYS_ADMIN"]' sleep 1000

	# The host mounts after the start: seen through rslave, not private.
	mount -t tmpfs -o size=1m nbx-host "$PROP/private/m"
	mount -t tmpfs -o size=1m nbx-host "$PROP/slave/m"
	cc_ok exec -s "$CTR" cat /proc/self/mountinfo
	[[ "$output" != *" /private/m "* ]]
	[[ "$output" == *" /slave/m "*nbx-host* ]]
	# The container mounts: seen by the host through rshared only.
	cc_ok exec -s "$CTR" sh -c 'mount -t tmpfs -o size=1m nbx-ctr /shared/m && mount -t tmpfs -o size=1m nbx-ctr /slave/m/x 2>/dev/null; echo mounted'
	[ "$output" = mounted ]
	grep -q " ${PROP}/shared/m .*nbx-ctr" /proc/self/mountinfo
	cc_ok stop -t 0 "$CTR"
	cc_ok rm "$CTR"
	umount "$PROP/shared/m" "$PROP/slave/m" "$PROP/private/m"
	umount "$PROP"
}

@test "cri: run as a user and group, no new privileges" {
	runp "$P"
	start_ctr c1 '.linux.security_context += {run_as_user: {value: 1000}, run_as_group: {value: 1000},
		supplemental_groups: [1001], no_new_privs: true}' \
		sh -c "id -u; id -g; id -G; grep ^NoNewPrivs: /proc/self/status; $CAPEFF_SNIPPET; touch /root/x || echo refused"
	wait_ctr_state "$CTR" CONTAINER_EXITED
	cc_ok logs "$CTR"
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	[[ " ${lines[2]} " == *" 1001 "* ]]
	[[ "${lines[3]}" == *1 ]]
	[ "${lines[4]}" = 0000000000000000 ]
	[ "${lines[5]}" = refused ]
}

@test "cri: seccomp as the CRI fills it: unset, RuntimeDefault, Localhost" {
	seccomp_deny_mkdir "$BATS_TEST_TMPDIR/seccomp.json"
	export PROFILE="$BATS_TEST_TMPDIR/seccomp.json"
	runp "$P"
	start_ctr none . grep ^Seccomp: /proc/self/status
	none=$CTR
	start_ctr default '.linux.security_context.seccomp = {profile_type: 0}' \
		sh -c 'grep ^Seccomp: /proc/self/status; unshare -U true 2>/dev/null || echo unshare-refused'
	default=$CTR
	start_ctr local '.linux.security_context.seccomp = {profile_type: 2, localhost_ref: $ENV.PROFILE}' \
		sh -c 'grep ^Seccomp: /proc/self/status; mkdir /tmp/d || echo mkdir-refused'
	local=$CTR
	for c in "$none" "$default" "$local"; do
		wait_ctr_state "$c" CONTAINER_EXITED
	done
	# containerd 1.6 leaves a container with no seccomp field unconfined.
	[[ "$(logs_of "$none")" == *"Seccomp:"*0 ]]
	run logs_of "$default"
	[[ "${lines[0]}" == *2 ]]
	[ "${lines[1]}" = unshare-refused ]
	run logs_of "$local"
	[[ "$output" == *"Seccomp:"*2* ]]
	[[ "$output" == *"Operation not permitted"* ]]
	[[ "$output" == *mkdir-refused* ]]
	# What the CRI put in the spec reached the runtime.
	[ "$(crictl_cmd inspect -o json "$local" | jq -r '.info.runtimeSpec.linux.seccomp.syscalls[0].names[0]')" = mkdir ]
}

@test "cri: apparmor as the CRI fills it" {
	runp "$P"
	start_ctr c1 '.linux.security_context.apparmor = {profile_type: 1}' sh -c 'cat /proc/self/attr/current 2>/dev/null; echo ran'
	wait_ctr_state "$CTR" CONTAINER_EXITED
	cc_ok inspect -o json "$CTR"
	[ "$(jq -r .status.exitCode <<<"$output")" = 0 ]
	[ "$(jq -r '.info.runtimeSpec.process.apparmorProfile // ""' <<<"$output")" = "" ]
	if [[ ! -d /sys/kernel/security/apparmor ]]; then
		# containerd refuses any other profile itself on such a host,
		# before the runtime is called.
		cc create --no-pull "$POD" "$(ctr_json c2 '.linux.security_context.apparmor = {profile_type: 0}' true)" "$POD_JSON"
		[ "$status" -ne 0 ]
		[[ "$stderr" == *"apparmor is not supported"* ]]
		skip "AppArmor is not enabled in this kernel (no /sys/kernel/security/apparmor): only Unconfined can reach the runtime"
	fi
	start_ctr c2 '.linux.security_context.apparmor = {profile_type: 0}' sh -c 'cat /proc/self/attr/current; echo ran'
	wait_ctr_state "$CTR" CONTAINER_EXITED
	cc_ok inspect -o json "$CTR"
	profile=$(jq -r '.info.runtimeSpec.process.apparmorProfile' <<<"$output")
	[ -n "$profile" ]
	[ "$(jq -r .status.exitCode <<<"$output")" = 0 ]
	[[ "$(logs_of "$CTR")" == "$profile"* ]]
}

@test "cri: containers in a pod sharing its pid namespace are stopped and reaped" {
	# pid POD: pause is pid 1, and init's exit leaves its children to the
	# shim's `kill --all ID 9` on the stopped container.
	runp "$P" '.linux.security_context.namespace_options.pid = 0'
	start_ctr c1 '.linux.security_context.namespace_options.pid = 0' \
		sh -c 'trap "exit 0" TERM; sleep 1000 & echo started; wait'
	retry 100 0.1 eval "logs_of $CTR | grep -q started"
	cc_ok exec -s "$CTR" cat /proc/1/comm
	[ "$output" = pause ]
	pid=$(cri_ctr_pid "$CTR")
	child=$(pgrep -P "$pid" -x sleep)
	[ -n "$child" ]
	grep -qx sleep "/proc/$child/comm"

	# StopContainer: TERM ends init; the sleep it leaves behind is killed
	# by the shim's `kill --all` on the stopped container.
	cc_ok stop -t 10 "$CTR"
	[ "$(ctr_state "$CTR")" = CONTAINER_EXITED ]
	[ "$(crictl_cmd inspect -o json "$CTR" | jq -r .status.exitCode)" = 0 ]
	wait_pid_gone "$child"
	cc_ok rm "$CTR"
	cc_ok stopp "$POD"
	cc_ok rmp "$POD"
}

@test "cri: a privileged container: every capability and the host's devices" {
	local dev
	dev=$(openable_host_device) || skip "no host device outside the default set opens here"
	runp "$P" '.linux.security_context.privileged = true'
	start_ctr c1 '.linux.security_context.privileged = true' \
		sh -c "$CAPEFF_SNIPPET; : <$dev && echo opened"
	wait_ctr_state "$CTR" CONTAINER_EXITED
	run logs_of "$CTR"
	echo "$output"
	# Every capability of the bounding set the runtime was started with.
	[ "${lines[0]}" = "$(grep ^CapBnd: /proc/self/status | cut -f2)" ]
	[ "${lines[1]}" = opened ]
	# (Its /sys is read-only all the same, with runc too: the pod's pause
	# container mounted its network namespace's sysfs read-only first, and
	# a mount of it shares that superblock.)
	# The same pod's unprivileged container has none of that.
	start_ctr c2 . sh -c "$CAPEFF_SNIPPET; test -e $dev || echo no-dev; grep ' /sys ' /proc/mounts | cut -d' ' -f4 | cut -d, -f1"
	wait_ctr_state "$CTR" CONTAINER_EXITED
	run logs_of "$CTR"
	echo "$output"
	[ "${lines[0]}" != "$(grep ^CapBnd: /proc/self/status | cut -f2)" ]
	[ "${lines[1]}" = no-dev ]
	[ "${lines[2]}" = ro ]
}

@test "cri: the pod's sysctls reach its containers" {
	local host
	host=$(cat /proc/sys/kernel/shm_rmid_forced)
	runp "$P" '.linux.sysctls = {"kernel.shm_rmid_forced": "1", "net.ipv4.ip_local_port_range": "40000 50000"}'
	start_ctr c1 . cat /proc/sys/kernel/shm_rmid_forced /proc/sys/net/ipv4/ip_local_port_range
	wait_ctr_state "$CTR" CONTAINER_EXITED
	run logs_of "$CTR"
	echo "$output"
	[ "${lines[0]}" = 1 ]
	[ "$(echo ${lines[1]})" = "40000 50000" ]
	# Namespaced sysctls: the node's are untouched.
	[ "$(cat /proc/sys/kernel/shm_rmid_forced)" = "$host" ]
}

@test "cri: a pod on the node's pid, ipc and network namespaces" {
	local ns='{network: 2, pid: 2, ipc: 2}'
	# The kubelet gives a pod on the node's network no hostname (the UTS
	# namespace is the node's too; runc refuses a hostname without one).
	runp "$P" 'del(.hostname) | .linux.security_context.namespace_options = '"$ns"
	start_ctr c1 '.linux.security_context.namespace_options = '"$ns" \
		sh -c 'for n in pid ipc net uts; do readlink /proc/self/ns/$n; done'
	wait_ctr_state "$CTR" CONTAINER_EXITED
	run logs_of "$CTR"
	echo "$output"
	# "Node" is containerd's: the host's pid, ipc and uts namespaces, and
	# the network namespace containerd runs in (the suite's own).
	[ "${lines[0]}" = "$(readlink /proc/self/ns/pid)" ]
	[ "${lines[1]}" = "$(readlink /proc/self/ns/ipc)" ]
	[ "${lines[2]}" = "$(readlink "/proc/$(cat "$CRI_DIR/containerd.pid")/ns/net")" ]
	[ "${lines[2]}" != "$(readlink /proc/self/ns/net)" ]
	[ "${lines[3]}" = "$(readlink /proc/self/ns/uts)" ]
}

@test "cri: exec --sync past its timeout fails, and its process is killed" {
	runp "$P"
	start_ctr c1 . sleep 1000
	cc exec --sync --timeout 1 "$CTR" sleep 6123
	[ "$status" -ne 0 ]
	[[ "$stderr" == *timeout* ]]
	# The shim kills the exec at the deadline; the container goes on.
	retry 100 0.1 eval '! pgrep -fx "sleep 6123" >/dev/null'
	[ "$(ctr_state "$CTR")" = CONTAINER_RUNNING ]
	cc_ok exec -s "$CTR" echo still
	[ "$output" = still ]
}

@test "cri: pod teardown leaves no cgroup, mount, state dir, netns or process behind" {
	runp "$P"
	cc_ok inspectp -o json "$POD"
	netns=$(jq -r '.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path' <<<"$output")
	[ -e "$netns" ]
	start_ctr c1 . sleep 1000
	c1=$CTR
	start_ctr c2 . sh -c "$TRAPPER"
	c2=$CTR
	cc_ok exec -s "$c1" true
	ids=("$POD" "$c1" "$c2")

	cc_ok stopp "$POD"
	cc_ok rmp "$POD"
	cc_ok pods -q
	[[ "$output" != *"$POD"* ]]
	for id in "${ids[@]}"; do
		[ ! -e "$CRI_DIR/nanobox/$CRI_NS/$id" ] || fail "state dir of $id left"
		left=$(cgroups_named "$id")
		[ -z "$left" ] || fail "cgroups left: $left"
		left=$(grep -F "$id" /proc/self/mountinfo || true)
		[ -z "$left" ] || fail "mounts left: $left"
		[ ! -e "$CRI_DIR/state/io.containerd.runtime.v2.task/$CRI_NS/$id" ] || fail "bundle of $id left"
	done
	[ ! -e "$netns" ] || fail "netns $netns left"
	left=$(ls /var/lib/cni/results/ 2>/dev/null | grep -F "$POD" || true)
	[ -z "$left" ] || fail "CNI results left: $left"
	left=$(procs_mentioning "${ids[@]}")
	[ -z "$left" ] || fail "processes left: $left"
}
