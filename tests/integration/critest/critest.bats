#!/usr/bin/env bats
# Kubernetes' CRI validation suite (critest, from cri-tools) against
# containerd's CRI plugin with nanobox-runc as its runtime handler: the
# containerd set-up of cri.bats (clients/cri.bash), plus a local registry
# in containerd's network namespace that serves, under the names critest
# pulls (registry.k8s.io/e2e-test-images/..., registry.k8s.io/pause and
# k8s.gcr.io/pause, gcr.io/k8s-staging-cri-tools/...),
# images made here from busybox-static. Run through scripts/critest.sh
# (`make critest`), which builds critest and the registry and sets
# CRITEST_BIN, CRITEST_REGISTRY and CRITEST_OUT; .ci/run runs it.

load ../helpers
load ../clients/clients
load ../clients/images
load ../clients/cri

CRITEST_DIR=$(cd "$(dirname "$BATS_TEST_FILENAME")" && pwd)

# What critest checks that neither nanobox-runc nor any runtime decides
# here, each skipped by name (a regular expression of ginkgo's):
CRITEST_SKIP=(
	# AppArmor is not enabled on the host.
	'AppArmor'
	# The image service (containerd's alone): exact digests of gcr.io images.
	'Image Manager'
	# Host ports need the portmap CNI plugin and iptables; the suite's CNI
	# network is a bare bridge in a namespace of its own.
	'port mapping with host port'
	# containerd 1.6 answers NotFound for an unknown container or pod;
	# containerd 1.7 and critest (1.34 and later) want no error.
	'Idempotence Stop(Container|PodSandbox) .*if not found'
	# It starts the image's default command (busybox sh, which exits at
	# once) and removes the container tens of milliseconds later without
	# stopping it: containerd refuses that until it has seen the exit,
	# which on a loaded machine takes longer (CI failed it so, with two
	# busy loops beside it). What it tests, that the image id is the same
	# in every API, is containerd's alone.
	'Image Identifier Consistency .*same image identifier across all APIs'
	# It masks /bin/ls and runs `sh -c ls`, but Debian's static busybox
	# runs ls inside sh (FEATURE_SH_STANDALONE), with no execve for the
	# mask to deny. (Run as /bin/ls it is denied; security.bats tests
	# masked paths.)
	'should support MaskedPaths'
)
# containerd 1.6's shim starts watching a container's cgroup for OOM kills
# only once the runtime's `start` has returned (runtime/v2/runc/task,
# Start: container.Start, then ep.Add), for any runtime; critest's OOM
# container is killed at once, so on a busy machine it is killed before
# the watch and reported as "Error". cri.bats tests OOMKilled itself.
if [[ "$(containerd --version 2>/dev/null)" =~ [[:space:]]v?1\.[0-6]\. ]]; then
	CRITEST_SKIP+=('Container OOM runtime should output OOMKilled reason')
fi

PATH_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# image_config FILE JSON-ARGS: an image's "config" object with the default
# PATH and the other fields given as jq arguments.
image_config() {
	local out=$1
	shift
	jq -n --arg path "$PATH_ENV" "$@" >"$out"
}

