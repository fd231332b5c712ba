#!/bin/bash
# runc-integration.sh [BATS_FILE...]: runc's own integration suite
# (tests/integration of github.com/opencontainers/runc at RUNC_VERSION,
# default v1.5.3) against $RUNTIME (default ./nanobox-runc), as root.
#
# runc's source is fetched through the Go module proxy (never copied into
# this repository) and set up once under
# ${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-runc-tests/RUNC_VERSION: its
# tests/cmd helpers (recvtty, seccompagent, fs-idmap, ...) built into
# tests/cmd/_bin, where its helpers.bash looks for them, and its busybox
# image made from Debian's busybox-static instead of the one get-images.sh
# would download (apt-get install busybox-static bats tini when missing).
#
# BATS_FILE names suites (e.g. mounts.bats, or mounts); default all but the
# ones that need the Debian image (see DEBIAN_SUITES), which run only when
# DEBIAN_IMAGE names a Debian rootfs tarball (.tar.xz) to use, or is
# "debootstrap": a minbase bookworm made once with debootstrap (from the
# host's apt mirror) and kept in the cache.
# BATS_FILTER, when set, runs only the tests whose names match it (a regular
# expression, as bats --filter takes).
# The TAP output is kept in $OUT (default a new file under /tmp). Prints
# "tests: N passed, N failed, N skipped"; exits non-zero when a test failed.
# RUNTIME=$(which runc) runs the same suite against runc itself.
#
# ROOTLESS=1 runs it the way runc's tests/rootless.sh does (runc's `make
# localrootlessintegration`): as the user "rootless" (made when missing),
# once for each set of runc's opportunistic rootless features: "" (none),
# "idmap" (sub-id ranges for newuidmap, runc's ROOTLESS_UIDMAP_*),
# "cgroup" (a cgroup /runc-cgroups-integration-test the user may write, in
# every hierarchy) and "idmap+cgroup"; ROOTLESS_FEATURES="idmap+cgroup"
# (sets separated by ":") runs only those. The suite's tree is copied to a
# directory the user can read; the host's newuidmap is left in place (runc's
# script hides it for the sets without idmap, which changes nothing there:
# those configs map one id). The counts are summed over the sets.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/modsrc.sh
. "$REPO/scripts/modsrc.sh"
RUNTIME=${RUNTIME:-$REPO/nanobox-runc}
RUNC_VERSION=${RUNC_VERSION:-v1.5.3}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nanobox-runc-runc-tests/$RUNC_VERSION
DEBIAN_SUITES="hooks_so idmap ioprio scheduler mounts_propagation mounts_propagation_unsafe mounts_recursive"

if [[ $(id -u) != 0 ]]; then
	echo "runc-integration.sh: runc's suite runs rootful tests as root (its rootless mode needs tests/rootless.sh's set-up): run it as root" >&2
	exit 2
