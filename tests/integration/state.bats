#!/usr/bin/env bats
# `state ID`: the OCI state JSON, and where state lives (--root).

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "state: OCI fields of a created container" {
	update_config '.annotations = {"org.example.key": "value", "x": "y"}'
	create_sleeping
	runtime_ok state "$CID"
	jq -e . <<<"$output" >/dev/null
	[ "$(jq -r .id <<<"$output")" = "$CID" ]
	[ "$(jq -r .status <<<"$output")" = created ]
	[ "$(jq -r .pid <<<"$output")" = "$(cat "$BATS_TEST_TMPDIR/$CID.pid")" ]
	[ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
	[ "$(jq -r .ociVersion <<<"$output")" = "$(jq -r .ociVersion "$BUNDLE/config.json")" ]
	[ "$(jq -r '.annotations["org.example.key"]' <<<"$output")" = value ]
	[ "$(jq -r '.annotations.x' <<<"$output")" = y ]
	# runc's extra fields.
	[ "$(jq -r .rootfs <<<"$output")" = "$BUNDLE/rootfs" ]
	# An empty owner, as runc's state prints it (list fills it in).
	jq -e '.owner == ""' <<<"$output"
	created=$(jq -r .created <<<"$output")
	[[ "$created" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$ ]]
	# Created just now (within a minute).
	now=$(date +%s)
	then=$(date -d "$created" +%s)
	[ $((now - then)) -lt 60 ] && [ $((now - then)) -ge -5 ]
}

@test "state: annotations are absent or empty when the config has none" {
	update_config 'del(.annotations)'
	create_sleeping
	runtime_ok state "$CID"
	jq -e '(.annotations // {}) == {}' <<<"$output"
}

@test "state: status follows the container: created, running, stopped" {
	set_cmd 'read line; echo done'
	runtime_ok create -b "$BUNDLE" "$CID"
	[ "$(container_status "$CID")" = created ]
	runtime_ok start "$CID"
	# stdin is /dev/null: read fails at once and the program ends.
	wait_for_status "$CID" stopped
	runtime_ok state "$CID"
	[ "$(jq -r .pid <<<"$output")" = 0 ]
}

@test "state: a container whose init was killed behind the runtime's back is stopped" {
	run_detached
	pid=$(container_pid "$CID")
	kill -9 "$pid"
	wait_for_status "$CID" stopped
}

@test "state: the state dir is one directory per container under --root" {
	create_sleeping
	[ -d "$ROOT/$CID" ]
	runtime_ok delete --force "$CID"
	[ ! -e "$ROOT/$CID" ]
}

@test "state: without --root the default root is used (/run/NAME or \$XDG_RUNTIME_DIR/NAME)" {
	if is_rootless; then
		default_root="$XDG_RUNTIME_DIR/$(runtime_name)"
	else
		default_root="/run/$(runtime_name)"
	fi
	set_args sleep 1000
	RUNTIME_NO_ROOT=1 runtime create -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	present=0
	[ -d "$default_root/$CID" ] && present=1
	RUNTIME_NO_ROOT=1 runtime state "$CID"
	st=$status
	RUNTIME_NO_ROOT=1 runtime delete --force "$CID"
	[ "$status" -eq 0 ]
	[ "$st" -eq 0 ]
	[ "$present" -eq 1 ] || fail "no state dir at $default_root/$CID"
	[ ! -e "$default_root/$CID" ]
}

@test "state: --root keeps containers apart" {
	create_sleeping
	other="$BATS_TEST_TMPDIR/other-root"
	mkdir -p "$other"
	give_to_user "$other"
	run as_user "$RUNTIME" --root "$other" state "$CID"
	[ "$status" -ne 0 ]
	run as_user "$RUNTIME" --root "$other" list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# as_user_env ENV... -- CMD...: as_user with the environment changed (env
# arguments: -u NAME or NAME=VALUE).
as_user_env() {
	local envargs=()
	while [[ $1 != -- ]]; do
		envargs+=("$1")
		shift
	done
	shift
	"${AS_USER[@]}" env "${envargs[@]}" "$@"
}

@test "state: rootless without XDG_RUNTIME_DIR has no default root, and nothing is made in /tmp" {
	requires rootless
	tmpdefault="/tmp/nanobox-runc-$(test_uid)"
	[ ! -e "$tmpdefault" ] || skip "$tmpdefault exists already (left by an older nanobox-runc)"
	run as_user_env -u XDG_RUNTIME_DIR -- "$RUNTIME" list
	echo "$output"
	[ "$status" -ne 0 ]
	if ! is_runc; then
		[[ "$output" == *"XDG_RUNTIME_DIR is not set"* ]]
		[[ "$output" == *"--root"* ]]
	fi
	[ ! -e "$tmpdefault" ] || fail "a predictable $tmpdefault was created"
	set_args sleep 1000
	run as_user_env -u XDG_RUNTIME_DIR -- "$RUNTIME" create -b "$BUNDLE" "$CID"
	echo "$output"
	[ "$status" -ne 0 ]
	[ ! -e "$tmpdefault" ] || fail "a predictable $tmpdefault was created"
}

@test "state: a default root that is a symlink or not the user's own is refused" {
	requires rootless
	skip_if_runc "runc 1.1.5 follows a symlinked state root (MkdirAll + chmod)"
	xdg="$BATS_TEST_TMPDIR/xdg2"
	mkdir -p "$xdg" "$BATS_TEST_TMPDIR/elsewhere"
	give_to_user "$xdg" "$BATS_TEST_TMPDIR/elsewhere"
	chmod 0700 "$xdg"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$xdg/nanobox-runc"
	run as_user_env XDG_RUNTIME_DIR="$xdg" -- "$RUNTIME" list
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"state root $xdg/nanobox-runc is not a directory"* ]]
	rm "$xdg/nanobox-runc"
	# Made first by someone else (root here).
	mkdir -m 0777 "$xdg/nanobox-runc"
	run as_user_env XDG_RUNTIME_DIR="$xdg" -- "$RUNTIME" list
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"belongs to uid 0, not to you"* ]]
	rmdir "$xdg/nanobox-runc"
	# Its own, made as runc makes it: 0700 and sticky.
	run as_user_env XDG_RUNTIME_DIR="$xdg" -- "$RUNTIME" list
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$xdg/nanobox-runc")" = 1700 ]
}