# critest_images DIR: the layers and configs the registry serves. The base
# is the busybox rootfs of the other suites with hard-linked applets (as
# the docker-library image has: critest masks /bin/ls, which must not be
# the busybox binary itself), www-data (33), /www, and pgrep and ipcs
# scripts (Debian's static busybox has neither applet).
critest_images() {
	local d=$1 r a
	r="$d/base"
	build_busybox_rootfs "$r"
	for a in "$r"/bin/*; do
		[[ -L "$a" ]] || continue
		rm "$a" && ln "$r/bin/busybox" "$a"
	done
	echo 'www-data:x:33:33:www-data:/var/www:/bin/false' >>"$r/etc/passwd"
	echo 'www-data:x:33:' >>"$r/etc/group"
	mkdir -p "$r/var/run" "$r/www" "$r/usr/local/bin"
	echo 'Welcome to nginx!' >"$r/www/index.html"
	cat >"$r/bin/pgrep" <<-'EOF'
		#!/bin/sh
		# pgrep NAME: the pids whose comm contains NAME.
		for d in /proc/[0-9]*; do
			c=$(cat "$d/comm" 2>/dev/null) || continue
			case "$c" in *"$1"*) echo "${d#/proc/}" ;; esac
		done
	EOF
	cat >"$r/bin/ipcs" <<-'EOF'
		#!/bin/sh
		# ipcs -m: the ids of the IPC namespace's shared memory segments.
		awk 'NR > 1 {print $2}' /proc/sysvipc/shm
	EOF
	cat >"$r/bin/httpd-start" <<-'EOF'
		#!/bin/sh
		echo "httpd: serving /www on port 80"
		exec httpd -f -p 80 -h /www
	EOF
	chmod 0755 "$r/bin/pgrep" "$r/bin/ipcs" "$r/bin/httpd-start"
	tar -C "$r" --numeric-owner -cf "$d/busybox.tar" .

	# nginx: "nginx: master process" as its pid 1's command line, its pid
	# in /var/run/nginx.pid, busybox httpd on $PORT (80) beside it.
	cp -a "$r" "$d/nginx"
	rm "$d/nginx/usr/sbin" && mkdir "$d/nginx/usr/sbin" # a link to ../bin
	gcc -static -O2 -o "$d/nginx/usr/sbin/nginx" "$CRITEST_DIR/nginx.c" || return 1
	tar -C "$d/nginx" --numeric-owner -cf "$d/nginx.tar" .

	# nonewprivs: a set-user-ID root program that prints its effective uid.
	cp -a "$r" "$d/nnp"
	gcc -static -O2 -o "$d/nnp/usr/local/bin/nnp" "$CRITEST_DIR/nnp.c" || return 1
	chown 0:0 "$d/nnp/usr/local/bin/nnp" && chmod 4755 "$d/nnp/usr/local/bin/nnp"
	tar -C "$d/nnp" --numeric-owner -cf "$d/nnp.tar" .

	# predefined-group: user 1000 in group 50000, which only the image's
	# /etc/group names.
	cp -a "$r" "$d/group"
	# Without the base's own uid 1000 ("user", in group "extra").
	sed -i '/^user:/d' "$d/group/etc/passwd"
	sed -i '/^user:/d; /^extra:/d' "$d/group/etc/group"
	echo 'default-user:x:1000:1000::/home/default-user:/bin/sh' >>"$d/group/etc/passwd"
	printf 'default-user:x:1000:\ngroup-defined-in-image:x:50000:default-user\n' >>"$d/group/etc/group"
	mkdir -p "$d/group/home/default-user" && chown 1000:1000 "$d/group/home/default-user"
	tar -C "$d/group" --numeric-owner -cf "$d/group.tar" .

	# pause: what registry.k8s.io/pause is, the CRI suites' sandbox image
	# (critest 1.37 runs it with the image's own entrypoint and user).
	pause_layer "$d/pause.tar" || return 1

	image_config "$d/busybox.json" '{Env: [$path], Cmd: ["/bin/sh"]}'
	echo "$PAUSE_CONFIG" >"$d/pause.json"
	image_config "$d/nginx.json" '{Env: [$path], Cmd: ["/usr/sbin/nginx"]}'
	image_config "$d/hostnet.json" '{Env: [$path, "PORT=12003"], Cmd: ["/usr/sbin/nginx"]}'
	image_config "$d/httpd.json" '{Env: [$path], Cmd: ["/bin/httpd-start"]}'
	image_config "$d/nnp.json" '{Env: [$path], Cmd: ["/usr/local/bin/nnp"]}'
	image_config "$d/group.json" '{Env: [$path], Cmd: ["/bin/sh"], User: "1000"}'
	for a in uid:1002 username:www-data uid-group:1003:1003 username-group:www-data:www-data; do
		image_config "$d/user-${a%%:*}.json" --arg u "${a#*:}" '{Env: [$path], Cmd: ["/bin/sh"], User: $u}'
	done
}

setup_file() {
	[[ $EUID -eq 0 ]] || fail "critest runs as root" || return 1
	[[ -x "${CRITEST_BIN:-}" && -x "${CRITEST_REGISTRY:-}" ]] ||
		fail "CRITEST_BIN and CRITEST_REGISTRY are not set: run scripts/critest.sh" || return 1
	[[ -x "$RUNTIME" ]] || fail "runtime $RUNTIME is not built (make build)" || return 1
	export CRI_HANDLER CRI_SLICE="nbx-critest-$$.slice"
	CRI_HANDLER=$(cri_handler) || return 1
	local img="$BATS_FILE_TMPDIR/images" e=e2e-test-images k=k8s-staging-cri-tools
	mkdir -p "$img"
	critest_images "$img" || return 1
	# The registries critest names are all this one (hosts.toml, which
	# containerd 1.6 and 2.x both read).
	local h
	for h in registry.k8s.io k8s.gcr.io gcr.io; do
		mkdir -p "$BATS_FILE_TMPDIR/certs.d/$h"
		printf 'server = "http://127.0.0.1:5000"\n[host."http://127.0.0.1:5000"]\n  capabilities = ["pull", "resolve"]\n' \
			>"$BATS_FILE_TMPDIR/certs.d/$h/hosts.toml"
	done
	export CRI_EXTRA_TOML="
[plugins.\"io.containerd.grpc.v1.cri\".registry]
  config_path = \"$BATS_FILE_TMPDIR/certs.d\""
	# A pod with its own user namespace (hostUsers: false) has its bundle
	# under containerd's state, here: its mapped root must get there.
	chmod o+x "$BATS_RUN_TMPDIR" "$BATS_FILE_TMPDIR"
	cri_start "$BATS_FILE_TMPDIR/cri" || return 1
	nsenter --net="/run/netns/$CRI_NETNS" "$CRITEST_REGISTRY" -addr 127.0.0.1:5000 \
		"$e/busybox:1.29-2=$img/busybox.tar=$img/busybox.json" \
		"$e/nginx:1.14-2=$img/nginx.tar=$img/nginx.json" \
		"$e/httpd:2.4.39-4=$img/nginx.tar=$img/httpd.json" \
		"$e/nonewprivs:1.3=$img/nnp.tar=$img/nnp.json" \
		"$k/hostnet-nginx-$(image_arch):latest=$img/nginx.tar=$img/hostnet.json" \
		"$k/test-image-user-uid:latest=$img/busybox.tar=$img/user-uid.json" \
		"$k/test-image-user-username:latest=$img/busybox.tar=$img/user-username.json" \
		"$k/test-image-user-uid-group:latest=$img/busybox.tar=$img/user-uid-group.json" \
		"$k/test-image-user-username-group:latest=$img/busybox.tar=$img/user-username-group.json" \
		"$k/test-image-predefined-group:latest=$img/group.tar=$img/group.json" \
		"$k/test-image-tag:test=$img/busybox.tar=$img/busybox.json" \
		"pause:3.9=$img/pause.tar=$img/pause.json" \
		</dev/null >"$CRI_DIR/registry.log" 2>&1 3>&- &
	echo $! >"$CRI_DIR/registry.pid"
}

teardown_file() {
	[[ ! -f "${CRI_DIR:-}/registry.pid" ]] || kill "$(cat "$CRI_DIR/registry.pid")" 2>/dev/null
	cri_stop
	cri_remove_slices
}

@test "critest: the CRI validation suite on the nanobox handler" {
	local skip
	skip=$(
		IFS='|'
		echo "${CRITEST_SKIP[*]}"
	)
	# shellcheck disable=SC2086 # CRITEST_ARGS: more ginkgo flags, split
	run nsenter --net="/run/netns/$CRI_NETNS" "$CRITEST_BIN" \
		--runtime-endpoint "unix://$CRI_DIR/containerd.sock" \
		--image-endpoint "unix://$CRI_DIR/containerd.sock" \
		--ginkgo.no-color --ginkgo.v --ginkgo.skip "$skip" ${CRITEST_ARGS:-}
	printf '%s\n' "$output" >"${CRITEST_OUT:-$BATS_FILE_TMPDIR/critest.out}"
	grep -E '^(Ran |SUCCESS!|FAIL!|  \[FAIL\])' <<<"$output" || true
	[ "$status" -eq 0 ]
}
