#!/bin/bash
# bench.sh: time `nanobox-runc run` of a busybox bundle running /bin/true
# against runc, in the same run, on the same config.json, each runtime as
# root with a fresh --root. Prints min and median wall time and mean CPU
# (user+sys) per run for each, and the ratio of the medians; then the
# sandbox (sandbox_bench, below) against bwrap and fork+exec; then the run
# comparison again with a memory and a pids limit in config.json.
#
# Environment: NANOBOX (default ./nanobox-runc), RUNC (default: runc on
# PATH), RUNS (default 50), WARMUP (default 5), BENCH_NO_HYPERFINE=1 for a
# plain loop instead of hyperfine, BENCH_STRICT=1 to exit 1
# unless nanobox-runc's median is below runc's (this issue's bar).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
NANOBOX=${NANOBOX:-$repo/nanobox-runc}
RUNC=${RUNC:-$(command -v runc || true)}
RUNS=${RUNS:-50}
WARMUP=${WARMUP:-5}

die() {
	echo "bench: $*" >&2
	exit 1
}
[[ $EUID -eq 0 ]] || die "run as root (both runtimes are timed rootful)"
[[ -x "$NANOBOX" ]] || die "$NANOBOX is not built (make build)"
[[ -n "$RUNC" && -x "$RUNC" ]] || die "runc not found (apt-get install runc)"

