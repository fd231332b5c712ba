#!/usr/bin/env bash
# Set-up for cri.bats: containerd's CRI plugin driven by crictl, with
# nanobox-runc as the BinaryName of a runtime handler, as Kubernetes uses
# it. containerd runs with a private config, root, state, socket and
# runtime root, in a network namespace of its own (so the CNI bridge, the
# pods' veths and the streaming server never touch the host's network);
# its mount namespace is the host's. Needs clients.bash and images.bash.
#
# The runtime handler's TOML and the RuntimeClass come from README.md,
# verbatim: the blocks after the "tests/integration/cri.bats reads" markers.
#
# Environment:
#   CRICTL   a prebuilt crictl (default: tests/integration/clients/bin/crictl,
#            which `make crictl` builds from the Go module proxy)

CRI_NS=k8s.io

# cri_handler_toml: the README's runtime handler, with the runtime under
# test as BinaryName and a state root of the suite's own.
cri_handler_toml() {
	local block
	block=$(readme_block "tests/integration/cri.bats reads this runtime handler")
	[[ -n "$block" ]] || fail "README.md has no runtime handler block for cri.bats" || return 1
	grep -q 'BinaryName = "/usr/local/bin/nanobox-runc"' <<<"$block" ||
		fail "the README's runtime handler does not name /usr/local/bin/nanobox-runc" || return 1
	sed -e "s|\"/usr/local/bin/nanobox-runc\"|\"$(clients_runtime_path)\"|" \
		-e "s|\"/run/containerd/nanobox\"|\"$CRI_DIR/nanobox\"|" <<<"$block"
}

# cri_handler: the handler name of the README's RuntimeClass, checked
# against the runtime table of its TOML.
cri_handler() {
	local h
	h=$(readme_block "tests/integration/cri.bats reads this RuntimeClass" | awk '$1 == "handler:" {print $2; exit}')
	[[ -n "$h" ]] || fail "README.md has no RuntimeClass handler for cri.bats" || return 1
	readme_block "tests/integration/cri.bats reads this runtime handler" |
		grep -qF "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.$h]" ||
		fail "the README's RuntimeClass handler $h is not the runtime its TOML configures" || return 1
	echo "$h"
}

# crictl_bin: path of crictl, built on first use.
crictl_bin() {
	if [[ -n "${CRICTL:-}" ]]; then
		echo "$CRICTL"
		return
	fi
	local bin="$CLIENTS_DIR/bin/crictl"
	if [[ ! -x "$bin" ]]; then
		make -s -C "$REPO_ROOT" crictl >&2 || return 1
	fi
	echo "$bin"
}

