#!/bin/bash
# bench-network.sh RUNTIME WORKDIR [USER]: the network allowlist's two speed
# targets (docs/network.md), printed with the numbers measured:
#   - a sandbox with an allowlist starts within 5 ms of one with network
#     none (hyperfine medians of `sandbox -- /bin/true`);
#   - a download through the allowlist (the explicit proxy, with an
#     absolute URL and with CONNECT, and the transparent relay) runs at 80%
#     or more of a direct one (the sandbox with the host's network), from
#     the same local server, median of BENCH_NET_RUNS (5) downloads of
#     BENCH_NET_BYTES (512 MiB) with curl, the paths taking turns. Every
#     path through the allowlist is relayed in user space (two TCP
#     connections, spliced).
#   - the same downloads with the server, the runtime (and so its relay)
#     and curl all on one CPU: this ratio is the relay's cost in CPU time
#     per byte, which does not depend on how many cores are idle (with
#     two cores, a direct download keeps both busy with two parties, and a
#     relayed one has three). Printed for the record; not a target.
# BENCH_STRICT=1 exits 1 when a target is missed.
set -uo pipefail
runtime=$1 work=$2 user=${3:-}
as=()
[[ -z "$user" ]] || as=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups env HOME=/tmp)
mode=rootful
[[ -z "$user" ]] || mode="rootless ($user)"
runs=${BENCH_NET_RUNS:-5} bytes=${BENCH_NET_BYTES:-536870912}
root=$work/root-net-$RANDOM
mkdir -p "$root"
[[ -z "$user" ]] || chown "$user" "$root"
rc=0

echo "== the network allowlist, $mode"
json=$root/start.json
"${as[@]}" hyperfine -N --warmup 5 --runs "${RUNS:-30}" --style none --export-json "$json" \
	-n "network none" "$runtime --root $root sandbox --no-network -- /bin/true" \
	-n "allowlist" "$runtime --root $root sandbox --allow-net bench.test -- /bin/true" >/dev/null ||
	{ echo "bench-network: hyperfine failed"; exit 1; }
none=$(jq -r '.results[] | select(.command == "network none") | .median * 1000' "$json")
allow=$(jq -r '.results[] | select(.command == "allowlist") | .median * 1000' "$json")
printf 'start: network none %.2f ms, allowlist %.2f ms (median), difference %.2f ms (target: at most 5 ms)\n' "$none" "$allow" "$(awk -v a="$allow" -v b="$none" 'BEGIN {print a - b}')"
awk -v a="$allow" -v b="$none" 'BEGIN {exit !(a - b <= 5)}' || { echo "start: target MISSED"; rc=1; }

coproc SERVER { exec "$work/netbench"; }
server_pid=$SERVER_PID
read -r port <&"${SERVER[0]}"
url_path="/big?bytes=$bytes"
# dl SANDBOX-FLAGS... -- CURL-ARGS: one download's speed, bytes/s.
dl() {
	local flags=()
	while [[ $1 != -- ]]; do flags+=("$1"); shift; done
	shift
	"${as[@]}" "${pre[@]}" "$runtime" --root "$root" sandbox "${flags[@]}" -- /usr/bin/curl -sS -o /dev/null -w '%{speed_download}' "$@"
}
net=(--allow-net "bench.test:$port" --add-host bench.test:127.0.0.1 --allow-private-targets)
# paths: the four downloads (each run under ${pre[@]}), as "NAME SPEED"
# lines with the median of $runs, direct first. The rounds interleave the
# paths, so that a change in the machine's load falls on all of them.
paths() {
	local i d=() p=() c=() t=()
	for ((i = 0; i < runs; i++)); do
		d+=("$(dl --network host -- "http://127.0.0.1:$port$url_path")")
		p+=("$(dl "${net[@]}" -- "http://bench.test:$port$url_path")")
		c+=("$(dl "${net[@]}" -- --proxytunnel "http://bench.test:$port$url_path")")
		t+=("$(dl "${net[@]}" -- --noproxy '*' "http://bench.test:$port$url_path")")
	done
	echo "direct $(median "${d[@]}")"
	echo "proxy $(median "${p[@]}")"
	echo "proxy-CONNECT $(median "${c[@]}")"
	echo "transparent $(median "${t[@]}")"
}
median() {
	printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
# ratios WHAT TARGET: each path against direct, from paths' lines on stdin.
ratios() {
	local what=$1 target=$2 name speed direct=
	while read -r name speed; do
		if [[ -z "$direct" ]]; then
			direct=$speed
			continue
		fi
		pct=$(awk -v a="$speed" -v b="$direct" 'BEGIN {printf "%.0f", 100 * a / b}')
		printf '%s: direct %.0f MB/s, %s %.0f MB/s: %s%% (%s)\n' "$what" \
			"$(awk -v b="$direct" 'BEGIN {print b / 1e6}')" "$name" "$(awk -v a="$speed" 'BEGIN {print a / 1e6}')" "$pct" \
			"$([[ $target == 1 ]] && echo "target: at least 80%, relay: user space" || echo "one CPU: the relay's CPU cost, not a target")"
		if [[ $target == 1 && $pct -lt 80 ]]; then
			echo "throughput ($name): target MISSED"
			touch "$root/missed"
		fi
	done
}
pre=()
paths | ratios throughput 1
[[ ! -e "$root/missed" ]] || rc=1
cpu=$(($(nproc) - 1))
if taskset -pc "$cpu" "$server_pid" >/dev/null 2>&1; then
	pre=(taskset -c "$cpu")
	paths | ratios "throughput on CPU $cpu alone" 0
fi
exec {SERVER[1]}>&-
wait "$server_pid" 2>/dev/null
rm -rf "$root"
[[ "${BENCH_STRICT:-0}" == 1 ]] || rc=0
exit $rc
