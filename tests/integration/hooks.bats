#!/usr/bin/env bats
# OCI hooks: all six, in order, with the state JSON on stdin, in the right
# namespaces; failures and timeouts.

load helpers

HOOKS=(prestart createRuntime createContainer startContainer poststart poststop)

setup() {
	setup_test
	HOOKDIR="$BATS_TEST_TMPDIR/hooks"
	OUT="$HOOKDIR/out"
	mkdir -p "$OUT"
	# hook.sh NAME OUTDIR [fail|sleep]: record stdin, mount ns, env, order.
	cat >"$HOOKDIR/hook.sh" <<-'EOF'
		#!/bin/sh
		name=$1 out=$2
		cat >"$out/$name.json"
		readlink /proc/self/ns/mnt >"$out/$name.mntns"
		pwd -P >"$out/$name.cwd"
		env >"$out/$name.env"
		echo "$*" >"$out/$name.args"
		echo "$name" >>"$out/order"
		case "$3" in
		fail) echo "hook $name failed on purpose" >&2; exit 3 ;;
		sleep) exec sleep 1000 ;;
		esac
		exit 0
	EOF
	chmod 0755 "$HOOKDIR/hook.sh"
	# startContainer runs in the container, after pivot_root: it needs the
	# script in the rootfs and a way to write out.
	cp "$HOOKDIR/hook.sh" "$BUNDLE/rootfs/hook.sh"
	give_to_user "$HOOKDIR" "$BUNDLE/rootfs/hook.sh"
	update_config '.mounts += [{destination: "/hooklog", type: "bind", source: $o, options: ["rbind", "rw"]}]' \
		"$BUNDLE" --arg o "$OUT"
}

teardown() {
	teardown_test
}

# add_hook KIND [fail|sleep] [TIMEOUT]
add_hook() {
	local kind=$1 mode=${2:-} timeout=${3:-} path="$HOOKDIR/hook.sh" out="$OUT"
	if [[ $kind == startContainer ]]; then
		path=/hook.sh
		out=/hooklog
	fi
	update_config '.hooks[$k] += [{path: $p, args: (["hook.sh", $k, $o] + (if $m == "" then [] else [$m] end)),
		env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOOKVAR=hook-\($k)"]}
		+ (if $t == "" then {} else {timeout: ($t | tonumber)} end)]' \
		"$BUNDLE" --arg k "$kind" --arg p "$path" --arg o "$out" --arg m "$mode" --arg t "$timeout"
}

@test "hooks: all six run in order with the state JSON on stdin" {
	for h in "${HOOKS[@]}"; do
		add_hook "$h"
	done
	run_sh 'readlink /proc/self/ns/mnt > /hooklog/container.mntns; echo ran'
	[ "$status" -eq 0 ]
	[[ "$output" == *ran* ]]
	cat "$OUT/order"
	order=$(tr '\n' ' ' <"$OUT/order")
	if is_runc && [ "$order" = "prestart createRuntime createContainer poststart startContainer poststop " ]; then
		# runc 1.1.5 runs poststart hooks during create, before start
		# (fixed in runc 1.2).
		order="prestart createRuntime createContainer startContainer poststart poststop "
	fi
	[ "$order" = "prestart createRuntime createContainer startContainer poststart poststop " ]
	for h in "${HOOKS[@]}"; do
		echo "$h: $(cat "$OUT/$h.json")"
		[ "$(jq -r .id "$OUT/$h.json")" = "$CID" ]
		[ "$(jq -r .bundle "$OUT/$h.json")" = "$BUNDLE" ]
		jq -e '.ociVersion | test("^1\\.")' "$OUT/$h.json"
		grep -qx "HOOKVAR=hook-$h" "$OUT/$h.env"
		[ "$(cat "$OUT/$h.args")" = "$h $( [[ $h == startContainer ]] && echo /hooklog || echo "$OUT")" ]
	done
	for h in prestart createRuntime createContainer startContainer poststart; do
		jq -e '.pid > 0' "$OUT/$h.json"
	done
	# runc 1.1.5 reports "created" to poststart (it runs it during create).
	is_runc || [ "$(jq -r .status "$OUT/poststart.json")" = running ]
	[ "$(jq -r .status "$OUT/poststop.json")" = stopped ]
}

@test "hooks: createRuntime on the host, createContainer and startContainer in the container's mount namespace" {
	for h in createRuntime createContainer startContainer; do
		add_hook "$h"
	done
	run_sh 'readlink /proc/self/ns/mnt > /hooklog/container.mntns'
	[ "$status" -eq 0 ]
	[ "$(cat "$OUT/createRuntime.mntns")" = "$HOST_MNTNS" ]
	[ "$(cat "$OUT/createContainer.mntns")" = "$(cat "$OUT/container.mntns")" ]
	[ "$(cat "$OUT/startContainer.mntns")" = "$(cat "$OUT/container.mntns")" ]
	[ "$(cat "$OUT/container.mntns")" != "$HOST_MNTNS" ]
}

