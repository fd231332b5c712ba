#!/usr/bin/env bats
# `spec [--rootless] [--bundle DIR]`: runc's default config.json.

load helpers

setup() {
	setup_test
	SPECDIR="$BATS_TEST_TMPDIR/spec"
	mkdir -p "$SPECDIR"
	give_to_user "$SPECDIR"
	FIXTURE="$INTEGRATION_ROOT/fixtures/runc-spec.json"
}

teardown() {
	teardown_test
}

# same FILTER: the filtered spec equals the filtered runc 1.1.5 default.
same() {
	local got want
	got=$(jq -S "$1" "$SPECDIR/config.json")
	want=$(jq -S "${@:2}" "$1" "$WANT")
	if [[ "$got" != "$want" ]]; then
		echo "spec differs from runc's at $1:"
		diff <(echo "$want") <(echo "$got")
		return 1
	fi
}

# superset FILTER: the filtered spec (a list) holds all of runc 1.1.5's
# entries; later runc versions mask more paths, and so may we.
superset() {
	local missing
	missing=$(jq -n --slurpfile got "$SPECDIR/config.json" --slurpfile want "$WANT" \
		"(\$want[0] | $1) - (\$got[0] | $1) | .[]")
	[[ -z "$missing" ]] || fail "spec lacks runc's $1 entries: $missing"
}

@test "spec: writes runc's defaults to ./config.json" {
	cd "$SPECDIR"
	runtime_ok spec
	[ -f config.json ]
	jq -e . config.json >/dev/null
	WANT=$FIXTURE
	[ "$(jq -r .process.terminal config.json)" = true ]
	jq -e '.process.args == ["sh"]' config.json
	[ "$(jq -r .root.path config.json)" = rootfs ]
	jq -e '.ociVersion | test("^1\\.")' config.json
	same .mounts
	superset .linux.maskedPaths
	superset .linux.readonlyPaths
	# runc 1.1.5 also lists ambient; later runc dropped it (without
	# inheritable the kernel drops ambient caps anyway).
	same '.process.capabilities | {bounding, effective, permitted}'
	same .process.rlimits
	same .process.env
	same .process.cwd
	same .process.user
	same .process.noNewPrivileges
	same .root.readonly
	same '.linux.namespaces | map(.type) | sort'
}

@test "spec --bundle DIR: writes DIR/config.json" {
	runtime_ok spec --bundle "$SPECDIR"
	[ -f "$SPECDIR/config.json" ]
	jq -e '.process.args == ["sh"]' "$SPECDIR/config.json"
}

@test "spec --rootless: user namespace mapping the caller, no network namespace" {
	runtime_ok spec --rootless --bundle "$SPECDIR"
	cfg="$SPECDIR/config.json"
	uid=$(as_user id -u)
	gid=$(as_user id -g)
	jq -e '.linux.namespaces | map(.type) | index("user") != null' "$cfg"
	jq -e '.linux.namespaces | map(.type) | index("network") == null' "$cfg"
	jq -e --argjson u "$uid" '.linux.uidMappings[0] == {containerID: 0, hostID: $u, size: 1}' "$cfg"
	jq -e --argjson g "$gid" '.linux.gidMappings[0] == {containerID: 0, hostID: $g, size: 1}' "$cfg"
	jq -e '.linux.resources == null' "$cfg"
	# The rest is what runc --rootless writes.
	WANT=$(mktemp "$BATS_TEST_TMPDIR/want.XXXXXX")
	jq --argjson uid "$uid" --argjson gid "$gid" -f "$INTEGRATION_ROOT/fixtures/rootless.jq" "$FIXTURE" >"$WANT"
	same .mounts
	superset .linux.maskedPaths
	superset .linux.readonlyPaths
	same '.linux.namespaces | map(.type) | sort'
}

@test "spec: refuses to overwrite an existing config.json" {
	echo '{"keep": "me"}' >"$SPECDIR/config.json"
	chmod 0666 "$SPECDIR/config.json"
	runtime spec --bundle "$SPECDIR"
	[ "$status" -ne 0 ]
	[[ "$output" == *config.json* ]]
	[ "$(jq -r .keep "$SPECDIR/config.json")" = me ]
}

@test "spec: the written config runs (after pointing it at a rootfs)" {
	# The default is what bundle-building tools start from: it must be
	# accepted as it is, apart from the terminal.
	cp -a "$BUNDLE/rootfs" "$SPECDIR/rootfs"
	if is_rootless; then
		runtime_ok spec --rootless --bundle "$SPECDIR"
	else
		runtime_ok spec --bundle "$SPECDIR"
	fi
	update_config '.process.terminal = false | .process.args = ["echo", "spec ok"]' "$SPECDIR"
	runtime run -b "$SPECDIR" "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"spec ok"* ]]
}

@test "spec: a config.json written by runc 1.1.5 runs as it is" {
	# Tools build bundles with `runc spec`; a drop-in must take them. This
	# one lists ambient capabilities that are not inheritable, which runc
	# accepts (the kernel drops them).
	if is_rootless; then
		jq --argjson uid "$(as_user id -u)" --argjson gid "$(as_user id -g)" \
			-f "$INTEGRATION_ROOT/fixtures/rootless.jq" "$FIXTURE" >"$BUNDLE/config.json"
	else
		cp "$FIXTURE" "$BUNDLE/config.json"
	fi
	update_config '.process.terminal = false | .process.args = ["echo", "runc config ok"]'
	runtime run -b "$BUNDLE" "$CID"
	[ "$status" -eq 0 ]
	[[ "$output" == *"runc config ok"* ]]
}
