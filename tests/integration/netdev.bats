#!/usr/bin/env bats
# linux.netDevices: host network devices moved into the container's network
# namespace. This host may have no dummy driver: a veth pair stands in (its
# peer stays on the host, and goes with it).

load helpers

setup() {
	setup_test
	DEV="nd$RANDOM"
	NETNS=""
}

teardown() {
	teardown_test
	ip link del "$DEV" 2>/dev/null
	ip link del "$DEV-p" 2>/dev/null
	[[ -z "$NETNS" ]] || ip netns del "$NETNS" 2>/dev/null
	return 0
}

# host_dev: a veth pair DEV / DEV-p on the host.
host_dev() {
	requires root ip
	ip link add "$DEV" type veth peer name "$DEV-p" || skip "cannot create a veth pair here"
}

# net_devices JSON: linux.netDevices = JSON, in a network namespace of the
# container's (the rootless spec has none).
net_devices() {
	update_config '.linux.netDevices = $d
		| if any(.linux.namespaces[]; .type == "network") then . else .linux.namespaces += [{"type": "network"}] end' "$BUNDLE" --argjson d "$1"
}

@test "netdev: a device moves in under its new name, up, with its MTU, MAC and permanent global addresses only" {
	host_dev
	ip link set dev "$DEV" mtu 1789 address 00:11:22:33:44:55
	ip address add 169.254.169.77/32 dev "$DEV"
	ip address add 10.99.0.1/24 dev "$DEV" valid_lft 300 preferred_lft 300
	ip address add 127.0.0.33/8 dev "$DEV"
	ip -6 address add fd00:99::1/64 dev "$DEV" nodad
	net_devices "{\"$DEV\": {\"name\": \"ctr0\"}}"
	run_sh 'ip -o link show dev ctr0; ip -o address show dev ctr0'
	[ "$status" -eq 0 ] || fail "run: $output"
	echo "$output"
	[[ "$output" == *"mtu 1789 "* ]] || fail "the MTU was not kept"
	[[ "$output" == *"ether 00:11:22:33:44:55 "* ]] || fail "the MAC address was not kept"
	grep -q "ctr0[@:][^<]*<[^>]*\bUP\b" <<<"$output" || fail "the device is not up"
	[[ "$output" == *" 169.254.169.77/32 "* ]] || fail "the permanent global address was not added back"
	[[ "$output" == *" fd00:99::1/64 "* ]] || fail "the IPv6 global address was not added back"
	[[ "$output" != *" 10.99.0.1/"* ]] || fail "an address with a lifetime was moved"
	[[ "$output" != *" 127.0.0.33/"* ]] || fail "a host-scope address was moved"
	# The container's namespace is gone, and a virtual device with it (the
	# kernel frees a namespace in the background: give it a moment).
	retry 50 0.1 link_gone "$DEV-p" || fail "the veth peer outlived the device"
	! ip link show dev "$DEV" 2>/dev/null || fail "$DEV is back on the host"
}

# link_gone NAME: the host has no device NAME.
link_gone() {
	! ip link show dev "$1" >/dev/null 2>&1
}

@test "netdev: a name ending in %d is completed by the kernel" {
	host_dev
	net_devices "{\"$DEV\": {\"name\": \"ctr%d\"}}"
	run_sh 'ip -o link show dev ctr0 >/dev/null && echo moved'
	[ "$status" -eq 0 ] || fail "run: $output"
	[[ "$output" == moved ]]
}

@test "netdev: in a joined namespace the device stays after the container, and a taken name is an error" {
	host_dev
	NETNS="nbxns$RANDOM"
	ip netns add "$NETNS"
	update_config '(.linux.namespaces[] | select(.type == "network")).path = $p' "$BUNDLE" --arg p "/var/run/netns/$NETNS"
	net_devices "{\"$DEV\": {\"name\": \"eth7\"}}"
	run_sh 'true'
	[ "$status" -eq 0 ] || fail "run: $output"
	ip netns exec "$NETNS" ip link show dev eth7 >/dev/null || fail "the device left the joined namespace"
	# eth7 is taken now: the next device may not take its name.
	ip link add "$DEV" type veth peer name "$DEV-q"
	run_sh 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *"already has a device \"eth7\""* ]] || fail "unexpected error: $output"
	[[ "${#lines[@]}" -eq 1 ]] || fail "not a one-line error: $output"
	ip link show dev "$DEV" >/dev/null || fail "the refused device left the host"
	assert_nothing_left "$CID"
}

@test "netdev: a device the host does not have is a one-line error naming it, and nothing is left" {
	requires root
	net_devices '{"nbx-missing0": {}}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *'linux.netDevices["nbx-missing0"]: no such network device on the host'* ]] || fail "unexpected error: $output"
	[[ "${#lines[@]}" -eq 1 ]] || fail "not a one-line error: $output"
	assert_nothing_left "$CID"
}

@test "netdev: names the kernel would refuse are refused before anything is made" {
	net_devices '{"eth0": {"name": "a/b"}}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *'linux.netDevices["eth0"].name: "a/b" has a'* ]] || fail "unexpected error: $output"
	net_devices '{"eth0": {"name": "waytoolongname16"}}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *"is longer than 15 bytes"* ]] || fail "unexpected error: $output"
	assert_nothing_left "$CID"
}

@test "netdev: rootless, moving a host device is refused with the reason" {
	requires rootless nanobox
	net_devices '{"eth0": {}}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *"linux.netDevices: moving a host network device needs root"* ]] || fail "unexpected error: $output"
	assert_nothing_left "$CID"
}

@test "netdev: the host's loopback cannot be moved: a one-line error, and the host keeps it" {
	requires root ip
	net_devices '{"lo": {"name": "lo0"}}'
	run_sh 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *'linux.netDevices["lo"]: '*'kernel keeps this device in its namespace'* ]] || fail "unexpected error: $output"
	[[ "${#lines[@]}" -eq 1 ]] || fail "not a one-line error: $output"
	ip link show dev lo | grep -q 'UP' || fail "the host's loopback changed"
	assert_nothing_left "$CID"
}