# cri_start DIR: the network namespace, the CNI config and containerd with
# the CRI plugin; the images imported. containerd's pid is in
# DIR/containerd.pid; cri_stop ends it and removes what it left.
cri_start() {
	local d=$1 i snap=overlayfs
	export CRI_DIR=$d
	mkdir -p "$d"/{root,state,nanobox,logs,cni/net.d,cni/ipam}
	# libcni caches each attachment in /var/lib/cni/results (containerd 1.6
	# has no setting for it) until the pod's network is torn down; remove
	# the empty directories at the end if this run made them.
	[[ -e /var/lib/cni ]] || touch "$d/made-var-lib-cni"
	overlay_backing_ok "$d" || snap=native
	export CRI_NETNS="nbx-cri-$$-$RANDOM"
	echo "$CRI_NETNS" >"$d/netns"
	ip netns add "$CRI_NETNS" || fail "ip netns add $CRI_NETNS failed" || return 1
	ip -n "$CRI_NETNS" link set lo up
	# A bridge with a /24 that exists only inside the namespace; no
	# masquerading, no route out: nothing leaves it.
	cat >"$d/cni/net.d/10-nbx.conflist" <<-EOF
		{
		  "cniVersion": "1.0.0",
		  "name": "nbx-cri",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "nbxcri0",
		      "isGateway": true,
		      "ipMasq": false,
		      "ipam": {
		        "type": "host-local",
		        "dataDir": "$d/cni/ipam",
		        "ranges": [[{"subnet": "10.250.77.0/24"}]]
		      }
		    }
		  ]
		}
	EOF
	# restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, so the
	# sandbox's default oom_score_adj of -998 could not be set by any
	# runtime. netns_mounts_under_state_dir: the pods' network namespaces
	# are bind-mounted under our state, not /var/run/netns.
	cat >"$d/config.toml" <<-EOF
		version = 2
		root = "$d/root"
		state = "$d/state"
		disabled_plugins = [
		  "io.containerd.internal.v1.opt",
		  "io.containerd.snapshotter.v1.aufs",
		  "io.containerd.snapshotter.v1.btrfs",
		  "io.containerd.snapshotter.v1.devmapper",
		  "io.containerd.snapshotter.v1.zfs",
		  "io.containerd.tracing.processor.v1.otlp",
		]

		[grpc]
		  address = "$d/containerd.sock"

		[ttrpc]
		  address = "$d/containerd.sock.ttrpc"

		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_REF"
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  disable_tcp_service = true
		  restrict_oom_score_adj = true
		  netns_mounts_under_state_dir = true
		  enable_selinux = false

		[plugins."io.containerd.grpc.v1.cri".containerd]
		  snapshotter = "$snap"
		  # Every pod asks for the handler (as a RuntimeClass does); none
		  # may fall back to another runtime.
		  default_runtime_name = "$CRI_HANDLER"

		[plugins."io.containerd.grpc.v1.cri".cni]
		  bin_dir = "/usr/lib/cni"
		  conf_dir = "$d/cni/net.d"
		  max_conf_num = 1

	EOF
	cri_handler_toml >>"$d/config.toml" || return 1
	# CRI_EXTRA_TOML: more of containerd's config from the caller (the
	# critest run's registry mirrors).
	[[ -z "${CRI_EXTRA_TOML:-}" ]] || printf '%s\n' "$CRI_EXTRA_TOML" >>"$d/config.toml"
	nsenter --net="/run/netns/$CRI_NETNS" containerd --config "$d/config.toml" --log-level debug \
		</dev/null >"$d/containerd.log" 2>&1 3>&- &
	echo $! >"$d/containerd.pid"
	cat >"$d/crictl.yaml" <<-EOF
		runtime-endpoint: unix://$d/containerd.sock
		image-endpoint: unix://$d/containerd.sock
		timeout: 60
	EOF
	export CRI_CRICTL
	CRI_CRICTL=$(crictl_bin) || fail "cannot build crictl (make crictl: needs go and the Go module proxy)" || return 1
	# Up to a minute: a loaded machine is slow to start it.
	for ((i = 0; i < 600; i++)); do
		crictl_cmd info >/dev/null 2>&1 && break
		kill -0 "$(cat "$d/containerd.pid")" 2>/dev/null || break
		sleep 0.1
	done
	if ! crictl_cmd info >/dev/null 2>&1; then
		tail -20 "$d/containerd.log" >&2
		fail "containerd with the CRI plugin did not start (log: $d/containerd.log)"
		return 1
	fi
	local a
	for a in "$(pause_archive)" "$(busybox_archive)"; do
		[[ -s "$a" ]] || return 1
		ctr --address "$d/containerd.sock" -n "$CRI_NS" images import --snapshotter "$snap" "$a" >/dev/null ||
			fail "ctr images import $a failed" || return 1
	done
}

# crictl_cmd ARGS...: crictl against the suite's containerd, in its network
# namespace (exec, attach and port-forward reach containerd's streaming
# server on 127.0.0.1 there).
crictl_cmd() {
	nsenter --net="/run/netns/$CRI_NETNS" "$CRI_CRICTL" --config "$CRI_DIR/crictl.yaml" "$@"
}

# cc [-N] ARGS...: `run --separate-stderr crictl ARGS`, echoing the command
# and its output (bats shows it when the test fails).
cc() {
	local expect=()
	[[ "$1" != -[0-9]* ]] || { expect=("$1"); shift; }
	run "${expect[@]}" --separate-stderr crictl_cmd "$@"
	echo "\$ crictl $* (status $status)"
	[[ -z "$output" ]] || echo "$output"
	[[ -z "$stderr" ]] || echo "stderr: $stderr"
}

# cc_ok ARGS...: cc, and fail unless it exits 0.
cc_ok() {
	cc "$@"
	[[ $status -eq 0 ]] || fail "crictl $* exited $status"
}

# cri_rm_all: stop and remove every pod (and so every container) of the
# suite's containerd.
cri_rm_all() {
	local p
	for p in $(crictl_cmd pods -q 2>/dev/null); do
		crictl_cmd stopp "$p" >/dev/null 2>&1
		crictl_cmd rmp -f "$p" >/dev/null 2>&1
	done
	return 0
}

