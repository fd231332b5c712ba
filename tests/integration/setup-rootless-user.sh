#!/bin/bash
# Create the unprivileged user the rootless integration runs use, with
# /etc/subuid and /etc/subgid ranges for newuidmap/newgidmap. Idempotent;
# run as root (from .ci/run, `make integration-rootless`, or helpers.bash).
set -euo pipefail

user="${TEST_USER:-nanobox-test}"
uid="${TEST_UID:-2000}"
range_start="${TEST_SUBID_START:-100000}"
range_size="${TEST_SUBID_SIZE:-65536}"

if [[ $EUID -ne 0 ]]; then
	echo "setup-rootless-user.sh: must run as root" >&2
	exit 1
fi

if ! id "$user" >/dev/null 2>&1; then
	if getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; then
		# The preferred uid is taken: let useradd pick one.
		useradd --user-group --no-create-home --home-dir /nonexistent --shell /bin/sh "$user"
	else
		useradd --uid "$uid" --user-group --no-create-home --home-dir /nonexistent --shell /bin/sh "$user"
	fi
fi

for f in /etc/subuid /etc/subgid; do
	touch "$f"
	if ! grep -q "^$user:" "$f"; then
		echo "$user:$range_start:$range_size" >>"$f"
	fi
done

echo "rootless test user: $(id "$user"); subuid: $(grep "^$user:" /etc/subuid)"
