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

@test "features: recursive mount attributes, idmapped mounts and memory policies" {
	skip_if_runc "runc 1.1.5 has none of idmap and memoryPolicy"
	runtime_ok features
	local o
	for o in rro rrw rnosuid rsuid rnodev rdev rnoexec rexec rnodiratime rdiratime rrelatime rnorelatime \
		rnoatime ratime rstrictatime rnostrictatime rnosymfollow rsymfollow idmap ridmap tmpcopyup; do
		jq -e --arg o "$o" '.mountOptions | index($o) != null' <<<"$output" || fail "mount option $o missing"
	done
	jq -e '.linux.mountExtensions.idmap.enabled == true' <<<"$output"
	jq -e '.linux.memoryPolicy.modes | length == 7 and index("MPOL_BIND") != null' <<<"$output"
	jq -e '.linux.memoryPolicy.flags | length == 3' <<<"$output"
}

@test "features: apparmor is supported (the host's AppArmor need not be enabled), selinux is not" {
	runtime_ok features
	# As runc: "enabled" is the runtime's support, not the host's.
	jq -e '.linux.apparmor.enabled == true' <<<"$output"
	is_runc || jq -e '.linux.selinux.enabled == false' <<<"$output"
}

@test "features: the annotations that widen a container's rights are declared potentially unsafe" {
	requires nanobox
	runtime_ok features
	# org.nanobox.network opens a domain allowlist out of a namespace
	# with loopback only; engines filter what this list names.
	jq -e '.potentiallyUnsafeConfigAnnotations == ["org.nanobox.network"]' <<<"$output"
}
