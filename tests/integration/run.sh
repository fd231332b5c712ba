#!/bin/bash
# run.sh [--mode root|rootless|both] [BATS-FILE...]: run the integration
# suites, as root and/or rootless (ROOTLESS=1: bats as root, the runtime as
# the unprivileged test user), print bats' TAP and a closing
# "integration: N passed, N failed, N skipped" line; exit 1 on any failure.
#
# RUNTIME selects the runtime under test (default: ./nanobox-runc);
# RUNTIME=$(which runc) checks the suites against the reference.
# NANOBOX_BATS_TIMING=1 adds each test's time to its TAP line.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mode=both
if [[ "${1:-}" == --mode ]]; then
	mode=$2
	shift 2
fi
[[ $# -gt 0 ]] || set -- "$here"
case "$mode" in
root) modes=(0) ;;
rootless) modes=(1) ;;
both) modes=(0 1) ;;
*)
	echo "run.sh: --mode root|rootless|both" >&2
	exit 2
	;;
esac

if [[ $EUID -ne 0 ]]; then
	echo "run.sh: the integration suites run as root (rootless mode drops to the test user itself)" >&2
	exit 2
fi
# A hung test is killed rather than stalling CI.
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-180}

total_pass=0 total_fail=0 total_skip=0 rc=0
for r in "${modes[@]}"; do
	name=rootful
	if [[ $r == 1 ]]; then
		name=rootless
		"$here/setup-rootless-user.sh" || exit 1
	fi
	echo "=== integration ($name), runtime ${RUNTIME:-./nanobox-runc}"
	tap=$(mktemp)
	ROOTLESS=$r bats --tap ${NANOBOX_BATS_TIMING:+--timing} "$@" | tee "$tap"
	[[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
	pass=$(grep -E '^ok ' "$tap" | grep -vc '# skip')
	skip=$(grep -E '^ok .*# skip' -c "$tap")
	fail=$(grep -Ec '^not ok ' "$tap")
	rm -f "$tap"
	echo "$name: $pass passed, $fail failed, $skip skipped"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done
[[ $total_fail -eq 0 ]] || rc=1
echo "integration: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $rc