# cri_stop: remove the pods, stop containerd and any shim it left (by
# pid), unmount what is still mounted under the suite's dirs, and delete
# the network namespace.
cri_stop() {
	[[ -n "${CRI_DIR:-}" && -f "$CRI_DIR/containerd.pid" ]] || return 0
	local pid f i
	cri_rm_all
	pid=$(cat "$CRI_DIR/containerd.pid")
	kill "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	for f in "$CRI_DIR"/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
		[[ -f "$f" ]] || continue
		kill -9 "$(cat "$f")" 2>/dev/null
	done
	unmount_under "$CRI_DIR"
	[[ -z "${CRI_NETNS:-}" ]] || ip netns del "$CRI_NETNS" 2>/dev/null
	if [[ -e "$CRI_DIR/made-var-lib-cni" ]]; then
		rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null
	fi
	rm -f "$CRI_DIR/containerd.pid"
}

# ---------------------------------------------------------------------------
# Pod and container configs (crictl's JSON: the CRI v1 messages, snake_case
# field names, enums as numbers).

# NamespaceMode: POD 0, CONTAINER 1, NODE 2. SecurityProfile.ProfileType:
# RuntimeDefault 0, Unconfined 1, Localhost 2. MountPropagation: PRIVATE 0,
# HOST_TO_CONTAINER 1, BIDIRECTIONAL 2.

# pod_json NAME [JQ-EXPR]: a pod sandbox config in $BATS_TEST_TMPDIR, its
# cgroup parent a systemd-style slice (what containerd turns into
# "slice:cri-containerd:ID"), its own pid namespace per container. Prints
# the path.
pod_json() {
	local name=$1 expr=${2:-.} f="$BATS_TEST_TMPDIR/pod-$1.json"
	mkdir -p "$CRI_DIR/logs/$name"
	jq -n --arg name "$name" --arg uid "$name-$$" --arg logs "$CRI_DIR/logs/$name" \
		--arg parent "$CRI_SLICE" \
		'{metadata: {name: $name, namespace: "nbx-test", uid: $uid, attempt: 0},
		  hostname: $name, log_directory: $logs,
		  linux: {cgroup_parent: $parent,
		          security_context: {namespace_options: {network: 0, pid: 1, ipc: 0}}}}
		| '"$expr" >"$f"
	echo "$f"
}

# ctr_json NAME JQ-EXPR CMD...: a container config running CMD in the
# busybox image, logging to NAME.log in the pod's log directory, with a pid
# namespace of its own (the kubelet's default). JQ-EXPR may read the
# environment as $ENV.NAME.
ctr_json() {
	local name=$1 expr=$2 f="$BATS_TEST_TMPDIR/ctr-$1.json"
	shift 2
	jq -n --arg name "$name" --arg img "$BUSYBOX_REF" --argjson cmd "$(json_array "$@")" \
		'{metadata: {name: $name}, image: {image: $img}, command: $cmd,
		  log_path: ($name + ".log"),
		  linux: {security_context: {namespace_options: {network: 0, pid: 1, ipc: 0}}}}
		| '"$expr" >"$f"
	echo "$f"
}

# runp NAME [JQ-EXPR]: run a pod sandbox with the README's handler; its id
# is $POD, its config $POD_JSON.
runp() {
	POD_JSON=$(pod_json "$@")
	cc_ok runp --runtime "$CRI_HANDLER" "$POD_JSON"
	POD=$output
}

# start_ctr NAME JQ-EXPR CMD...: create and start a container in $POD; its
# id is $CTR.
start_ctr() {
	cc_ok create --no-pull "$POD" "$(ctr_json "$@")" "$POD_JSON"
	CTR=$output
	cc_ok start "$CTR"
}

# ctr_state ID: CONTAINER_RUNNING, CONTAINER_EXITED...
ctr_state() {
	crictl_cmd inspect -o json "$1" | jq -r .status.state
}

# wait_ctr_state ID STATE: poll until the container reaches STATE.
wait_ctr_state() {
	retry 300 0.1 eval "[[ \"\$(ctr_state $1)\" == $2 ]]"
}

# ctr_pid ID: the host pid of the container's init.
cri_ctr_pid() {
	crictl_cmd inspect -o json "$1" | jq -r .info.pid
}

# cri_remove_slices: the cgroups that a failed test's pod or container left
# (each is the one name "<slice>:cri-containerd:<id>").
cri_remove_slices() {
	local d
	for d in $(find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name "$CRI_SLICE*" 2>/dev/null | sort -r); do
		rmdir "$d" 2>/dev/null
	done
	return 0
}