# fsyncs_of ARGS...: the runtime run under strace; prints how many fsync
# calls it made (its threads and children, up to their execve: init's
# program is not followed, so that a detached container is not waited for).
fsyncs_of() {
	strace -f -b execve -qq -e trace=fsync,fdatasync -e signal=none -o "$BATS_TEST_TMPDIR/strace.out" \
		"$RUNTIME" --root "$ROOT" "$@" >/dev/null 2>&1 || fail "$* failed under strace"
	grep -c 'sync(' "$BATS_TEST_TMPDIR/strace.out" || true
}

@test "state: a foreground run, whose container dies with it, writes its state without fsync; containers that outlive it are durable" {
	requires root nanobox
	command -v strace >/dev/null || skip "test requires strace (apt-get install strace)"
	set_args true
	[ "$(fsyncs_of run -b "$BUNDLE" "$CID")" -eq 0 ] || fail "a foreground run fsynced its state"
	[ "$(fsyncs_of run --keep -b "$BUNDLE" "$CID")" -gt 0 ] || fail "run --keep left a container whose state was never fsynced"
	runtime_ok delete "$CID"
	set_args sleep 1000
	[ "$(fsyncs_of run -d -b "$BUNDLE" "$CID")" -gt 0 ] || fail "run --detach did not fsync the state"
	runtime_ok delete --force "$CID"
	[ "$(fsyncs_of create -b "$BUNDLE" "$CID")" -gt 0 ] || fail "create did not fsync the state"
	runtime_ok delete --force "$CID"
}