fi
if [[ $RUNTIME != */* ]]; then
	RUNTIME=$(command -v "$RUNTIME")
fi
RUNTIME=$(readlink -f "$RUNTIME")
if [[ ! -x $RUNTIME ]]; then
	echo "runc-integration.sh: $RUNTIME is not an executable: run make build, or set RUNTIME" >&2
	exit 2
fi

missing=()
command -v bats >/dev/null || missing+=(bats)
[[ -x /bin/busybox ]] && /bin/busybox --list >/dev/null 2>&1 || missing+=(busybox-static)
command -v jq >/dev/null || missing+=(jq)
command -v gawk >/dev/null || missing+=(gawk) # runc's helpers.bash reads cgroup paths with it
command -v tini >/dev/null || missing+=(tini)
if [[ ${#missing[@]} -gt 0 ]]; then
	apt-get install -y "${missing[@]}"
fi

# busybox_image TARBALL: a rootfs like the docker-library busybox image
# runc's tests expect (every applet in /bin, root and nobody, /tmp 1777),
# from the host's static busybox. Like that image it has no /proc or /sys
# (the runtime makes them): mask.bats's "prohibit symlink /proc" and
# "/sys" put a symlink there, which ln makes inside an existing directory.
# BUSYBOX_IMAGE_VERSION names this layout: a tarball of another is remade.
BUSYBOX_IMAGE_VERSION=2
busybox_image() {
	local out=$1 r a
	r=$(mktemp -d /tmp/runc-busybox.XXXXXX)
	mkdir -p "$r"/{bin,etc,dev,tmp,root,home,usr/sbin,var/spool/mail,var/www}
	cp /bin/busybox "$r/bin/busybox"
	for a in $(/bin/busybox --list); do
		[[ $a == busybox ]] || ln "$r/bin/busybox" "$r/bin/$a"
	done
	# mktemp made it 0700, and the tarball's "." sets the bundle's rootfs.
	chmod 755 "$r"
	chmod 1777 "$r/tmp"
	chmod 700 "$r/root"
	cat >"$r/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		daemon:x:1:1:daemon:/usr/sbin:/bin/false
		bin:x:2:2:bin:/bin:/bin/false
		sys:x:3:3:sys:/dev:/bin/false
		sync:x:4:100:sync:/bin:/bin/sync
		mail:x:8:8:mail:/var/spool/mail:/bin/false
		www-data:x:33:33:www-data:/var/www:/bin/false
		operator:x:37:37:Operator:/var:/bin/false
		nobody:x:65534:65534:nobody:/home:/bin/false
	EOF
	cat >"$r/etc/group" <<-'EOF'
		root:x:0:
		daemon:x:1:
		bin:x:2:
		sys:x:3:
		adm:x:4:
		tty:x:5:
		disk:x:6:
		lp:x:7:
		mail:x:8:
		kmem:x:9:
		wheel:x:10:root
		cdrom:x:11:
		dialout:x:18:
		floppy:x:19:
		video:x:28:
		audio:x:29:
		tape:x:32:
		www-data:x:33:
		operator:x:37:
		utmp:x:43:
		plugdev:x:46:
		staff:x:50:
		lock:x:54:
		netdev:x:82:
		users:x:100:
		nogroup:x:65534:
	EOF
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cJf "$out.tmp" .
	mv "$out.tmp" "$out"
	rm -rf "$r"
}

if [[ ! -e $CACHE/.ready ]]; then
	module_source "github.com/opencontainers/runc@$RUNC_VERSION" "$CACHE"
	# Module zips keep no mode bits: scripts (get-images.sh...) get theirs back.
	grep -rlI --exclude-dir=.git -m1 '^#!' "$CACHE/tests" "$CACHE/script" | xargs -r chmod +x
	(
		cd "$CACHE"
		rm -rf vendor # the module zip has no vendor tree: dependencies from the proxy
		export GOEXPERIMENT= GOFLAGS=-mod=mod
		mkdir -p tests/cmd/_bin
		# runc's Makefile builds with -tags seccomp (seccompagent needs it).
		for c in recvtty sd-helper seccompagent fs-idmap pidfd-kill remap-rootfs; do
			"$GO" build -tags seccomp -o tests/cmd/_bin/ "./tests/cmd/$c"
		done
	)
	touch "$CACHE/.ready"
fi
testdata=$CACHE/tests/integration/testdata
mkdir -p "$testdata"
# The names get-images.sh looks for (GOARCH; armv7 and the like aside).
arch=$("$GO" env GOARCH)
if [[ ! -e $testdata/busybox-$arch.tar.xz || $(cat "$testdata/.busybox-image-version" 2>/dev/null) != "$BUSYBOX_IMAGE_VERSION" ]]; then
	busybox_image "$testdata/busybox-$arch.tar.xz"
	echo "$BUSYBOX_IMAGE_VERSION" >"$testdata/.busybox-image-version"
fi

# get-images.sh downloads what testdata lacks: give it the Debian image, or
# a stand-in that the suites needing it never see (they are not run).
run_debian=0
rm -f "$testdata/debian-$arch.tar.xz"
if [[ ${DEBIAN_IMAGE:-} == debootstrap ]]; then
	# -2: the root directory is 0755 (the first made it 0700, mktemp's
	# mode, and a container whose user namespace does not map the host's
	# root could not enter it).
	DEBIAN_IMAGE=$(dirname "$CACHE")/debian-bookworm-$arch-2.tar.xz
	if [[ ! -e $DEBIAN_IMAGE ]]; then
		command -v debootstrap >/dev/null || apt-get install -y debootstrap
		r=$(mktemp -d /tmp/runc-debian.XXXXXX)
		mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1 || true)
		debootstrap --variant=minbase bookworm "$r" ${mirror:+"$mirror"} >&2
		chmod 0755 "$r"
		tar --numeric-owner -C "$r" -cf - . | xz -T0 -1 >"$DEBIAN_IMAGE.tmp"
		mv "$DEBIAN_IMAGE.tmp" "$DEBIAN_IMAGE"
		rm -rf "$r"
	fi
fi
if [[ -n ${DEBIAN_IMAGE:-} ]]; then
	ln -s "$(readlink -f "$DEBIAN_IMAGE")" "$testdata/debian-$arch.tar.xz"
	run_debian=1
else
	ln -s "busybox-$arch.tar.xz" "$testdata/debian-$arch.tar.xz"
fi

cd "$CACHE/tests/integration"
files=()

if [[ $# -gt 0 ]]; then
	for f in "$@"; do
		f=${f%.bats}.bats
		[[ -e $f ]] || { echo "runc-integration.sh: no suite $f" >&2; exit 2; }
		files+=("$f")
	done
else
	for f in *.bats; do
		if [[ $run_debian == 0 && " $DEBIAN_SUITES " == *" ${f%.bats} "* ]]; then
			echo "runc-integration.sh: not running $f: it needs the Debian image (set DEBIAN_IMAGE)"
			continue
		fi
		files+=("$f")
	done
fi

OUT=${OUT:-$(mktemp /tmp/runc-integration.XXXXXX.tap)}

# runc's netdev.bats and userns.bats move a device made by `ip link add
# dummy0 type dummy` (and call `udevadm settle`). A kernel without the
# dummy driver (this VM's) fails them in set-up, against runc too: there a
# veth (its peer named NAMEp, left on the host) stands in for the dummy
# device, through an `ip` first in PATH; a missing udevadm is a no-op.
shims=$(mktemp -d /tmp/runc-integration-shims.XXXXXX)
tree='' aux_dir=''
# On a cgroup v1 or hybrid host, /proc/cgroups lists controllers that no v1
# hierarchy mounts (here net_cls, net_prio, perf_event, and hugetlb, which
# is in the unified hierarchy). runc's helpers `mkdir -p` a parent cgroup
# under /sys/fs/cgroup/NAME for each, which as root makes plain directories
# in the tmpfs there: they are removed after the run. The rootless runs
# with cgroups get the same directories, the user's to write.
unmounted=()
if [[ $(stat -f -c %T /sys/fs/cgroup) == tmpfs ]]; then
	for cg in $(awk '!/^#/ && $4 == 1 {print $1}' /proc/cgroups); do
		[[ -e /sys/fs/cgroup/$cg ]] || unmounted+=("$cg")
	done
fi
# runc's tests make /runc-cgroups-integration-test cgroups (pods, with
# limits) in every hierarchy their helpers find, and do not remove all of
# them on a hybrid host (the unified one is left): those the run made are
# removed after it, deepest first (rmdir refuses a cgroup still in use).
cg_test_dirs() {
	local d
	for d in /sys/fs/cgroup/runc-cgroups-integration-test /sys/fs/cgroup/*/runc-cgroups-integration-test; do
		[[ -d $d ]] && echo "$d"
	done
	return 0
}
cg_test_before=$(cg_test_dirs)
cleanup() {
	local cg d
	if declare -F cgroups_off >/dev/null; then cgroups_off; fi
	for d in $(cg_test_dirs); do
		grep -qxF "$d" <<<"$cg_test_before" ||
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	for cg in "${unmounted[@]}"; do
		# Plain directories only, never a hierarchy mounted meanwhile.
		if [[ -d /sys/fs/cgroup/$cg ]] && ! mountpoint -q "/sys/fs/cgroup/$cg"; then
			find "/sys/fs/cgroup/$cg" -xdev -depth -type d -empty -delete 2>/dev/null || true
		fi
	done
	rm -rf "$shims" ${tree:+"$tree"} ${aux_dir:+"$aux_dir"}
}
trap cleanup EXIT
chmod 0755 "$shims"
if ! ip link add nbx-probe0 type dummy 2>/dev/null; then
	real_ip=$(command -v ip)
	cat >"$shims/ip" <<EOF
#!/bin/sh
# runc-integration.sh: no dummy driver in this kernel; a veth stands in
if [ "\$1 \$2 \$4 \$5" = "link add type dummy" ]; then
	exec $real_ip link add "\$3" type veth peer name "\${3}p"
fi
exec $real_ip "\$@"
EOF
	chmod 0755 "$shims/ip"
	echo "runc-integration.sh: no dummy network driver here: a veth stands in for runc's dummy0"
else
	ip link del nbx-probe0
fi
if ! command -v udevadm >/dev/null; then
	printf '#!/bin/sh\nexit 0\n' >"$shims/udevadm"
	chmod 0755 "$shims/udevadm"
fi
PATH=$shims:$PATH

filter=()
[[ -z ${BATS_FILTER:-} ]] || filter=(--filter "$BATS_FILTER")

# run_bats OUT DIR [ENV...]: the suites of DIR (a copy of runc's tests for
# the rootless runs) with bats, TAP in OUT; as the user "rootless" when
# ENV is given (the variables runc's helpers read).
#
# Under tini -s, a child subreaper that reaps at once: the processes a
# test orphans (run -d's init, exec -d's processes) are reparented to it,
# not to the host's pid 1, which may be slow to reap them (this VM's is),
# and the tests that wait for killed pids to vanish (kill -0 succeeds on a
# zombie: "host pidns + init gone" in kill.bats and delete.bats) then fail
# against runc too. runc's CI has systemd there.
run_bats() {
	local out=$1 dir=$2 bats_pid plan reported p exe rc=0
	shift 2
	local as=()
	if [[ $# -gt 0 ]]; then
		as=(runuser -u rootless -- env -i "PATH=$PATH" HOME=/home/rootless USER=rootless "$@")
	fi
	: >"$out" # before the loop below reads it (the redirect is the job's)
	(cd "$dir/tests/integration" && RUNC=$RUNTIME tini -s -- "${as[@]}" bats --tap "${filter[@]}" "${files[@]}") >"$out" 2>&1 &
	bats_pid=$!
	# A helper that a failing test leaves running (a recvtty whose container
	# never started) holds bats's output pipe open, and bats waits for its
	# EOF for ever: once every test has reported, end such leftovers of the
	# suite's own helper binaries (by pid, found through /proc/PID/exe).
	while kill -0 "$bats_pid" 2>/dev/null; do
		plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -n 1)
		reported=$(grep -cE '^(not )?ok ' "$out" || true)
		if [[ -n $plan && $reported -ge $plan ]]; then
			sleep 10
			for p in /proc/[0-9]*; do
				exe=$(readlink "$p/exe" 2>/dev/null) || continue
				if [[ $exe == "$dir"/tests/cmd/_bin/* ]]; then
					echo "runc-integration.sh: ending leftover $exe (pid ${p#/proc/})"
					kill "${p#/proc/}" 2>/dev/null || true
				fi
			done
			break
		fi
		sleep 2
	done
	wait "$bats_pid" || rc=$?
	if [[ $rc -ne 0 ]] && ! grep -q '^not ok ' "$out"; then
		echo "runc-integration.sh: bats exited $rc with no failed test: see $out" >&2
		bats_broken=1
	fi
}

bats_broken=0
if [[ ${ROOTLESS:-0} == 0 ]]; then
	echo "runc $RUNC_VERSION tests/integration against $RUNTIME: ${#files[@]} suites, TAP in $OUT"
	run_bats "$OUT" "$CACHE"
	outs=("$OUT")
else
	# As runc's tests/rootless.sh, with other sub-id ranges: the host's
	# test user already has runc's 100000.
	id rootless >/dev/null 2>&1 || useradd -m -d /home/rootless -s /bin/bash rootless
	uid_start=300000 gid_start=400000 id_len=65536
	for f in /etc/subuid /etc/subgid; do
		start=$uid_start
		[[ $f == /etc/subgid ]] && start=$gid_start
		if ! grep -qx "rootless:$start:$id_len" "$f"; then
			{
				grep -v '^rootless:' "$f" || true
				echo "rootless:$start:$id_len"
			} >"$f.nbx"
			mv "$f.nbx" "$f"
		fi
	done
	# The tree, readable by the user (root's cache is not).
	tree=$(mktemp -d /tmp/nbx-runc-rootless.XXXXXX)
	cp -a "$CACHE/." "$tree/"
	if [[ $run_debian == 1 ]]; then
		# The Debian image is a link into root's cache: a copy instead.
		cp -L --remove-destination "$testdata/debian-$arch.tar.xz" "$tree/tests/integration/testdata/"
	fi
	chmod -R a+rX "$tree"
	chmod 755 "$tree"
	aux_dir=$(mktemp -d /tmp/nbx-runc-aux.XXXXXX)
	# 1000 is the containerID of runc_rootless_idmap's uid range.
	chown "$((uid_start - 1000 + 1024))" "$aux_dir"
	cg_path=/runc-cgroups-integration-test
	cgroups_on() {
		local cg d
		for cg in $(cut -d: -f2 </proc/self/cgroup | sed -E 's/^name=//; s/,/\n/g' | sed '/^$/d'); do
			d=/sys/fs/cgroup/$cg$cg_path
			mkdir -p "$d"
			chown root:rootless "$d" "$d/cgroup.procs" "$d/tasks"
			chmod g+rwx "$d" "$d/cgroup.procs" "$d/tasks"
			if [[ $cg == cpuset ]]; then chown rootless:rootless "$d"/cpuset.{cpus,mems}; fi
			for f in cpu.rt_period_us cpu.rt_runtime_us; do
				if [[ $cg == cpu && -e $d/$f ]]; then chown rootless:rootless "$d/$f"; fi
			done
		done
		for cg in "${unmounted[@]}"; do
			d=/sys/fs/cgroup/$cg$cg_path
			mkdir -p "$d"
			chown root:rootless "$d"
			chmod g+rwx "$d"
		done
		if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
			for f in $(cat /sys/fs/cgroup/cgroup.controllers); do echo "+$f" >/sys/fs/cgroup/cgroup.subtree_control || true; done
			d=/sys/fs/cgroup$cg_path
			mkdir -p "$d"
			chown root:rootless "$d" "$d/cgroup.subtree_control" "$d/cgroup.procs" /sys/fs/cgroup/cgroup.procs
			chmod g+rwx "$d"
			chmod g+rw "$d/cgroup.subtree_control" "$d/cgroup.procs" /sys/fs/cgroup/cgroup.procs
		fi
	}
	cgroups_off() {
		local d
		for d in /sys/fs/cgroup/*$cg_path /sys/fs/cgroup$cg_path; do
			[[ -d $d ]] && rmdir "$d" 2>/dev/null || true
		done
		if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
			chown root:root /sys/fs/cgroup/cgroup.procs
			chmod 644 /sys/fs/cgroup/cgroup.procs
		fi
	}
	outs=()
	IFS=: read -r -a sets <<<"${ROOTLESS_FEATURES-:idmap:cgroup:idmap+cgroup}"
	[[ ${#sets[@]} -gt 0 ]] || sets=("")
	for set in "${sets[@]}"; do
		o=${OUT%.tap}.rootless-${set:-none}.tap
		echo "runc $RUNC_VERSION tests/integration against $RUNTIME, rootless, features \"$set\": ${#files[@]} suites, TAP in $o"
		env=(ROOTLESS_FEATURES="$set" "RUNC=$RUNTIME")
		[[ $set == *idmap* ]] && env+=(ROOTLESS_UIDMAP_START=$uid_start ROOTLESS_UIDMAP_LENGTH=$id_len ROOTLESS_GIDMAP_START=$gid_start ROOTLESS_GIDMAP_LENGTH=$id_len AUX_UID=1024 "AUX_DIR=$aux_dir")
		if [[ $set == *cgroup* ]]; then cgroups_on; else cgroups_off; fi
		run_bats "$o" "$tree" "${env[@]}"
		outs+=("$o")
	done
fi

grep -h '^not ok' "${outs[@]}" || true
skipped=$(cat "${outs[@]}" | grep -cE '^ok .* # skip' || true)
ok=$(cat "${outs[@]}" | grep -c '^ok ' || true)
failed=$(cat "${outs[@]}" | grep -c '^not ok ' || true)
echo "tests: $((ok - skipped)) passed, $failed failed, $skipped skipped"
[[ $bats_broken == 0 ]] || exit 1
[[ $failed -eq 0 ]]
