#!/bin/bash
# bench.sh: time `nanobox-runc run` of a busybox bundle running /bin/true
# against runc, in the same run, on the same config.json, each runtime as
# root with a fresh --root. Prints min and median wall time and mean CPU
# (user+sys) per run for each, and the ratio of the medians; then the
# sandbox (sandbox_bench, below) against bwrap and fork+exec; then the run
# comparison again with a memory and a pids limit in config.json.
#
# crun (issue 13's reference) is timed beside them when it is installed;
# then (first pass) the lifecycle targets against crun: `state`, `kill`
# and `delete`, 100 sequential runs, 20 concurrent creates, peak RSS.
#
# Environment: NANOBOX (default ./nanobox-runc), RUNC (default: runc on
# PATH), CRUN (default: crun on PATH), RUNS (default 50), WARMUP (default
# 5), BENCH_NO_HYPERFINE=1 for a
# plain loop instead of hyperfine, BENCH_STRICT=1 to exit 1
# unless nanobox-runc's median is below runc's (this issue's bar).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
NANOBOX=${NANOBOX:-$repo/nanobox-runc}
RUNC=${RUNC:-$(command -v runc || true)}
CRUN=${CRUN:-$(command -v crun || true)}
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

# crun refuses a hybrid host whose cgroup2 mount holds controllers (this
# layout: v1 controllers, hugetlb on /sys/fs/cgroup/unified). It is then
# timed, as the others are, inside one private mount namespace without
# that mount: hyperfine runs there, so every runtime sees the same layout.
in_ns=()
if [[ "$(stat -f -c %T /sys/fs/cgroup)" == tmpfs && -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]]; then
	in_ns=(unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup/unified && exec "$@"' sh)
fi
crun_cmd=
if [[ -n "$CRUN" && -x "$CRUN" ]]; then
	mkdir -p "$work/root-crun"
	if "${in_ns[@]}" "$CRUN" --root "$work/root-crun" run -b "$work/bundle" bench-check; then
		crun_cmd="$CRUN --root $work/root-crun run -b $work/bundle bench"
	else
		echo "(crun cannot run the bundle here: it is left out)"
	fi
fi

# stats NAME WALL_MS_FILE CPU_MS: one result line.
declare -A MEDIAN
report() {
	local name=$1 min=$2 median=$3 cpu=$4
	MEDIAN[$name]=$median
	printf '%-14s %6d %10.2f %12.2f %18.2f\n' "$name" "$RUNS" "$min" "$median" "$cpu"
}

printf '%-14s %6s %10s %12s %18s\n' runtime runs "min(ms)" "median(ms)" "cpu user+sys(ms)"
if [[ "${BENCH_NO_HYPERFINE:-0}" != 1 ]] && command -v hyperfine >/dev/null; then
	cmds=(-n nanobox-runc "$nbx_cmd" -n runc "$runc_cmd")
	[[ -z "$crun_cmd" ]] || cmds+=(-n crun "$crun_cmd")
	"${in_ns[@]}" hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none \
		--export-json "$work/result.json" "${cmds[@]}" >/dev/null
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
		# (crun needs the private mount namespace: hyperfine only.)
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
if [[ -n "${MEDIAN[crun]:-}" ]]; then
	awk -v a="${MEDIAN[nanobox-runc]}" -v b="${MEDIAN[crun]}" 'BEGIN {
		printf "median ratio nanobox-runc/crun: %.3f\n", a / b
		print (a <= b ? "nanobox-runc'"'"'s median is at or below crun'"'"'s" : "nanobox-runc'"'"'s median is NOT at or below crun'"'"'s (issue 13)")
	}'
	awk -v a="$(jq '.results[] | select(.command == "nanobox-runc") | (.user + .system)' "$work/result.json" 2>/dev/null)" \
		-v b="$(jq '.results[] | select(.command == "crun") | (.user + .system)' "$work/result.json" 2>/dev/null)" \
		'BEGIN {if (a != "" && b != "") printf "cpu ratio nanobox-runc/crun: %.3f\n", a / b}'
fi

