#!/usr/bin/env bats
# `list [--format table|json] [-q]`.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "list: empty root" {
	runtime_ok list
	# Only the table header, if any.
	[ "${#lines[@]}" -le 1 ]
	runtime_ok list -q
	[ -z "$output" ]
	runtime_ok list --format json
	# runc prints null for no containers; [] is the better answer.
	jq -e '. == null or . == []' <<<"$output"
}

@test "list: table, quiet and json formats" {
	create_sleeping "$CID-a"
	run_detached "$CID-b"

	runtime_ok list
	[[ "${lines[0]}" =~ ^ID[[:space:]]+PID[[:space:]]+STATUS[[:space:]]+BUNDLE[[:space:]]+CREATED[[:space:]]+OWNER ]]
	[ "${#lines[@]}" -eq 3 ]
	row_a=$(grep "^$CID-a " <<<"$output")
	row_b=$(grep "^$CID-b " <<<"$output")
	[[ "$row_a" == *" created "* && "$row_a" == *" $BUNDLE "* ]]
	[[ "$row_b" == *" running "* ]]
	[[ "$row_a" == *" $(container_pid "$CID-a") "* ]]

	runtime_ok list -q
	[ "$(sort <<<"$output")" = "$(printf '%s\n%s' "$CID-a" "$CID-b")" ]

	runtime_ok list --format json
	jq -e 'length == 2' <<<"$output"
	[ "$(jq -r --arg id "$CID-a" '.[] | select(.id == $id) | .status' <<<"$output")" = created ]
	[ "$(jq -r --arg id "$CID-b" '.[] | select(.id == $id) | .status' <<<"$output")" = running ]
	[ "$(jq -r --arg id "$CID-b" '.[] | select(.id == $id) | .bundle' <<<"$output")" = "$BUNDLE" ]
	jq -e 'all(.[]; has("id") and has("pid") and has("status") and has("bundle") and has("created") and has("owner"))' <<<"$output"

	runtime_ok list -f json
	jq -e 'length == 2' <<<"$output"
}

@test "list: stopped containers are listed as stopped" {
	set_cmd true
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime_ok list --format json
	[ "$(jq -r '.[0].status' <<<"$output")" = stopped ]
}

@test "list: an unknown format is an error" {
	runtime list --format yaml
	[ "$status" -ne 0 ]
}

@test "list: a --root that does not exist is an error, a default root that does not exist lists nothing" {
	run "${AS_USER[@]}" "$RUNTIME" --root "$BATS_TEST_TMPDIR/no-such-root" list
	[ "$status" -ne 0 ]
	[[ "$output" == *"$BATS_TEST_TMPDIR/no-such-root"* ]]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/no-such-root" ]

	# The default root: $XDG_RUNTIME_DIR's for the rootless user (made on
	# first use), else root's, which a host that never made a container
	# lacks.
	if is_rootless || [[ ! -e /run/nanobox-runc ]]; then
		RUNTIME_NO_ROOT=1 runtime_ok list -q
		[ -z "$output" ]
	fi
}
