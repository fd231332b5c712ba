#!/usr/bin/env bats
# The CLI itself: --version, --help/-h on every command, global flags.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

COMMANDS=(create start run state list kill delete spec features)

@test "--version prints the runtime and spec versions" {
	runtime_ok --version
	[[ "${lines[0]}" =~ ^$(runtime_name)\ version\ [0-9] ]] || [[ "${lines[0]}" =~ version ]]
	grep -Eq '^spec: [0-9]+\.[0-9]+\.[0-9]+' <<<"$output"
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

@test "an unknown command is an error" {
	runtime nosuchcommand
	[ "$status" -ne 0 ]
}

@test "global flags --debug, --log-format text and --rootless auto are accepted" {
	runtime_ok --debug list
	runtime_ok --log-format text list
	runtime_ok --rootless auto list
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
	for c in start state kill delete; do
		runtime "$c"
		[ "$status" -ne 0 ]
		[[ "$output" =~ [Ii][Dd]|argument|usage|Usage ]]
	done
}
