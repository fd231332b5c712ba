#!/usr/bin/env bats
# `features`: the OCI features document, limited to what really works.

load helpers

setup() {
	setup_test
}

teardown() {
	teardown_test
}

@test "features: valid JSON with the OCI version range" {
	runtime_ok features
	jq -e . <<<"$output" >/dev/null
	jq -e '.ociVersionMin | test("^1\\.")' <<<"$output"
	jq -e '.ociVersionMax | test("^1\\.")' <<<"$output"
}

@test "features: all six hooks" {
	runtime_ok features
	for h in prestart createRuntime createContainer startContainer poststart poststop; do
		jq -e --arg h "$h" '.hooks | index($h) != null' <<<"$output" || fail "hook $h missing"
	done
}

@test "features: namespaces" {
	runtime_ok features
	for ns in mount pid uts ipc network user cgroup; do
		jq -e --arg n "$ns" '.linux.namespaces | index($n) != null' <<<"$output" || fail "namespace $ns missing"
	done
}

@test "features: mount options and capabilities" {
	runtime_ok features
	for o in ro rw bind rbind nosuid nodev noexec relatime private rprivate shared rshared slave rslave; do
		jq -e --arg o "$o" '.mountOptions | index($o) != null' <<<"$output" || fail "mount option $o missing"
	done
	for c in CAP_CHOWN CAP_KILL CAP_SYS_ADMIN CAP_NET_BIND_SERVICE CAP_AUDIT_WRITE; do
		jq -e --arg c "$c" '.linux.capabilities | index($c) != null' <<<"$output" || fail "capability $c missing"
	done
}
