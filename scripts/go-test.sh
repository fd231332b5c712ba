#!/bin/bash
# go-test.sh [GO-TEST-ARGS...]: `go test` that prints what a plain `go test`
# prints (one line per package, and the output of the tests that failed),
# then "tests: N passed, N failed, N skipped" counting top-level tests. A
# package that fails without a failing test (it did not build, TestMain or
# a panic ended it) counts as one failed test. Exit status as go test's.
set -uo pipefail

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
json=$(mktemp)
trap 'rm -f "$json"' EXIT

"$GO" test -json "$@" >"$json"
rc=$?

jq -js '
	(map(select(.Action == "fail" and .Test != null) | "\(.Package) \(.Test)")) as $failed
	| .[]
	| select(.Action == "build-output"
		or (.Action == "output" and .Test == null and (.Output | test("^(=== |PASS\n|FAIL\n)") | not))
		or (.Action == "output" and .Test != null and ("\(.Package) \(.Test)") as $k | $failed | any(. == $k)))
	| .Output' "$json"

jq -rs '
	def top: .Test != null and (.Test | contains("/") | not);
	(map(select(top and .Action == "pass")) | length) as $pass
	| (map(select(top and .Action == "skip")) | length) as $skip
	| (map(select(top and .Action == "fail")) | length) as $fail
	| (map(select(.Test != null and .Action == "fail") | .Package) | unique) as $withtests
	| (map(select(.Test == null and .Action == "fail") | .Package) | unique
		| map(select(. as $p | $withtests | index([$p]) | not)) | length) as $broken
	| "tests: \($pass) passed, \($fail + $broken) failed, \($skip) skipped"' "$json"
exit $rc
