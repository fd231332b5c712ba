#!/usr/bin/env bats
# Bad input: each a one-line error, a non-zero exit, and nothing left behind.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

# one_line_error: the output is a single line (nanobox; runc's is logrus
# text and sometimes more than one line).
one_line_error() {
	is_runc && return 0
	[ "${#lines[@]}" -eq 1 ] || fail "want a one-line error, got ${#lines[@]} lines"
}

@test "errors: malformed config.json names the file and the problem" {
	echo '{"ociVersion": "1.0.2", "process": ' >"$BUNDLE/config.json"
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	if ! is_runc; then
		# runc 1.1.5 says only "unexpected EOF".
		[[ "$output" == *config.json* ]]
	fi
	assert_nothing_left "$CID"
}

@test "errors: a config.json of the wrong shape names the field" {
	update_config '.process.args = "not-a-list"'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	[[ "$output" == *args* || "$output" == *string* ]]
	assert_nothing_left "$CID"
}

@test "errors: no config.json in the bundle" {
	rm "$BUNDLE/config.json"
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	[[ "$output" == *config.json* ]]
	assert_nothing_left "$CID"
}

@test "errors: a bundle that does not exist" {
	runtime create -b "$BATS_TEST_TMPDIR/no-such-bundle" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	assert_nothing_left "$CID"
}

@test "errors: missing rootfs" {
	rm -rf "$BUNDLE/rootfs"
	set_args true
	snapshot=$(ls "$ROOT")
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	[[ "$output" == *rootfs* ]]
	assert_nothing_left "$CID"
}

@test "errors: executable not found" {
	set_args no-such-program
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	[[ "$output" == *'executable file not found in $PATH'* ]]
	[[ "$output" == *no-such-program* ]]
	assert_nothing_left "$CID"
}

@test "errors: executable not found with run" {
	set_args no-such-program
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *'executable file not found in $PATH'* ]]
	assert_nothing_left "$CID"
}

@test "errors: an absolute path that is not there, and one that is not executable" {
	set_args /bin/no-such-program
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *no-such-program* ]]
	assert_nothing_left "$CID"

	echo 'not a program' >"$BUNDLE/rootfs/notexec"
	chmod 0644 "$BUNDLE/rootfs/notexec"
	set_args /notexec
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"permission denied"* || "$output" == *"Permission denied"* ]]
}

@test "errors: a program whose execve fails (a missing interpreter) is one line in init's words" {
	# The file is there and executable, so create accepts it; execve
	# fails with ENOENT for the interpreter. runc's init prints exactly
	# this line (runc's suite: run.bats "execve error").
	printf '#!/no-such-interpreter foo\nsh\n' >"$BUNDLE/rootfs/run.sh"
	chmod 0755 "$BUNDLE/rootfs/run.sh"
	set_args /run.sh
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ] || fail "want one line, got ${#lines[@]}"
	[ "${lines[0]}" = "exec /run.sh: no such file or directory" ]
	assert_nothing_left "$CID"
}

@test "errors: a cwd that is not a directory" {
	update_config '.process.cwd = "/etc/passwd"'
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
}

@test "errors: unknown id for state, start, kill, delete" {
	for c in state start kill delete; do
		runtime "$c" "nosuch-$CID"
		[ "$status" -ne 0 ]
		one_line_error
		[[ "$output" == *"does not exist"* ]]
	done
}

@test "errors: duplicate id; the first container is untouched" {
	create_sleeping
	pid=$(container_pid "$CID")
	setup_bundle "$BATS_TEST_TMPDIR/bundle2"
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	[[ "$output" == *"already exists"* || "$output" == *"exists"* ]]
	testcontainer "$CID" created
	[ "$(container_pid "$CID")" = "$pid" ]
	[ -z "$(host_mounts_under "$BUNDLE")" ]
}

@test "errors: delete of a running container without --force" {
	run_detached
	runtime delete "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	testcontainer "$CID" running
}

@test "errors: kill of a stopped container" {
	set_cmd true
	runtime_ok run -d -b "$BUNDLE" "$CID"
	wait_for_status "$CID" stopped
	runtime kill "$CID" TERM
	[ "$status" -ne 0 ]
	one_line_error
}

@test "errors: start of a running container, and of a stopped one" {
	run_detached
	runtime start "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	testcontainer "$CID" running

	runtime_ok kill "$CID" KILL
	wait_for_status "$CID" stopped
	runtime start "$CID"
	[ "$status" -ne 0 ]
	one_line_error
}

@test "errors: invalid container ids" {
	set_args true
	long=$(printf 'a%.0s' $(seq 1025))
	for id in "../x" "a/b" "" ".." "$long"; do
		runtime create -b "$BUNDLE" "$id"
		[ "$status" -ne 0 ] || fail "id '${id:0:20}' accepted"
		one_line_error
	done
	# Nothing was created anywhere, in the root or next to it.
	[ -z "$(ls -A "$ROOT")" ]
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	[ -z "$(host_mounts_under "$BUNDLE")" ]
}

@test "errors: invalid ids are refused by every command" {
	for c in state start kill delete; do
		runtime "$c" "../x"
		[ "$status" -ne 0 ]
	done
}

@test "errors: a failed create leaves no state dir, process or mount" {
	# Fails late, after the mounts: the executable is missing.
	set_args no-such-program
	update_config '.mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs"}]'
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	assert_nothing_left "$CID"
	runtime list -q
	[ -z "$output" ]
}

@test "errors: a mount that cannot be made fails create and leaves nothing" {
	update_config '.mounts += [{"destination": "/x", "type": "bind", "source": "/no/such/source", "options": ["bind"]}]'
	set_args true
	runtime create -b "$BUNDLE" "$CID"
	[ "$status" -ne 0 ]
	one_line_error
	[[ "$output" == */no/such/source* ]]
	assert_nothing_left "$CID"
}

# create_fails_once N TEXT: N creates of the bundle each fail with one line
# naming TEXT, none with a second error from init, none leaving anything.
create_fails_once() {
	local n=$1 text=$2 i
	for ((i = 0; i < n; i++)); do
		runtime create -b "$BUNDLE" "$CID"
		[ "$status" -ne 0 ]
		[[ "$output" == *"$text"* ]] || fail "no error naming $text: $output"
		one_line_error
		[[ "$output" != *"nanobox-runc init:"* ]] || fail "init printed too: $output"
		assert_nothing_left "$CID"
	done
}

@test "errors: a failure in the runtime during create is reported once, not again by init" {
	# The runtime tells init (a failed createRuntime hook) or gives up on
	# it (closes the sync socket) and reports the error itself; init, whose
	# peer is gone, must not print it a second time, nor "peer closed the
	# sync socket". Both orders of their race are tried.
	update_config '.hooks = {"createRuntime": [{"path": "/bin/false"}]}'
	set_args true
	create_fails_once 6 "createRuntime hook #0"
}

@test "errors: a cgroup limit the kernel refuses is reported once, not again by init" {
	requires root
	# The runtime writes the limits while init waits for its config, then
	# closes the socket; init must not add "peer closed the sync socket".
	# A period above 1 s is refused by cgroup v1 and v2 alike.
	update_config '.linux.resources.cpu = {"quota": 1000, "period": 9999999}'
	set_args true
	create_fails_once 8 9999999
}

@test "errors: a missing argument or an extra one" {
	runtime create -b "$BUNDLE"
	[ "$status" -ne 0 ]
	runtime state a b
	[ "$status" -ne 0 ]
}
