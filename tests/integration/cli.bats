#!/usr/bin/env bats
# The CLI itself: --version, --help/-h on every command, global flags.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

COMMANDS=(create start run state list kill delete exec update pause resume ps events spec features checkpoint restore)

@test "--version prints the runtime, commit, spec, go and libseccomp versions, as runc" {
	runtime_ok --version
	[[ "${lines[0]}" =~ ^$(runtime_name)\ version\ [0-9] ]] || [[ "${lines[0]}" =~ version ]]
	grep -Eq '^spec: [0-9]+\.[0-9]+\.[0-9]+' <<<"$output"
	grep -Eq '^go: go1\.[0-9]+' <<<"$output"
	grep -Eq '^libseccomp: [0-9]+\.[0-9]+\.[0-9]+$' <<<"$output"
	# A build from a git checkout (make build) knows its commit: one of
	# this repository's (the binary may be older than HEAD).
	if ! is_runc && git -C "$REPO_ROOT" rev-parse HEAD >/dev/null 2>&1; then
		local c
		c=$(sed -En 's/^commit: ([0-9a-f]{7,40})(-dirty)?$/\1/p' <<<"$output")
		[ -n "$c" ] || fail "no commit line"
		git -C "$REPO_ROOT" cat-file -e "$c^{commit}"
	fi
	runtime_ok -v
	grep -Eq '^spec: ' <<<"$output"
}

@test "--help lists every command" {
	runtime_ok --help
	for c in "${COMMANDS[@]}"; do
		grep -Eq "^[[:space:]]+$c([ ,]|$)" <<<"$output" || fail "command $c not in --help"
	done
}

@test "-h and --help work on every command" {
	for c in "${COMMANDS[@]}"; do
		runtime_ok "$c" -h
		[[ "$output" == *"$c"* ]]
		[[ "$output" =~ [Uu]sage|USAGE ]]
		runtime_ok "$c" --help
	done
}

@test "help and h: a command at the top level, a container id below it, as in runc" {
	runtime_ok help
	grep -Eq '^[[:space:]]+run([ ,]|$)' <<<"$output" || fail "help does not list the commands"
	runtime_ok help run
	[[ "$output" == *"USAGE"* && "$output" == *" run "* ]]
	# urfave/cli v2 gives every command a help subcommand: `create ... h`
	# printed create's help and exited 0 without creating anything.
	set_args sleep 1000
	local id
	for id in h help; do
		runtime_ok create -b "$BUNDLE" "$id"
		runtime_ok state "$id"
		[[ "$output" == *"\"id\": \"$id\""* ]] || fail "state of $id: $output"
		runtime_ok delete --force "$id"
	done
	set_args true
	runtime_ok run -b "$BUNDLE" h
	[[ "$output" != *USAGE* ]] || fail "run printed its help"
}

@test "an unknown command is an error" {
	runtime nosuchcommand
	[ "$status" -ne 0 ]
}

@test "global flags --debug, --log-format text, --rootless and --criu are accepted" {
	runtime_ok --debug list
	runtime_ok --log-format text list
	runtime_ok --rootless auto list
	# runc reads --rootless with strconv.ParseBool, "auto" in any case.
	local v
	for v in AUTO 0 1 t F TRUE False; do
		runtime_ok --rootless "$v" list
	done
	if ! is_runc; then # runc only reads it where it needs it
		runtime --rootless maybe list
		[[ $status -ne 0 && "$output" == *'unknown --rootless "maybe"'* ]]
	fi
	# runc's hidden --criu, which go-runc passes whenever containerd has a
	# CRIU path: accepted, and nothing on stderr that would spoil state's
	# JSON (go-runc reads state's stdout and stderr together).
	runtime_ok --criu /usr/sbin/criu list
	run_detached
	runtime_ok --criu /usr/sbin/criu state "$CID"
	jq -e .id <<<"$output" >/dev/null || fail "state's output is not JSON: $output"
}

@test "--systemd-cgroup without systemd: a clear error" {
	[[ -d /run/systemd/system ]] && skip "this host runs systemd"
	create_sleeping_cmd=(create -b "$BUNDLE" "$CID")
	set_args sleep 1000
	runtime --systemd-cgroup "${create_sleeping_cmd[@]}"
	[ "$status" -ne 0 ]
	[[ "$output" == *systemd* ]]
	assert_nothing_left "$CID"
}

@test "commands that need an id say so" {
	# Exit 1, as runc: a usage error is not exec's 255 (which says the
	# process could not be started).
	for c in start state kill delete exec pause resume ps events update; do
		runtime "$c"
		[ "$status" -eq 1 ] || fail "$c without an id exited $status"
		[[ "$output" =~ [Ii][Dd]|argument|usage|Usage ]]
	done
}

@test "checkpoint and restore: help, and a clear \"not supported\" error" {
	skip_if_runc "runc supports checkpoint/restore (with CRIU)"
	run_detached
	for c in checkpoint restore; do
		runtime_ok "$c" --help
		[[ "$output" == *"$c"*"not supported"* ]]
		# Whatever runc's options are given.
		runtime "$c" --image-path "$BATS_TEST_TMPDIR/img" --leave-running "$CID"
		[ "$status" -ne 0 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"checkpoint/restore is not supported"* ]]
	done
	testcontainer "$CID" running
}

@test "flags may follow the container id, as with runc" {
	run_detached
	runtime_ok state "$CID"
	runtime_ok kill "$CID" KILL --all
	wait_for_status "$CID" stopped
	runtime_ok delete "$CID" --force
	runtime state "$CID"
	[ "$status" -ne 0 ]
	# Deleting what is already gone is fine with --force, wherever it is.
	runtime_ok delete "nosuch-$CID" --force
}

@test "runc 1.3's run --no-subreaper and exec --process-label are accepted" {
	set_args sleep 1000
	runtime_ok run -d --no-subreaper -b "$BUNDLE" "$CID"
	testcontainer "$CID" running
	if [[ "$(cat /sys/fs/selinux/enforce 2>/dev/null)" == "" ]]; then
		# No SELinux: the label confines nothing; a warning says so.
		runtime_ok exec --process-label system_u:system_r:container_t:s0 "$CID" true
		[[ "$output" == *"--process-label"*"SELinux is not enabled"* ]]
	fi
}

@test "container ids: runc's set of characters, nothing that is a path or needs quoting" {
	set_args sleep 1000
	local id
	for id in "a b" "a;b" 'a$b' "a/b" ".." "." "é" "a:b"; do
		runtime create -b "$BUNDLE" "$id"
		[ "$status" -ne 0 ] || fail "id '$id' was accepted"
		[[ "$output" == *"invalid container"* || "$output" == *"ID format"* ]]
	done
	for id in "$CID.a+b-c_d" "$CID..x" ".$CID" "$CID,x"; do
		runtime_ok create -b "$BUNDLE" "$id"
		runtime_ok delete --force "$id"
	done
}

@test "list --format json: runc's keys, in runc's order" {
	run_detached
	runtime_ok list --format json
	[ "$(jq -r '.[0] | keys_unsorted | join(",")' <<<"$output")" = "ociVersion,id,pid,status,bundle,rootfs,created,owner" ]
	runtime_ok state "$CID"
	[ "$(jq -r 'keys_unsorted | join(",")' <<<"$output")" = "ociVersion,id,pid,status,bundle,rootfs,created,owner" ]
}
