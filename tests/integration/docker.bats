#!/usr/bin/env bats
# Docker runs its containers on nanobox-runc: `docker run --runtime nanobox`
# against a private dockerd (Debian's docker.io) whose daemon.json is the
# README's. One test per item of issue 14's Docker list. Root only; dockerd
# is started and stopped by this file (clients/docker.bash).

load helpers
load clients/clients
load clients/images
load clients/docker

bats_require_minimum_version 1.5.0

# bats 1.8 cannot skip from setup_file: it leaves the reason for setup().
setup_file() {
	export CLIENTS_SKIP=
	local p
	if [[ "${ROOTLESS:-0}" == 1 ]]; then
		CLIENTS_SKIP="dockerd runs as root here (rootless Docker is not part of this suite)"
	elif [[ $EUID -ne 0 ]]; then
		CLIENTS_SKIP="the client suites run as root"
	fi
	for p in dockerd containerd containerd-shim-runc-v2 "$DOCKER_CLIENT"; do
		[[ -n "$CLIENTS_SKIP" ]] || command -v "$p" >/dev/null ||
			CLIENTS_SKIP="$p is not installed (apt-get install docker.io)"
	done
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	[[ -x "$RUNTIME" ]] || fail "runtime $RUNTIME is not built (go build -o nanobox-runc .)"
	export DOCKER_CGROUP_PARENT="/nbx-docker-$$"
	docker_start "$BATS_FILE_TMPDIR/docker"
}