# lifecycle_bench: issue 13's other targets against crun (rootful, first
# pass): state, kill and delete of a created container; 100 sequential
# runs (total); 20 concurrent creates on this machine's cores (rate, no
# failure, nothing left); the peak RSS of the runtime process of a run
# (wait4's ru_maxrss: the runtime and, after it, init's largest).
lifecycle_bench() {
	local -a names=(nanobox-runc) bins=("$NANOBOX")
	if [[ -n "$crun_cmd" ]]; then
		names+=(crun)
		bins+=("$CRUN")
	fi
	echo
	echo "== state, kill, delete of a created container (rootful)"
	printf '%-14s %-8s %6s %12s %18s\n' runtime command runs "median(ms)" "cpu user+sys(ms)"
	local i n b r hf=() json=$work/lifecycle.json
	for i in "${!names[@]}"; do
		n=${names[$i]} b=${bins[$i]} r=$work/root-life-$n
		mkdir -p "$r"
		"${in_ns[@]}" "$b" --root "$r" create -b "$work/bundle" life-state >/dev/null
		# (--prepare is given for every command or for none.)
		hf+=(-n "$n state" --prepare true "$b --root $r state life-state")
		# (hyperfine 1.15 has no --conclude: each prepare removes the
		# previous run's killed container first.)
		hf+=(-n "$n kill" --prepare "sh -c '$b --root $r delete --force life-kill 2>/dev/null; $b --root $r create -b $work/bundle life-kill'"
			"$b --root $r kill life-kill KILL")
		hf+=(-n "$n delete" --prepare "$b --root $r create -b $work/bundle life-del" "$b --root $r delete --force life-del")
	done
	"${in_ns[@]}" hyperfine -N --warmup 3 --runs "$RUNS" --style none --export-json "$json" "${hf[@]}" >/dev/null ||
		echo "(hyperfine failed on the lifecycle commands)"
	declare -A LM=()
	while IFS=$'\t' read -r name median cpu; do
		LM[$name]=$median
		printf '%-14s %-8s %6d %12.2f %18.2f\n' "${name% *}" "${name##* }" "$RUNS" "$median" "$cpu"
	done < <(jq -r '.results[] | [.command, .median * 1000, (.user + .system) * 1000] | @tsv' "$json" 2>/dev/null)
	local c
	for c in state kill delete; do
		[[ -n "${LM[crun $c]:-}" && -n "${LM[nanobox-runc $c]:-}" ]] || continue
		awk -v c="$c" -v a="${LM[nanobox-runc $c]}" -v b="${LM[crun $c]}" \
			'BEGIN {printf "median ratio nanobox-runc/crun %s: %.2f (%s)\n", c, a / b, a <= b ? "at or below" : "NOT at or below"}'
	done
	for i in "${!names[@]}"; do
		n=${names[$i]} b=${bins[$i]} r=$work/root-life-$n
		"${in_ns[@]}" "$b" --root "$r" delete --force life-state >/dev/null 2>&1 || true
		"${in_ns[@]}" "$b" --root "$r" delete --force life-kill >/dev/null 2>&1 || true
	done

	echo
	echo "== 100 sequential runs, 20 concurrent creates, peak RSS (rootful)"
	local t0 t1 fails left rss
	declare -A SEQ=()
	for i in "${!names[@]}"; do
		n=${names[$i]} b=${bins[$i]} r=$work/root-seq-$n
		mkdir -p "$r"
		t0=$(date +%s%N)
		"${in_ns[@]}" bash -c 'for ((k = 0; k < 100; k++)); do "$1" --root "$2" run -b "$3" seq >/dev/null || exit 1; done' \
			_ "$b" "$r" "$work/bundle" || echo "($n: a sequential run failed)"
		t1=$(date +%s%N)
		SEQ[$n]=$(((t1 - t0) / 1000000))
		printf '%-14s 100 sequential runs: %d ms in all (%.2f ms each)\n' "$n" "${SEQ[$n]}" "$(awk -v t="${SEQ[$n]}" 'BEGIN {print t / 100}')"
	done
	if [[ -n "${SEQ[crun]:-}" ]]; then
		awk -v a="${SEQ[nanobox-runc]}" -v b="${SEQ[crun]}" \
			'BEGIN {printf "total ratio nanobox-runc/crun, 100 sequential runs: %.2f (%s)\n", a / b, a <= b ? "at or below" : "NOT at or below"}'
	fi
	for i in "${!names[@]}"; do
		n=${names[$i]} b=${bins[$i]} r=$work/root-conc-$n
		mkdir -p "$r"
		t0=$(date +%s%N)
		fails=$("${in_ns[@]}" bash -c 'for ((k = 0; k < 20; k++)); do "$1" --root "$2" create -b "$3" "c$k" >/dev/null 2>&1 || echo x & done; wait' \
			_ "$b" "$r" "$work/bundle" | wc -l)
		t1=$(date +%s%N)
		for ((k = 0; k < 20; k++)); do "${in_ns[@]}" "$b" --root "$r" delete --force "c$k" >/dev/null 2>&1 || true; done
		left=$(find "$r" -mindepth 1 -maxdepth 1 -type d | wc -l)
		awk -v n="$n" -v t=$(((t1 - t0) / 1000)) -v f="$fails" -v l="$left" \
			'BEGIN {printf "%-14s 20 concurrent creates: %.1f ms, %.0f containers/s, %d failed, %d state dirs left after delete\n", n, t / 1000, 20 / (t / 1e6), f, l}'
	done
	for i in "${!names[@]}"; do
		n=${names[$i]} b=${bins[$i]} r=$work/root-rss-$n
		mkdir -p "$r"
		rss=$(for ((k = 0; k < 5; k++)); do
			"${in_ns[@]}" /usr/bin/time -f %M "$b" --root "$r" run -b "$work/bundle" rss 2>&1 >/dev/null | tail -1
		done | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
		printf '%-14s peak RSS of run (median of 5): %.1f MiB\n' "$n" "$(awk -v k="$rss" 'BEGIN {print k / 1024}')"
	done
}
if [[ "${BENCH_LIMITS:-0}" != 1 ]] && command -v hyperfine >/dev/null && [[ -x /usr/bin/time ]]; then
	lifecycle_bench
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
	# Built as make builds the runtime (GOEXPERIMENT=jsonv2, see the
	# Makefile): a program embedding libbox built the default way pays
	# the old encoding/json's type set-up in each Run, in it and in init.
	(cd "$repo" && GOEXPERIMENT=${GOEXPERIMENT-jsonv2} "$GO" build -o "$work/sandboxbench" ./scripts/sandboxbench) ||
		die "build scripts/sandboxbench"
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
