#!/usr/bin/env bats
# Rootless podman (as the unprivileged test user, through conmon) runs its
# containers on nanobox-runc. Podman then runs the runtime as uid 0 of the
# user namespace it made, with the user's XDG_RUNTIME_DIR, on a config with
# no user namespace and, on cgroup v1, no cgroupsPath: root only inside it.
# Rootless mode only (tests/integration/run.sh --mode rootless); podman's
# storage and config are private to each test. No image: --rootfs, a copy
# of the suite's busybox owned by the user; no network (no slirp4netns).

load helpers
load clients/clients

bats_require_minimum_version 1.5.0

setup() {
	setup_test
	is_rootless || skip "rootless podman runs in the rootless mode (run.sh --mode rootless)"
	command -v podman >/dev/null && command -v conmon >/dev/null ||
		skip "podman is not installed (apt-get install podman conmon)"
	requires newuidmap
	# Not below bats' temporary directory: podman chmods every parent of a
	# --rootfs that its user namespace's root cannot search, and fails on
	# the ones it does not own.
	PM_DIR=$(mktemp -d /tmp/nbx-podman-rootless.XXXXXX)
	chmod 0755 "$PM_DIR"
	mkdir -p "$PM_DIR"/{graphroot,runroot,tmp,home,xdg}
	chmod 0700 "$PM_DIR/xdg"
	cp -a "$BUNDLE/rootfs" "$PM_DIR/rootfs"
	podman_confs "$PM_DIR" vfs
	chown -R "$(test_uid):$(test_gid)" "$PM_DIR"
}

teardown() {
	if [[ -n "${PM_DIR:-}" ]]; then
		pmr rm -af -t 0 >/dev/null 2>&1 || true
		# podman's storage holds files of the user's subordinate ids.
		pmr unshare rm -rf "$PM_DIR/graphroot" "$PM_DIR/runroot" >/dev/null 2>&1 || true
		rm -rf "$PM_DIR"
	fi
	teardown_test
}

# pmr ARGS...: rootless podman as the test user, on nanobox-runc; sets
# $status and $output (stdout and stderr) like bats' run.
pmr() {
	status=0
	output=$(timeout -k 5 60 "${AS_USER[@]}" HOME="$PM_DIR/home" XDG_RUNTIME_DIR="$PM_DIR/xdg" \
		CONTAINERS_CONF="$PM_DIR/containers.conf" \
		CONTAINERS_STORAGE_CONF="$PM_DIR/storage.conf" \
		podman --runtime "$RUNTIME" "$@" </dev/null 2>&1) || status=$?
	echo "\$ podman $* (status $status, rootless)"
	[[ -z "$output" ]] || echo "$output"
}

@test "rootless podman run --rm: output and exit status" {
	pmr run --rm --rootfs "$PM_DIR/rootfs" sh -c 'echo hello from nanobox; id -u'
	[ "$status" -eq 0 ]
	[[ "$output" == *"hello from nanobox"*0* ]]
	pmr run --rm --rootfs "$PM_DIR/rootfs" sh -c 'exit 3'
	[ "$status" -eq 3 ]
	# The runtime kept its state under the user's XDG_RUNTIME_DIR, not in
	# root's /run/nanobox-runc.
	[[ ! -e /run/nanobox-runc ]] || [[ -z "$(find /run/nanobox-runc -user "$(test_uid)" 2>/dev/null)" ]]
}

@test "rootless podman: run -d, exec, top, stop and rm" {
	pmr run -d --name pr1 --rootfs "$PM_DIR/rootfs" sleep 100
	[ "$status" -eq 0 ]
	pmr exec pr1 sh -c 'echo exec-ran'
	[[ "$status" -eq 0 && "$output" == *exec-ran* ]]
	pmr top pr1
	[[ "$status" -eq 0 && "$output" == *"sleep 100"* ]]
	pmr stop -t 1 pr1
	[ "$status" -eq 0 ]
	pmr inspect --format '{{.State.Status}}' pr1
	[[ "$output" == exited ]]
	pmr rm pr1
	[ "$status" -eq 0 ]
}

@test "rootless podman run -t: the program has a terminal" {
	pmr run --rm -t --rootfs "$PM_DIR/rootfs" sh -c 'tty; test -t 0 && test -t 1 && echo all-tty'
	[ "$status" -eq 0 ]
	[[ "$output" == *"/dev/pts/"* && "$output" == *all-tty* ]]
}
