#!/bin/bash
# run-tests.sh [--mode root|rootless|both] [NODE-TEST-ARGS...]: the
# TypeScript package's tests, as CI runs them, with node's own test runner
# (node --test), as root and/or as the unprivileged test user
# (tests/integration/setup-rootless-user.sh), with NANOBOX_RUNC the
# repository's build (make build). First the package is installed from the
# repository with npm, with no download (npm install --offline ./js), and
# loaded from there; and tsc checks the shipped types. Prints one closing "tests: N passed, N failed, N
# skipped" line; exit 1 on any failure.
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
export NANOBOX_RUNC=${NANOBOX_RUNC:-$repo/nanobox-runc}
[[ -x "$NANOBOX_RUNC" ]] || {
	echo "run-tests.sh: $NANOBOX_RUNC is not built (make build), or set NANOBOX_RUNC" >&2
	exit 2
}

work=$(mktemp -d /tmp/nanobox-nodetest.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

total_pass=0 total_fail=0 total_skip=0 rc=0
count() { # count NAME TAP-FILE
	local pass fail skip
	pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$2" | tail -1)
	fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$2" | tail -1)
	skip=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$2" | tail -1)
	# No summary: the runner itself failed.
	[[ -n $pass ]] || { pass=0 fail=1 skip=0; }
	echo "js ($1): $pass passed, $fail failed, $skip skipped"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + ${fail:-0}))
	total_skip=$((total_skip + ${skip:-0}))
}

# The install, as a user of the package does it: from the repository, by
# npm, offline (the package has no dependencies), then imported by name.
echo "=== js install: npm install --offline ./js, $(node --version)"
if ! command -v npm >/dev/null; then
	echo "js install: npm is not installed (Debian: apt-get install npm)"
	echo "js (install): 0 passed, 1 failed, 0 skipped"
	total_fail=1
else
	mkdir "$work/app"
	if (cd "$work/app" && echo '{"name":"app","private":true,"type":"module"}' >package.json &&
		npm install --offline --no-audit --no-fund --loglevel=error "$here" >/dev/null &&
		node -e 'const m = await import("nanobox"); if (typeof m.Sandbox.builder !== "function") throw new Error("no Sandbox.builder"); console.log("js install: imported nanobox, " + Object.keys(m).length + " exports")' --input-type=module &&
		test -f node_modules/nanobox/src/index.d.ts); then
		echo "js (install): 1 passed, 0 failed, 0 skipped"
		total_pass=$((total_pass + 1))
	else
		echo "js (install): 0 passed, 1 failed, 0 skipped"
		total_fail=$((total_fail + 1))
	fi
fi

# The shipped types: tsc (the devDependencies' typescript and @types/node,
# from the npm registry: the one step here that downloads; skipped, saying
# so, where the registry cannot be reached) checks src/index.d.ts and
# test/types.ts, the package's documented uses and some refused ones.
echo "=== js types: tsc -p js"
tsc_dir="$work/tsc"
mkdir "$tsc_dir"
ts_pkgs=$(node -e 'const d = require(process.argv[1]).devDependencies; console.log(Object.entries(d).map(([k, v]) => k + "@" + v).join(" "))' "$here/package.json")
# shellcheck disable=SC2086
if ! (cd "$tsc_dir" && echo '{"private":true}' >package.json && timeout 300 npm install --no-audit --no-fund --loglevel=error $ts_pkgs >"$tsc_dir/npm.log" 2>&1); then
	echo "js types: skipped: npm could not install $ts_pkgs from the registry:"
	sed 's/^/  /' "$tsc_dir/npm.log" | tail -5
	echo "js (types): 0 passed, 0 failed, 1 skipped"
	total_skip=$((total_skip + 1))
elif "$tsc_dir/node_modules/.bin/tsc" -p "$here/tsconfig.json" --typeRoots "$tsc_dir/node_modules/@types"; then
	echo "js (types): 1 passed, 0 failed, 0 skipped"
	total_pass=$((total_pass + 1))
else
	echo "js (types): 0 passed, 1 failed, 0 skipped"
	total_fail=$((total_fail + 1))
fi

for m in "${modes[@]}"; do
	tap="$work/$m.tap"
	echo "=== js tests ($m), node $(node --version), runtime $NANOBOX_RUNC"
	if [[ $m == root ]]; then
		(cd "$here" && node --test --test-reporter=tap "$@" test/) >"$tap" 2>&1 || rc=1
	else
		"$repo/tests/integration/setup-rootless-user.sh" >/dev/null || exit 1
		user=${TEST_USER:-nanobox-test}
		home="$work/home-$user"
		mkdir -p "$home"
		chown "$user:" "$home"
		chmod 0700 "$home"
		(cd "$here" && setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups \
			env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TMPDIR="$home" XDG_RUNTIME_DIR="$home" \
			USER="$user" LOGNAME="$user" NANOBOX_RUNC="$NANOBOX_RUNC" \
			node --test --test-reporter=tap "$@" test/) >"$tap" 2>&1 || rc=1
	fi
	# The failures in full, the rest as one line each.
	grep -E '^(not )?ok |^# (tests|pass|fail|skipped)' "$tap" | sed 's/^/  /'
	if grep -q '^not ok' "$tap"; then
		cat "$tap"
	fi
	count "$m" "$tap"
done
[[ $total_fail -eq 0 ]] || rc=1
echo "tests: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $rc
