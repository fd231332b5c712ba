#!/usr/bin/env bash
# Set-up for docker.bats: a private dockerd from Debian's docker.io, with
# nanobox-runc registered as the runtime "nanobox" by the README's
# daemon.json (read from README.md, the path swapped for the runtime under
# test). Its data root, exec root, pid file, socket and cgroup parent are
# the suite's; no iptables rules, no bridge (containers run with --network
# none: loopback only). dockerd starts its own containerd under its exec
# root and stops it when it ends. Needs clients.bash and images.bash.
#
# Environment:
#   DOCKER_CLIENT  the docker CLI to use (default /usr/bin/docker, Debian's,
#                  which matches dockerd; another docker on PATH, e.g. a
#                  newer /usr/local/bin/docker without an engine, is not it)

DOCKER_CLIENT=${DOCKER_CLIENT:-/usr/bin/docker}

# docker_daemon_json DIR: the README's daemon.json, with the runtime under
# test as the nanobox runtime's path, merged with the suite's private
# settings.
docker_daemon_json() {
	local d=$1 block driver=overlay2
	block=$(readme_block "tests/integration/docker.bats reads this daemon.json")
	[[ -n "$block" ]] || fail "README.md has no daemon.json block for docker.bats" || return 1
	jq -e '.runtimes.nanobox.path == "/usr/local/bin/nanobox-runc"' <<<"$block" >/dev/null ||
		fail "the README's daemon.json does not register /usr/local/bin/nanobox-runc as nanobox" || return 1
	overlay_backing_ok "$d" || driver=vfs
	# DOCKER_EXTRA_JSON: more daemon.json keys (a daemon-wide option that
	# one test needs a daemon of its own for).
	jq --arg d "$d" --arg rt "$(clients_runtime_path)" --arg driver "$driver" --arg cg "$DOCKER_CGROUP_PARENT" \
		--argjson extra "${DOCKER_EXTRA_JSON:-{\}}" \
		'.runtimes.nanobox.path = $rt
		| . + {"data-root": ($d + "/data"), "exec-root": ($d + "/exec"), pidfile: ($d + "/docker.pid"),
		       hosts: ["unix://" + $d + "/docker.sock"], "storage-driver": $driver,
		       iptables: false, "ip-forward": false, "ip-masq": false, bridge: "none",
		       "userland-proxy": false, "cgroup-parent": $cg,
		       "exec-opts": ["native.cgroupdriver=cgroupfs"], "log-level": "debug"} + $extra' \
		<<<"$block"
}

# docker_start DIR: dockerd with its config under DIR, and the busybox
# image loaded. Its pid is in DIR/dockerd.pid; docker_stop ends it.
docker_start() {
	local d=$1 i
	export DOCKER_DIR=$d
	mkdir -p "$d"/{data,exec,client}
	# dockerd makes /run/docker/plugins whatever its exec root; remove it
	# at the end if this run made it.
	[[ -e /run/docker ]] || touch "$d/made-run-docker"
	docker_daemon_json "$d" >"$d/daemon.json" || return 1
	# dockerd finds containerd, its shim, runc and docker-init on PATH.
	dockerd --config-file "$d/daemon.json" </dev/null >"$d/dockerd.log" 2>&1 3>&- &
	echo $! >"$d/dockerd.pid"
	export DOCKER_HOST="unix://$d/docker.sock" DOCKER_CONFIG="$d/client"
	# Up to a minute: a loaded machine is slow to start it.
	for ((i = 0; i < 600; i++)); do
		"$DOCKER_CLIENT" version >/dev/null 2>&1 && break
		kill -0 "$(cat "$d/dockerd.pid")" 2>/dev/null || break
		sleep 0.1
	done
	if ! "$DOCKER_CLIENT" version >/dev/null 2>&1; then
		tail -20 "$d/dockerd.log" >&2
		fail "dockerd did not start (log: $d/dockerd.log)"
		return 1
	fi
	"$DOCKER_CLIENT" load -q -i "$(busybox_archive)" >/dev/null || fail "docker load of the busybox image failed"
}

# docker_rm_all: force-remove every container of the private daemon.
docker_rm_all() {
	local ids
	ids=$("$DOCKER_CLIENT" ps -aq 2>/dev/null)
	[[ -z "$ids" ]] || "$DOCKER_CLIENT" rm -f $ids >/dev/null 2>&1
	return 0
}

# docker_stop: remove the containers, stop dockerd (which stops its
# containerd) by pid, kill any shim left, and unmount what is still mounted
# under the suite's dir.
docker_stop() {
	[[ -n "${DOCKER_DIR:-}" && -f "$DOCKER_DIR/dockerd.pid" ]] || return 0
	local pid f i
	docker_rm_all
	pid=$(cat "$DOCKER_DIR/dockerd.pid")
	kill "$pid" 2>/dev/null
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# containerd (if dockerd was killed before it stopped it), then shims.
	f="$DOCKER_DIR/exec/containerd/containerd.pid"
	[[ ! -f "$f" ]] || kill -9 "$(cat "$f")" 2>/dev/null
	for f in "$DOCKER_DIR"/exec/containerd/daemon/io.containerd.runtime.v2.task/*/*/shim.pid; do
		[[ -f "$f" ]] || continue
		kill -9 "$(cat "$f")" 2>/dev/null
	done
	unmount_under "$DOCKER_DIR"
	if [[ -e "$DOCKER_DIR/made-run-docker" ]]; then
		rmdir /run/docker/plugins /run/docker 2>/dev/null
	fi
	rm -f "$DOCKER_DIR/dockerd.pid"
}

# dk [-N] ARGS...: `run --separate-stderr docker ARGS`, echoing the command
# and its output. -N: expect exit status N (what bats wants for 127).
dk() {
	local expect=()
	[[ "$1" != -[0-9]* ]] || { expect=("$1"); shift; }
	run "${expect[@]}" --separate-stderr "$DOCKER_CLIENT" "$@"
	echo "\$ docker $* (status $status)"
	[[ -z "$output" ]] || echo "$output"
	[[ -z "$stderr" ]] || echo "stderr: $stderr"
}

# dk_ok ARGS...: dk, and fail unless it exits 0.
dk_ok() {
	dk "$@"
	[[ $status -eq 0 ]] || fail "docker $* exited $status"
}

# dk_inspect NAME FORMAT: one field of `docker inspect`.
dk_inspect() {
	"$DOCKER_CLIENT" inspect --format "$2" "$1"
}