work=$(mktemp -d /tmp/nanobox-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
# One bundle, one config.json (runc's default spec), for both runtimes.
"$repo/tests/integration/mkbundle.sh" "$work/bundle" /bin/true
# BENCH_LIMITS=1 (the second pass, at the end): the same with a memory and
# a pids limit, so that what setting cgroup limits costs on `run` shows.
if [[ "${BENCH_LIMITS:-0}" == 1 ]]; then
	jq '.linux.resources = {"memory": {"limit": 268435456}, "pids": {"limit": 1024}}' \
		"$work/bundle/config.json" >"$work/config.json"
	mv "$work/config.json" "$work/bundle/config.json"
	echo "== config.json with linux.resources: memory limit 256 MiB, pids limit 1024"
else
	echo "== config.json without linux.resources"
fi
mkdir -p "$work/root-nanobox" "$work/root-runc"

# Sanity: both run the bundle.
"$NANOBOX" --root "$work/root-nanobox" run -b "$work/bundle" bench-check ||
	die "nanobox-runc cannot run the bundle"
"$RUNC" --root "$work/root-runc" run -b "$work/bundle" bench-check ||
	die "runc cannot run the bundle"

nbx_cmd="$NANOBOX --root $work/root-nanobox run -b $work/bundle bench"
runc_cmd="$RUNC --root $work/root-runc run -b $work/bundle bench"

# stats NAME WALL_MS_FILE CPU_MS: one result line.
declare -A MEDIAN
report() {
	local name=$1 min=$2 median=$3 cpu=$4
	MEDIAN[$name]=$median
	printf '%-14s %6d %10.2f %12.2f %18.2f\n' "$name" "$RUNS" "$min" "$median" "$cpu"
}

printf '%-14s %6s %10s %12s %18s\n' runtime runs "min(ms)" "median(ms)" "cpu user+sys(ms)"
if [[ "${BENCH_NO_HYPERFINE:-0}" != 1 ]] && command -v hyperfine >/dev/null; then
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
		--export-json "$work/result.json" -n nanobox-runc "$nbx_cmd" -n runc "$runc_cmd" >/dev/null
	while IFS=$'\t' read -r name min median cpu; do
		report "$name" "$min" "$median" "$cpu"
	done < <(jq -r '.results[] | [.command, .min * 1000, .median * 1000, (.user + .system) * 1000] | @tsv' \
		"$work/result.json")
else
	# No hyperfine: a plain loop; CPU from the shell's children times.
	# `times` must run in this shell (not a $(...) subshell) to see its
	# children; its second line is the children's user and sys time.
	cpu_ms() { awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$1"; }
	for name in nanobox-runc runc; do
		cmd=$nbx_cmd
		[[ $name == runc ]] && cmd=$runc_cmd
		for ((i = 0; i < WARMUP; i++)); do $cmd; done
		: >"$work/$name.ms"
		times >"$work/times"
		c0=$(cpu_ms "$work/times")
		for ((i = 0; i < RUNS; i++)); do
			t0=$(date +%s%N)
			$cmd
			t1=$(date +%s%N)
			echo $(((t1 - t0) / 1000)) >>"$work/$name.ms"
		done
		times >"$work/times"
		c1=$(cpu_ms "$work/times")
		sort -n "$work/$name.ms" -o "$work/$name.ms"
		min=$(awk 'NR == 1 {print $1 / 1000}' "$work/$name.ms")
		median=$(awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000}' "$work/$name.ms")
		report "$name" "$min" "$median" "$(awk -v a="$c0" -v b="$c1" -v n="$RUNS" 'BEGIN {print (b - a) / n}')"
	done
fi

ratio=$(awk -v a="${MEDIAN[nanobox-runc]}" -v b="${MEDIAN[runc]}" 'BEGIN {printf "%.3f", a / b}')
echo "median ratio nanobox-runc/runc: $ratio"
if awk -v r="$ratio" 'BEGIN {exit !(r < 1)}'; then
	echo "nanobox-runc's median is below runc's"
else
	echo "nanobox-runc's median is NOT below runc's"
	[[ "${BENCH_STRICT:-0}" != 1 ]] || exit 1
fi

# The sandbox, in the same run: `nanobox-runc sandbox -- /bin/true`, a
# libbox Run of /bin/true from Go (scripts/sandboxbench, timed inside the
# Go program), the same through a warm pool (libbox.NewPool: the sandbox
# made ahead, the run only starts it),
# `bwrap --unshare-all --ro-bind / / /bin/true` and plain
# fork+exec of /bin/true, rootful and, as the unprivileged test user when
# there is one, rootless. The target (issue 13's): the sandbox's median at
# or below bwrap's.
sandbox_bench() {
	local user=${1:-} as=() mode=rootful
	if [[ -n "$user" ]]; then
		as=(runuser -u "$user" --)
		mode="rootless, as $user"
	fi
	local root=$work/root-sandbox-$RANDOM
	mkdir -p "$root"
	chmod 0700 "$root"
	[[ -z "$user" ]] || chown "$user:" "$root"
	echo
	echo "== the sandbox, $mode: one program, no bundle"
	"${as[@]}" "$work/nanobox-runc" --root "$root" sandbox -- /bin/true ||
		die "nanobox-runc sandbox cannot run /bin/true"
	local cmds=(-n "nanobox-runc sandbox" "$work/nanobox-runc --root $root sandbox -- /bin/true")
	if command -v bwrap >/dev/null; then
		cmds+=(-n bwrap "bwrap --unshare-all --ro-bind / / /bin/true")
	fi
	cmds+=(-n "fork+exec" "/bin/true")
	printf '%-22s %6s %10s %12s %18s\n' what runs "min(ms)" "median(ms)" "cpu user+sys(ms)"
	declare -gA SB
	local json=$work/sandbox-${user:-root}.json
	: >"$json"
	[[ -z "$user" ]] || chown "$user:" "$json"
	"${as[@]}" hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
		--export-json "$json" "${cmds[@]}" >/dev/null
	while IFS=$'\t' read -r name min median cpu; do
		SB[$name]=$median
		printf '%-22s %6d %10.2f %12.2f %18.2f\n' "$name" "$RUNS" "$min" "$median" "$cpu"
	done < <(jq -r '.results[] | [.command, .min * 1000, .median * 1000, (.user + .system) * 1000] | @tsv' "$json")
	while IFS=$'\t' read -r name runs min median cpu; do
		SB[$name]=$median
		printf '%-22s %6d %10.2f %12.2f %18.2f\n' "$name" "$runs" "$min" "$median" "$cpu"
	done < <("${as[@]}" "$work/sandboxbench" -runs "$RUNS" -warmup "$WARMUP" -root "$root")
	# The warm pool (issue 10): a Run that only starts a sandbox made ahead.
	while IFS=$'\t' read -r name runs min median cpu; do
		SB[$name]=$median
		printf '%-22s %6d %10.2f %12.2f %18.2f\n' "$name" "$runs" "$min" "$median" "$cpu"
	done < <("${as[@]}" "$work/sandboxbench" -runs "$RUNS" -warmup "$WARMUP" -root "$root" -pool 2 -name "libbox pooled Run")
	awk -v x="${SB[libbox pooled Run]}" -v y="${SB[libbox Run]}" \
		'BEGIN {printf "median ratio libbox pooled Run/libbox Run: %.2f\n", x / y}'
	if awk -v a="${SB[libbox pooled Run]}" 'BEGIN {exit !(a <= 2)}'; then
		echo "the pooled Run's median is at or below 2 ms (issue 10's target)"
	else
		echo "the pooled Run's median is NOT at or below 2 ms (issue 10's target)"
	fi
	local base
	for base in bwrap fork+exec; do
		[[ -n "${SB[$base]:-}" ]] || continue
		for name in "nanobox-runc sandbox" "libbox Run" "libbox pooled Run"; do
			awk -v n="$name" -v b="$base" -v x="${SB[$name]}" -v y="${SB[$base]}" \
				'BEGIN {printf "median ratio %s/%s: %.2f\n", n, b, x / y}'
		done
	done
	if [[ -n "${SB[bwrap]:-}" ]]; then
		if awk -v a="${SB[nanobox-runc sandbox]}" -v b="${SB[bwrap]}" 'BEGIN {exit !(a <= b)}'; then
			echo "the sandbox's median is at or below bwrap's"
		else
			echo "the sandbox's median is NOT at or below bwrap's (issue 13)"
		fi
	fi
	rm -rf "$root"
}

if [[ "${BENCH_LIMITS:-0}" != 1 && "${BENCH_SANDBOX:-1}" == 1 ]] && command -v hyperfine >/dev/null; then
	cp "$NANOBOX" "$work/nanobox-runc"
	GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
	(cd "$repo" && "$GO" build -o "$work/sandboxbench" ./scripts/sandboxbench) || die "build scripts/sandboxbench"
	chmod 0755 "$work/nanobox-runc" "$work/sandboxbench"
	sandbox_bench
	# The network allowlist: its start cost and its throughput.
	(cd "$repo" && "$GO" build -o "$work/netbench" ./scripts/netbench) || die "build scripts/netbench"
	chmod 0755 "$work/netbench"
	"$repo/scripts/bench-network.sh" "$work/nanobox-runc" "$work"
	if id nanobox-test >/dev/null 2>&1; then
		sandbox_bench nanobox-test
		"$repo/scripts/bench-network.sh" "$work/nanobox-runc" "$work" nanobox-test
	else
		echo "(no user nanobox-test: the rootless sandbox pass is skipped; tests/integration/setup-rootless-user.sh creates it)"
	fi
fi

# Second pass: the same comparison with memory+pids limits (BENCH_LIMITS=0
# in the environment skips it).
if [[ -z "${BENCH_LIMITS:-}" ]]; then
	echo
	BENCH_LIMITS=1 "$BASH" "$0"
fi