teardown_file() {
	docker_stop
	# The cgroup parent the runtime made (as runc does), empty by now.
	local d
	for d in /sys/fs/cgroup/*"$DOCKER_CGROUP_PARENT" /sys/fs/cgroup"$DOCKER_CGROUP_PARENT"; do
		[[ -d "$d" ]] && rmdir "$d" 2>/dev/null
	done
	return 0
}

setup() {
	[[ -z "$CLIENTS_SKIP" ]] || skip "$CLIENTS_SKIP"
	C=nbx-dk-$BATS_TEST_NUMBER
}

teardown() {
	[[ -z "$CLIENTS_SKIP" ]] || return 0
	# A test's own dockerd (see the userns-remap test), then the suite's.
	if [[ -n "${OWN_DOCKER_DIR:-}" ]]; then
		DOCKER_DIR=$OWN_DOCKER_DIR docker_stop
		rm -rf "$OWN_DOCKER_DIR"
		export DOCKER_DIR=$SUITE_DOCKER_DIR DOCKER_HOST=$SUITE_DOCKER_HOST DOCKER_CONFIG=$SUITE_DOCKER_CONFIG
	fi
	docker_rm_all
}

# own_docker JSON: a dockerd of the test's own with JSON's daemon.json keys
# added (for a daemon-wide option); the docker helpers talk to it until
# teardown stops it and goes back to the suite's.
own_docker() {
	SUITE_DOCKER_DIR=$DOCKER_DIR SUITE_DOCKER_HOST=$DOCKER_HOST SUITE_DOCKER_CONFIG=$DOCKER_CONFIG
	# Not below bats' temporary directory: with userns-remap, dockerd wants
	# every parent of its data root searchable by others.
	OWN_DOCKER_DIR=$(mktemp -d /tmp/nbx-docker-own.XXXXXX)
	chmod 0711 "$OWN_DOCKER_DIR"
	DOCKER_EXTRA_JSON=$1 docker_start "$OWN_DOCKER_DIR"
}

# drun [-N] ARGS...: docker run on the nanobox runtime, loopback-only
# network. -N: expect exit status N.
drun() {
	local expect=()
	[[ "$1" != -[0-9]* ]] || { expect=("$1"); shift; }
	dk "${expect[@]}" run --runtime nanobox --network none "$@"
}

# drun_d NAME ARGS...: a detached container, failing the test unless it starts.
drun_d() {
	local name=$1
	shift
	dk_ok run -d --runtime nanobox --network none --name "$name" "$@"
}

# in_tty CMD...: CMD with a pty as its stdin/stdout (docker -t needs one).
in_tty() {
	script -qefc "$(printf '%q ' "$@")" /dev/null </dev/null
}

TRAPPER='trap "echo bye; exit 0" TERM; echo started; while :; do sleep 0.1; done'

@test "docker run --runtime nanobox: output and exit codes" {
	drun --rm "$BUSYBOX_REF" echo hello from nanobox
	[ "$status" -eq 0 ]
	[ "$output" = "hello from nanobox" ]

	drun --rm "$BUSYBOX_REF" sh -c 'echo out; echo err >&2; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = out ]
	[ "$stderr" = err ]

	# The daemon knows the runtime, and ran the container on it.
	dk_ok info --format '{{json .Runtimes}}'
	[ "$(jq -r .nanobox.path <<<"$output")" = "$(clients_runtime_path)" ]
	drun_d "$C" "$BUSYBOX_REF" sleep 1000
	[ "$(dk_inspect "$C" '{{.HostConfig.Runtime}}')" = nanobox ]
	id=$(dk_inspect "$C" '{{.Id}}')
	pid=$(dk_inspect "$C" '{{.State.Pid}}')
	# dockerd 20.10 gives every runtime the state root "runtime-runc"; the
	# state in it is nanobox-runc's (runc's has no initPid).
	[ "$(jq -r .initPid "$DOCKER_DIR/exec/runtime-runc/moby/$id/state.json")" = "$pid" ]
	# The cgroupfs driver's path: <cgroup-parent>/<id>.
	[ "$(cgroup_of "$pid" pids)" = "$DOCKER_CGROUP_PARENT/$id" ]
}

@test "docker run: a command that is not there exits 127" {
	drun -127 --rm "$BUSYBOX_REF" nosuch
	[[ "$stderr" == *nosuch* ]]
	drun -126 --rm "$BUSYBOX_REF" /etc
}

@test "docker run -d, logs, exec, stop, rm" {
	drun_d "$C" "$BUSYBOX_REF" sh -c "$TRAPPER"
	retry 100 0.1 eval "$DOCKER_CLIENT logs $C | grep -q started"
	[ "$(dk_inspect "$C" '{{.State.Status}}')" = running ]

	dk exec "$C" sh -c 'echo in-container; exit 7'
	[ "$status" -eq 7 ]
	[ "$output" = in-container ]
	run --separate-stderr "$DOCKER_CLIENT" exec -i "$C" sh -c 'read x; echo "got $x"' <<<"ping"
	[ "$output" = "got ping" ]
	dk_ok exec --user 1000 "$C" id -u
	[ "$output" = 1000 ]

	# stop: SIGTERM; the trap exits 0.
	dk_ok stop -t 30 "$C"
	[ "$(dk_inspect "$C" '{{.State.Status}}')" = exited ]
	[ "$(dk_inspect "$C" '{{.State.ExitCode}}')" = 0 ]
	"$DOCKER_CLIENT" logs "$C" | grep -qx bye
	id=$(dk_inspect "$C" '{{.Id}}')
	dk_ok rm "$C"
	[ ! -e "$DOCKER_DIR/exec/runtime-runc/moby/$id" ]
	assert_cgroup_gone "$DOCKER_CGROUP_PARENT/$id"
}

@test "docker run -t and exec -t" {
	run -4 in_tty "$DOCKER_CLIENT" run -t --rm --runtime nanobox --network none "$BUSYBOX_REF" \
		sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo stdio-is-tty; exit 4'
	echo "$output"
	[[ "$output" == *"/dev/pts/"* ]]
	[[ "$output" == *stdio-is-tty* ]]

	drun_d "$C" "$BUSYBOX_REF" sleep 1000
	run -6 in_tty "$DOCKER_CLIENT" exec -t "$C" sh -c 'tty; exit 6'
	echo "$output"
	[[ "$output" == *"/dev/pts/"* ]]
}

@test "docker top, pause, unpause" {
	# The counter is replaced, not rewritten: a freeze between the
	# truncation and the write would leave the host an empty file.
	drun_d "$C" "$BUSYBOX_REF" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.05; done'
	pid=$(dk_inspect "$C" '{{.State.Pid}}')
	dk_ok top "$C"
	[[ "$output" == *"$pid"* ]]
	retry 50 0.1 test -s "/proc/$pid/root/tmp/count"

	dk_ok pause "$C"
	[ "$(dk_inspect "$C" '{{.State.Status}}')" = paused ]
	[ "$(cgroup_read "$pid" freezer freezer.state cgroup.freeze)" = FROZEN ] || cgroup_v2
	a=$(cat "/proc/$pid/root/tmp/count")
	sleep 0.5
	[ "$(cat "/proc/$pid/root/tmp/count")" = "$a" ]

	dk_ok unpause "$C"
	[ "$(dk_inspect "$C" '{{.State.Status}}')" = running ]
	retry 20 0.1 eval "[ \"\$(cat /proc/$pid/root/tmp/count)\" -gt $a ]"
}

@test "docker update and stats" {
	drun_d "$C" --memory 256m "$BUSYBOX_REF" sh -c 'head -c 8000000 /dev/zero >/dev/shm/fill; sleep 1000'
	pid=$(dk_inspect "$C" '{{.State.Pid}}')
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((256 << 20)) ]

	dk_ok update --memory 128m --memory-swap 128m --pids-limit 50 "$C"
	[ "$(cgroup_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((128 << 20)) ]
	[ "$(cgroup_read "$pid" pids pids.max pids.max)" -eq 50 ]
	[ "$(dk_inspect "$C" '{{.HostConfig.Memory}}')" -eq $((128 << 20)) ]

	retry 50 0.1 eval "$DOCKER_CLIENT stats --no-stream --format '{{.MemUsage}}' $C | grep -q '128MiB'"
	dk_ok stats --no-stream --format '{{json .}}' "$C"
	[ "$(jq -r .PIDs <<<"$output")" -ge 1 ]
	[[ "$(jq -r .MemUsage <<<"$output")" == *"/ 128MiB" ]]
}

@test "docker run --memory: the OOM kill is OOMKilled in docker inspect" {
	drun --name "$C" --memory 32m --memory-swap 32m "$BUSYBOX_REF" tail /dev/zero
	[ "$status" -eq 137 ]
	[ "$(dk_inspect "$C" '{{.State.OOMKilled}}')" = true ]
	[ "$(dk_inspect "$C" '{{.State.ExitCode}}')" = 137 ]

	drun --name "$C-2" --memory 64m "$BUSYBOX_REF" true
	[ "$status" -eq 0 ]
	[ "$(dk_inspect "$C-2" '{{.State.OOMKilled}}')" = false ]
}

@test "docker run --pids-limit" {
	drun --rm --pids-limit 10 "$BUSYBOX_REF" \
		sh -c 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; for i in $(seq 20); do sleep 30 >/dev/null 2>&1 & done; echo spawned-all'
	[ "$status" -ne 0 ]
	[ "${lines[0]}" = 10 ]
	[[ "$output" != *spawned-all* ]]
	[[ "$stderr" == *"can't fork"* || "$stderr" == *"Resource temporarily unavailable"* ]]
}

@test "docker run --read-only" {
	drun --rm --read-only "$BUSYBOX_REF" sh -c 'grep " / " /proc/mounts; touch /file'
	[ "$status" -ne 0 ]
	[[ "$output" == *" ro,"* || "$output" == *" ro "* ]]
	[[ "$stderr" == *"Read-only file system"* ]]
}

@test "docker run --user" {
	drun --rm --user 1000:1000 --group-add 1001 "$BUSYBOX_REF" sh -c "id; $CAPEFF_SNIPPET; touch /root/x"
	[ "$status" -ne 0 ]
	# dockerd lists the primary group among the supplementary ones.
	[ "${lines[0]}" = "uid=1000(user) gid=1000(user) groups=1000(user),1001(extra)" ]
	[ "${lines[1]}" = 0000000000000000 ]
	[[ "$stderr" == *"Permission denied"* ]]
}

@test "docker run -v: bind mounts read-write and read-only" {
	d="$BATS_TEST_TMPDIR/data"
	mkdir -p "$d"
	echo from-host >"$d/in"
	drun --rm -v "$d:/data:ro" "$BUSYBOX_REF" sh -c 'cat /data/in; echo x >/data/out'
	[ "$status" -ne 0 ]
	[ "$output" = from-host ]
	[[ "$stderr" == *"Read-only file system"* ]]
	[ ! -e "$d/out" ]

	drun --rm -v "$d:/data" "$BUSYBOX_REF" sh -c 'cat /data/in; echo from-container >/data/out'
	[ "$status" -eq 0 ]
	[ "$output" = from-host ]
	[ "$(cat "$d/out")" = from-container ]
}

@test "docker run --cap-drop and --cap-add" {
	drun --rm "$BUSYBOX_REF" sh -c "chown 1000 /tmp && echo chown-ok; $CAPEFF_SNIPPET"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = chown-ok ]
	full=${lines[1]}

	drun --rm --cap-drop CHOWN "$BUSYBOX_REF" chown 1000 /tmp
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Operation not permitted"* ]]

	drun --rm --cap-drop ALL "$BUSYBOX_REF" sh -c "$CAPEFF_SNIPPET"
	[ "$output" = 0000000000000000 ]

	drun --rm --cap-add NET_ADMIN "$BUSYBOX_REF" sh -c "ip link set lo mtu 1280 && $CAPEFF_SNIPPET"
	[ "$status" -eq 0 ]
	[ "$output" != "$full" ]
}

@test "docker run: its default seccomp profile, a profile of our own, unconfined" {
	drun --rm "$BUSYBOX_REF" sh -c 'grep ^Seccomp: /proc/self/status; unshare -U true'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Seccomp:"*2 ]]
	[[ "$stderr" == *"Operation not permitted"* ]]

	seccomp_deny_mkdir "$BATS_TEST_TMPDIR/seccomp.json"
	drun --rm --security-opt "seccomp=$BATS_TEST_TMPDIR/seccomp.json" "$BUSYBOX_REF" \
		sh -c 'grep ^Seccomp: /proc/self/status; mkdir /tmp/d'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Seccomp:"*2 ]]
	[[ "$stderr" == *"Operation not permitted"* ]]

	drun --rm --security-opt seccomp=unconfined "$BUSYBOX_REF" grep ^Seccomp: /proc/self/status
	[ "$status" -eq 0 ]
	[[ "$output" == *0 ]]
}

@test "docker run --privileged and --device" {
	local dev
	dev=$(openable_host_device) || skip "no host device outside the default set opens here"
	drun --rm --privileged "$BUSYBOX_REF" sh -c "$CAPEFF_SNIPPET; : <$dev && echo opened; grep ^Seccomp: /proc/self/status"
	[ "$status" -eq 0 ]
	# Every capability Docker knows (0 to 37, CAP_AUDIT_READ, in every
	# Docker since 20.10) that the bounding set holds, nothing beyond it.
	local eff=$((0x${lines[0]})) bnd=$((0x$(grep ^CapBnd: /proc/self/status | cut -f2)))
	[ $((eff & ~bnd)) -eq 0 ]
	[ $((eff & 0x3fffffffff)) -eq $((bnd & 0x3fffffffff)) ]
	[ "${lines[1]}" = opened ]
	[[ "${lines[2]}" == *0 ]]
	# Without --privileged the device is not there; with --device it is,
	# under the name given, and only it.
	drun --rm "$BUSYBOX_REF" test -e "$dev"
	[ "$status" -ne 0 ]
	drun --rm --device "$dev:/dev/given" "$BUSYBOX_REF" sh -c ": </dev/given && echo opened; test -e $dev || echo only-given"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = opened ]
	[ "${lines[1]}" = only-given ]
}

@test "docker run --init, --sysctl, --pid host, --ipc host" {
	# docker-init (tini) as pid 1, the command its child.
	if [[ -x /usr/sbin/docker-init || -x /usr/bin/docker-init || -x /usr/libexec/docker/docker-init ]]; then
		drun --rm --init "$BUSYBOX_REF" sh -c 'cat /proc/1/comm; echo $$'
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" == docker-init || "${lines[0]}" == tini* ]]
		[ "${lines[1]}" != 1 ]
	fi
	drun --rm --sysctl kernel.shm_rmid_forced=1 "$BUSYBOX_REF" cat /proc/sys/kernel/shm_rmid_forced
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	drun --rm --pid host --ipc host "$BUSYBOX_REF" sh -c 'readlink /proc/self/ns/pid; readlink /proc/self/ns/ipc'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(readlink /proc/self/ns/pid)" ]
	[ "${lines[1]}" = "$(readlink /proc/self/ns/ipc)" ]
}

@test "docker: many containers in a row leave no state dirs, cgroups, mounts or processes" {
	local ids=() n id
	for n in $(seq 6); do
		drun --name "$C-$n" "$BUSYBOX_REF" sh -c "echo run-$n"
		[ "$status" -eq 0 ]
		[ "$output" = "run-$n" ]
		ids+=("$(dk_inspect "$C-$n" '{{.Id}}')")
		dk_ok rm "$C-$n"
	done
	drun_d "$C-d" "$BUSYBOX_REF" sleep 1000
	ids+=("$(dk_inspect "$C-d" '{{.Id}}')")
	dk_ok exec "$C-d" true
	dk_ok rm -f "$C-d"
	[ -z "$("$DOCKER_CLIENT" ps -aq)" ]

	for id in "${ids[@]}"; do
		[ ! -e "$DOCKER_DIR/exec/runtime-runc/moby/$id" ] || fail "state dir of $id left"
		assert_cgroup_gone "$DOCKER_CGROUP_PARENT/$id"
		left=$(grep -F "$id" /proc/self/mountinfo || true)
		[ -z "$left" ] || fail "mounts left: $left"
	done
	left=$(procs_mentioning "${ids[@]}")
	[ -z "$left" ] || fail "processes left: $left"
}

@test "docker --userns-remap: containers run in the remapped user namespace" {
	# Daemon-wide: dockerd chowns the image's layers to the remapped range
	# and gives the runtime a config with a user namespace and its
	# mappings. The test user's /etc/subuid range is the one remapped to.
	ensure_test_user
	local first
	first=$(awk -F: -v u="$TEST_USER" '$1 == u {print $2; exit}' /etc/subuid)
	[[ -n "$first" ]] || fail "no /etc/subuid range for $TEST_USER"
	own_docker "{\"userns-remap\": \"$TEST_USER\"}"
	dk_ok run --rm --runtime nanobox --network none "$IMAGE" sh -c 'id -u; cat /proc/self/uid_map; touch /tmp/w && echo writable'
	[[ "${lines[0]}" == 0 ]]
	[[ "$(echo ${lines[1]})" == "0 $first 65536" ]] || fail "uid_map: ${lines[1]}"
	[[ "${lines[2]}" == writable ]]
	drun_d "$C" "$IMAGE" sleep 100
	local pid
	pid=$(dk_inspect "$C" '{{.State.Pid}}')
	[[ "$(stat -c %u "/proc/$pid")" == "$first" ]] || fail "init runs as host uid $(stat -c %u "/proc/$pid"), not $first"
	dk_ok exec "$C" sh -c 'echo exec-ran as $(id -u)'
	[[ "$output" == "exec-ran as 0" ]]
	dk_ok rm -f "$C"
}
