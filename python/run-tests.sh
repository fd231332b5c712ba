#!/bin/bash
# run-tests.sh [--mode root|rootless|both] [PYTEST-ARGS...]: the Python
# package's tests, as CI runs them. Installs the package from the
# repository into a fresh venv of Debian's python3 (/usr/bin/python3, with
# its pytest from python3-pytest), with no download at all:
#
#     pip install --no-index --no-build-isolation ./python
#
# then runs pytest against the installed package, as root and/or as the
# unprivileged test user (tests/integration/setup-rootless-user.sh), with
# NANOBOX_RUNC the repository's build (make build). Prints one closing
# "tests: N passed, N failed, N skipped" line; exit 1 on any failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mode=both
if [[ "${1:-}" == --mode ]]; then
	mode=$2
	shift 2
fi
case "$mode" in
root) modes=(root) ;;
rootless) modes=(rootless) ;;
both) modes=(root rootless) ;;
*)
	echo "run-tests.sh: --mode root|rootless|both" >&2
	exit 2
	;;
esac
if [[ $EUID -ne 0 ]]; then
	echo "run-tests.sh: run as root (rootless mode drops to the test user itself)" >&2
	exit 2
fi

PYTHON=${PYTHON:-/usr/bin/python3}
export NANOBOX_RUNC=${NANOBOX_RUNC:-$repo/nanobox-runc}
[[ -x "$NANOBOX_RUNC" ]] || {
	echo "run-tests.sh: $NANOBOX_RUNC is not built (make build), or set NANOBOX_RUNC" >&2
	exit 2
}
export PYTHONDONTWRITEBYTECODE=1

work=$(mktemp -d /tmp/nanobox-pytest.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
"$PYTHON" -m venv --system-site-packages "$work/venv" || exit 1
# The build directories setuptools makes in the source tree go with the run.
"$work/venv/bin/pip" install -q --no-index --no-build-isolation "$here" || exit 1
rm -rf "$here/build" "$here/src/nanobox.egg-info"

total_pass=0 total_fail=0 total_skip=0 rc=0
for m in "${modes[@]}"; do
	xml="$work/$m.xml"
	echo "=== python tests ($m), $("$work/venv/bin/python" --version), runtime $NANOBOX_RUNC"
	if [[ $m == root ]]; then
		(cd "$work" && NANOBOX_TEST_INSTALLED=1 "$work/venv/bin/python" -m pytest -p no:cacheprovider \
			--basetemp="$work/tmp-root" --junitxml="$xml" "$@" "$here/tests") || rc=1
	else
		"$repo/tests/integration/setup-rootless-user.sh" >/dev/null || exit 1
		user=${TEST_USER:-nanobox-test}
		home="$work/home-$user"
		mkdir -p "$home"
		chown "$user:" "$home"
		chmod 0700 "$home"
		(cd "$work" && setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups \
			env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TMPDIR="$home" XDG_RUNTIME_DIR="$home" \
			USER="$user" LOGNAME="$user" NANOBOX_RUNC="$NANOBOX_RUNC" NANOBOX_TEST_INSTALLED=1 \
			PYTHONDONTWRITEBYTECODE=1 \
			"$work/venv/bin/python" -m pytest -p no:cacheprovider --basetemp="$home/tmp" \
			--junitxml="$home/junit.xml" "$@" "$here/tests") || rc=1
		cp "$home/junit.xml" "$xml" 2>/dev/null
	fi
	read -r pass fail skip < <("$PYTHON" - "$xml" <<-'PY'
		import sys, xml.etree.ElementTree as ET
		try:
		    root = ET.parse(sys.argv[1]).getroot()
		except (OSError, ET.ParseError):
		    print(0, 1, 0)
		    raise SystemExit
		suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
		t = sum(int(s.get("tests", 0)) for s in suites)
		f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
		k = sum(int(s.get("skipped", 0)) for s in suites)
		print(t - f - k, f, k)
	PY
	)
	echo "python ($m): $pass passed, $fail failed, $skip skipped"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done
[[ $total_fail -eq 0 ]] || rc=1
echo "tests: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $rc
