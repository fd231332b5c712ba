#!/usr/bin/env bash
# Go test helpers of the seccomp and landlock suites (load after helpers):
# tests/integration/sysprobe (static, copied into a rootfs) and
# tests/integration/seccompagent (a seccomp listener, run on the host).

# build_test_helper NAME [static]: build tests/integration/NAME once per
# bats run and print its path. static: CGO_ENABLED=0, to run inside the
# busybox rootfs.
build_test_helper() {
	local name=$1 out="$BATS_RUN_TMPDIR/helpers/$1" gobin
	if [[ ! -x "$out" ]]; then
		gobin=$(command -v go || echo /usr/local/go/bin/go)
		[[ -x "$gobin" ]] || return 1
		mkdir -p "$BATS_RUN_TMPDIR/helpers"
		if [[ "${2:-}" == static ]]; then
			(cd "$REPO_ROOT" && CGO_ENABLED=0 "$gobin" build -o "$out.tmp" "./tests/integration/$name") >&2 || return 1
		else
			(cd "$REPO_ROOT" && "$gobin" build -o "$out.tmp" "./tests/integration/$name") >&2 || return 1
		fi
		mv "$out.tmp" "$out"
	fi
	# The rootless runtime user runs them too.
	chmod o+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/helpers"
	echo "$out"
}

# use_sysprobe: copy the static sysprobe into the rootfs as /bin/sysprobe.
use_sysprobe() {
	local p
	p=$(build_test_helper sysprobe static) || skip "cannot build tests/integration/sysprobe (needs go)"
	cp "$p" "$BUNDLE/rootfs/bin/sysprobe"
	chmod 0755 "$BUNDLE/rootfs/bin/sysprobe"
}