@test "hooks: createContainer runs in the container's root directory, as in runc" {
	add_hook createContainer
	run_sh true
	[ "$status" -eq 0 ]
	[ "$(cat "$OUT/createContainer.cwd")" = "$(realpath "$BUNDLE/rootfs")" ]
}

@test "hooks: while init sets up, the state is written but not in place; create puts it there" {
	skip_if_runc "runc writes its state only once init is ready"
	# A createContainer hook runs in init before ready (the host's paths
	# still visible): the state is in a temp file then, not state.json, so
	# nobody reads a container that is not created yet.
	update_config '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", "test ! -e \($d)/state.json && ls -a \($d) > \($o)/seen"]}]' \
		"$BUNDLE" --arg d "$ROOT/$CID" --arg o "$OUT"
	runtime_ok create -b "$BUNDLE" "$CID"
	grep -q '^\.state\.json-' "$OUT/seen"
	# Once create returned: state.json, and no temp file left.
	[ -s "$ROOT/$CID/state.json" ]
	! ls -a "$ROOT/$CID" | grep -q '^\.state\.json-'
	testcontainer "$CID" created
	runtime_ok delete "$CID"
}

@test "hooks: a failing startContainer hook fails start, which exits non-zero with its error" {
	skip_if_runc "runc 1.1.5's start exits 0: its init can no longer report after the start"
	add_hook startContainer fail
	set_args sh -c 'echo the program ran > /hooklog/ran'
	runtime_ok create -b "$BUNDLE" "$CID"
	runtime start "$CID"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		[[ "$output" == *"error running startContainer hook #0: /hook.sh:"*"hook startContainer failed on purpose"* ]]
	fi
	[ ! -e "$OUT/ran" ]
	wait_for_status "$CID" stopped
	# poststart hooks do not run for a container that did not start.
	[ ! -e "$OUT/poststart.json" ]
}

@test "hooks: create runs prestart, createRuntime, createContainer; start runs startContainer, poststart; delete runs poststop" {
	skip_if_runc "runc 1.1.5 runs poststart hooks during create (fixed in runc 1.2)"
	for h in "${HOOKS[@]}"; do
		add_hook "$h"
	done
	set_args sleep 1000
	runtime_ok create -b "$BUNDLE" "$CID"
	cat "$OUT/order"
	[ "$(tr '\n' ' ' <"$OUT/order")" = "prestart createRuntime createContainer " ]
	runtime_ok start "$CID"
	retry 50 0.05 test -e "$OUT/poststart.json"
	[ "$(tr '\n' ' ' <"$OUT/order")" = "prestart createRuntime createContainer startContainer poststart " ]
	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	[ ! -e "$OUT/poststop.json" ]
	runtime_ok delete "$CID"
	[ "$(tail -n1 "$OUT/order")" = poststop ]
	[ "$(jq -r .status "$OUT/poststop.json")" = stopped ]
}

@test "hooks: a failing prestart hook fails create, runs poststop and leaves nothing" {
	add_hook prestart fail
	add_hook poststop
	add_hook poststart
	set_args sleep 1000
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	# Named prestart, not createRuntime (its successor, run next).
	[[ "$output" == *"error running prestart hook #0:"* ]]
	[ -e "$OUT/prestart.json" ]
	[ ! -e "$OUT/poststart.json" ]
	# The lifecycle goes on at the container's destruction: poststop.
	[ "$(jq -r .status "$OUT/poststop.json")" = stopped ]
	assert_nothing_left "$CID"
}

@test "hooks: a failing createRuntime hook fails create, runs poststop and leaves nothing" {
	add_hook createRuntime fail
	add_hook poststop
	set_args sleep 1000
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	# runc's text, which callers match: "error running KIND hook #N:".
	[[ "$output" == *"error running createRuntime hook #0:"*"hook createRuntime failed on purpose"* ]]
	[ "$(jq -r .status "$OUT/poststop.json")" = stopped ]
	assert_nothing_left "$CID"
}

@test "hooks: a startContainer hook without env gets the process's environment, as in runc" {
	update_config '.hooks.startContainer = [{path: "/hook.sh", args: ["hook.sh", "startContainer", "/hooklog"]}]
		| .process.env = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "ONE=two"]'
	# A hook that sets env gets exactly that.
	update_config '.hooks.startContainer += [{path: "/hook.sh", args: ["hook.sh", "second", "/hooklog"], env: ["HOOKVAR=set"]}]'
	run_sh true
	[ "$status" -eq 0 ]
	grep -qx "ONE=two" "$OUT/startContainer.env"
	grep -qx "HOOKVAR=set" "$OUT/second.env"
	! grep -q "^ONE=" "$OUT/second.env"
}

@test "hooks: a failing createContainer hook fails create, runs poststop and leaves nothing" {
	add_hook createContainer fail
	add_hook poststop
	set_args sleep 1000
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[ -e "$OUT/createContainer.json" ]
	[ "$(jq -r .status "$OUT/poststop.json")" = stopped ]
	assert_nothing_left "$CID"
}

@test "hooks: a hook that outlives its timeout is killed and fails create" {
	add_hook prestart sleep 1
	set_args sleep 1000
	# The hook would sleep for 1000 s: only its timeout ends it, and
	# create with it (the helper's own limit would end create with 124).
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	[[ "$output" == *timeout* || "$output" == *"timed out"* ]]
	assert_nothing_left "$CID"
}

@test "hooks: a failing poststop hook does not fail delete" {
	add_hook poststop fail
	set_args sleep 1000
	runtime_ok run -d -b "$BUNDLE" "$CID"
	runtime delete --force "$CID"
	[ "$status" -eq 0 ]
	[ -e "$OUT/poststop.json" ]
	assert_nothing_left "$CID"
}

@test "hooks: a failing poststart hook fails start and stops the container; the later ones do not run" {
	skip_if_runc "runc 1.1.5 runs poststart hooks during create (fixed in runc 1.2)"
	# OCI runtime spec, "Lifecycle" step 9: the runtime generates an error
	# and stops the container; delete tears it down (poststop). runc 1.2+
	# kills init and stops at the failed hook.
	add_hook poststart fail
	update_config '.hooks.poststart += [{path: $p, args: ["hook.sh", "poststart-after", $o]}]' \
		"$BUNDLE" --arg p "$HOOKDIR/hook.sh" --arg o "$OUT"
	add_hook poststop
	set_args sleep 1000
	runtime_ok create -b "$BUNDLE" "$CID"
	runtime_ok state "$CID"
	local pid
	pid=$(jq -r .pid <<<"$output")
	runtime start "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"error running poststart hook #0: $HOOKDIR/hook.sh:"*"hook poststart failed on purpose"* ]]
	[ -e "$OUT/poststart.json" ]
	[ ! -e "$OUT/poststart-after.json" ] || fail "a poststart hook after the failed one ran"
	# Stopped when start returns, not some time later.
	runtime_ok state "$CID"
	[ "$(jq -r .status <<<"$output")" = stopped ]
	! kill -0 "$pid" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] || fail "init ($pid) still runs"
	[ ! -e "$OUT/poststop.json" ]
	runtime_ok delete "$CID"
	[ -e "$OUT/poststop.json" ]
	assert_nothing_left "$CID"
}

@test "hooks: run with a failing poststart hook fails, runs the poststop hooks and leaves nothing" {
	skip_if_runc "runc 1.1.5 runs poststart hooks during create (fixed in runc 1.2)"
	add_hook poststart fail
	add_hook poststop
	local d
	for d in "" -d; do
		rm -f "$OUT/poststop.json"
		set_args sh -c 'sleep 1000; echo the program ended > /hooklog/ended'
		runtime run $d -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ]
		[[ "$output" == *"error running poststart hook #0:"* ]]
		[ -e "$OUT/poststop.json" ] || fail "run $d: no poststop hook ran"
		[ ! -e "$OUT/ended" ]
		assert_nothing_left "$CID"
	done
}

@test "hooks: after a failing poststop hook the remaining ones still run" {
	# OCI runtime spec, "Lifecycle" step 13: the runtime logs a warning and
	# the remaining hooks and lifecycle continue as if the hook had
	# succeeded (runtime-tools' poststop_fail).
	add_hook poststop fail
	update_config '.hooks.poststop += [{path: $p, args: ["hook.sh", "poststop-after", $o]}]' \
		"$BUNDLE" --arg p "$HOOKDIR/hook.sh" --arg o "$OUT"
	set_args sleep 1000
	runtime_ok run -d -b "$BUNDLE" "$CID"
	runtime_ok state "$CID"
	[ "$(jq -r .status <<<"$output")" = running ]
	runtime delete --force "$CID"
	[ "$status" -eq 0 ]
	[ -e "$OUT/poststop.json" ]
	[ -e "$OUT/poststop-after.json" ] || fail "the poststop hook after the failed one did not run"
	assert_nothing_left "$CID"
}

@test "hooks: a hook whose path does not exist fails create" {
	update_config '.hooks.prestart = [{path: "/no/such/hook"}]'
	set_args sleep 1000
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}
