#!/bin/bash
# profile-run.sh: where the time of `nanobox-runc run` of a /bin/true bundle
# goes. The numbers that speed changes are justified with (before/after in
# one run: PROFILE_BIN=old-binary scripts/profile-run.sh, then the new one,
# or PROFILE_BIN="old new" to interleave the two in every section).
#
# Sections, each skipped with a note when its tool is missing:
#   1. the binary: size, dynamic libraries
#   2. package initialisation of one process (GODEBUG=inittrace=1), paid
#      by the runtime process and again by the re-executed init
#   3. CPU, page faults and context switches per command (perf stat, the
#      median of PROFILE_RUNS runs, the commands interleaved), with
#      /bin/true and crun (when it can run here) as references
#   4. user-space instructions of the runtime process (cachegrind): of a
#      process start (--version), of `state`, and of `run` (the runtime
#      process only: valgrind cannot follow init into its namespaces);
#      repeatable on a loaded machine, unlike time
#   5. the syscalls of one run (strace -f): per process (runtime, nsenter
#      stage, init, the program), the process starts, fsyncs, waits and
#      the cgroup and mount work, with a timeline (times under strace are
#      inflated; the counts and the order are what matter)
#   6. a CPU profile over PROFILE_RUNS runs (perf record): the share of
#      each process, and the functions of the runtime and of init,
#      inclusive (init's frames named from the binary's symbol table)
#   7. why the processes sleep: voluntary context switches by cause
#      (sched_switch), the handoffs between threads that cost most under
#      load
#   8. what a process start costs before main(): a static C program (glibc,
#      and musl where musl-gcc is installed), Go without and with cgo, and
#      the binary's --version, side by side
#   9. the critical path of a run: when each phase of each process (the
#      runtime, the nsenter stage, init, the program) begins, from the
#      runtime's execve, on one clock (uprobes on function entries and the
#      scheduler's exec, fork and exit events; a probe costs a few
#      microseconds, nothing is added to the binary), the median over
#      PROFILE_RUNS runs, with the step from the phase before
#
# Environment: PROFILE_BIN (default ./nanobox-runc), PROFILE_RUNS (30),
# PROFILE_SECTIONS (default "1 2 3 4 5 6 7 8 9"), PROFILE_TIMELINE (what
# section 9 times: "run" of the bundle, the default, or "sandbox" --
# /bin/true), PROFILE_PROBES (more phases for section 9, see there). Root only: it creates
# containers, and perf and strace need it. Everything it makes lives in
# one temporary directory, removed on exit.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
read -r -a bins <<<"${PROFILE_BIN:-$repo/nanobox-runc}"
RUNS=${PROFILE_RUNS:-30}
SECTIONS=" ${PROFILE_SECTIONS:-1 2 3 4 5 6 7 8 9} "
TIMELINE=${PROFILE_TIMELINE:-run}

die() {
	echo "profile: $*" >&2
	exit 1
}
[[ $EUID -eq 0 ]] || die "run as root"
[[ $TIMELINE == run || $TIMELINE == sandbox ]] || die "PROFILE_TIMELINE=$TIMELINE: want run or sandbox"
for b in "${bins[@]}"; do
	[[ -x "$b" ]] || die "$b is not built (make build)"
done
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
have() { command -v "$1" >/dev/null; }

work=$(mktemp -d /tmp/nanobox-profile.XXXXXX)
probes=
cleanup() {
	local b r
	[[ -z "$probes" ]] || perf probe -q -d "$probes:*" >/dev/null 2>&1 || true
	for r in "$work"/root-*; do
		[[ -d "$r" ]] || continue
		for b in "${bins[@]}"; do
			for id in prof prof-created "prof-created-${r##*/root-}"; do
				"$b" --root "$r" delete --force "$id" >/dev/null 2>&1 || true
			done
		done
	done
	rm -rf "$work"
}
trap cleanup EXIT
chmod 0755 "$work"
"$repo/tests/integration/mkbundle.sh" "$work/bundle" /bin/true
# Each binary gets a copy of its own (perf and valgrind then name it) and
# a state root of its own.
declare -a names
for i in "${!bins[@]}"; do
	n=nbx$i
	[[ ${#bins[@]} -gt 1 ]] || n=nbx
	cp "${bins[$i]}" "$work/$n"
	mkdir -p "$work/root-$n"
	names+=("$n")
	"$work/$n" --root "$work/root-$n" run -b "$work/bundle" prof || die "${bins[$i]} cannot run the bundle"
done
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
for i in "${!bins[@]}"; do echo "${names[$i]} = ${bins[$i]}"; done

# crun refuses hybrid cgroup hosts with controllers on the cgroup2 mount;
# it runs (as everything here then does) in a mount namespace without it.
in_ns=()
if [[ "$(stat -f -c %T /sys/fs/cgroup)" == tmpfs && -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]]; then
	in_ns=(unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup/unified && exec "$@"' sh)
fi

median() { sort -n | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

if want 1; then
	echo
	echo "== 1. the binary"
	for n in "${names[@]}"; do
		printf '%s: %s bytes; ' "$n" "$(stat -c %s "$work/$n")"
		if ldd "$work/$n" >/dev/null 2>&1; then
			echo "dynamic: $(ldd "$work/$n" | awk '{print $1}' | grep -v vdso | tr '\n' ' ')"
		else
			echo "static"
		fi
	done
fi

if want 2; then
	echo
	echo "== 2. package initialisation of one process (GODEBUG=inittrace=1, median of 9; paid by the runtime and again by init)"
	for n in "${names[@]}"; do
		for ((i = 0; i < 9; i++)); do
			GODEBUG=inittrace=1 "$work/$n" --version 2>&1 >/dev/null |
				awk '/^init / {ms += $5; b += $8; a += $10} END {printf "%.3f %d %d\n", ms, b, a}'
		done >"$work/init-$n"
		printf '%s: %.3f ms of package init clock, %d bytes, %d allocations; heaviest:\n' "$n" \
			"$(cut -d' ' -f1 "$work/init-$n" | median)" "$(cut -d' ' -f2 "$work/init-$n" | median)" \
			"$(cut -d' ' -f3 "$work/init-$n" | median)"
		GODEBUG=inittrace=1 "$work/$n" --version 2>&1 >/dev/null | awk '/^init / {printf "  %-55s %s ms %s bytes\n", $2, $5, $8}' |
			sort -k2 -rn | head -8
	done
fi

# perf_stat FILE CMD...: one perf stat sample per call, appended to FILE.
perf_stat() {
	local file=$1
	shift
	perf stat -x, -e task-clock,page-faults,context-switches -- "$@" 2>>"$file" >/dev/null || true
}
# perf_table HEADING PREFIX NAME...: the medians of the perf_stat samples
# in PREFIX0, PREFIX1, ..., one line per NAME.
perf_table() {
	local heading=$1 prefix=$2 j=0 name
	shift 2
	printf '%-28s %12s %12s %16s\n' "$heading" "cpu(ms)" page-faults context-switches
	for name in "$@"; do
		printf '%-28s %12.3f %12.0f %16.0f\n' "$name" \
			"$(awk -F, '$3 == "task-clock" {print $1}' "$prefix$j" | median)" \
			"$(awk -F, '$3 == "page-faults" {print $1}' "$prefix$j" | median)" \
			"$(awk -F, '$3 == "context-switches" {print $1}' "$prefix$j" | median)"
		j=$((j + 1))
	done
}
if want 3 && have perf; then
	echo
	echo "== 3. per command, median of $RUNS interleaved runs (perf stat: CPU of the process and its children)"
	declare -A cmds=()
	order=()
	add() { cmds[$1]=$2; order+=("$1"); }
	add "fork+exec /bin/true" "/bin/true"
	for n in "${names[@]}"; do
		r=$work/root-$n
		add "$n run" "$work/$n --root $r run -b $work/bundle prof"
		add "$n sandbox" "$work/$n --root $r sandbox -- /bin/true"
		# One id per binary: the containers exist side by side, and the
		# id names the cgroup.
		add "$n state" "$work/$n --root $r state prof-created-$n"
		"$work/$n" --root "$r" create -b "$work/bundle" "prof-created-$n" >/dev/null
	done
	for ((i = 0; i < RUNS; i++)); do
		for j in "${!order[@]}"; do
			# shellcheck disable=SC2086 # the commands are word lists
			perf_stat "$work/ps-$j" ${cmds[${order[$j]}]}
		done
	done
	# crun, as a reference (not interleaved: on a hybrid host it runs in
	# a mount namespace of its own, see in_ns).
	mkdir -p "$work/root-crun"
	if have crun && "${in_ns[@]}" crun --root "$work/root-crun" run -b "$work/bundle" prof >/dev/null 2>&1; then
		order+=("crun run")
		cmds["crun run"]=x
		for ((i = 0; i < RUNS; i++)); do
			"${in_ns[@]}" perf stat -x, -e task-clock,page-faults,context-switches -- \
				crun --root "$work/root-crun" run -b "$work/bundle" prof 2>>"$work/ps-$((${#order[@]} - 1))" >/dev/null || true
		done
	fi
	perf_table command "$work/ps-" "${order[@]}"
	[[ -n "${cmds[crun run]:-}" ]] || echo "(crun: not installed or cannot run here)"
	for n in "${names[@]}"; do "$work/$n" --root "$work/root-$n" delete --force "prof-created-$n" >/dev/null; done
fi

if want 4 && have valgrind; then
	echo
	echo "== 4. user-space instructions of the runtime process (cachegrind; asynchronous preemption off)"
	printf '%-24s %14s\n' command instructions
	for n in "${names[@]}"; do
		r=$work/root-$n
		"$work/$n" --root "$r" create -b "$work/bundle" prof-created >/dev/null
		for what in "--version" "state" "run"; do
			case $what in
			--version) args=(--version) ;;
			state) args=(--root "$r" state prof-created) ;;
			run) args=(--root "$r" run -b "$work/bundle" prof) ;;
			esac
			out=$(GODEBUG=asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=no \
				--cachegrind-out-file=/dev/null "$work/$n" "${args[@]}" 2>&1 >/dev/null | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}')
			printf '%-24s %14s\n' "$n $what" "${out:-failed}"
		done
		"$work/$n" --root "$r" delete --force prof-created >/dev/null
	done
fi

if want 5 && have strace; then
	echo
	echo "== 5. the syscalls of one run (strace -f; times inflated by strace)"
	for n in "${names[@]}"; do
		st=$work/strace-$n
		strace -f -qq -ttt -o "$st" "$work/$n" --root "$work/root-$n" run -b "$work/bundle" prof >/dev/null
		echo "-- $n"
		# Processes: the runtime is the first pid; a process that executes
		# the runtime binary again as "init" is the nsenter stage, its
		# CLONE_PARENT child is init (until it executes the program).
		awk -v bin="$n" '
			{ pid = $1; t = $2; if (!t0) t0 = t }
			!(pid in role) { role[pid] = (n++ == 0) ? "runtime" : "thread/child"; order[n] = pid }
			/execve\(/ && /"init"\]/ { role[pid] = "stage"; stage = pid }
			/clone\(/ && /CLONE_PARENT/ && pid == stage { if (match($0, /= [0-9]+$/)) { c = substr($0, RSTART + 2); role[c] = "init"; ipid = c } }
			/execve\(/ && !/"init"\]/ && pid == ipid { role[pid] = "program" }
			{
				call = $3; sub(/\(.*/, "", call)
				if (call ~ /^</ || call ~ /^\+\+\+/ || call ~ /^---/) next
				cnt[pid]++
				if (call ~ /^(clone|clone3|vfork|fork|execve|fsync|fdatasync|wait4|waitid|mount|umount2|open_tree|move_mount|fsmount|pivot_root|unshare|setns|mkdirat|renameat|unlinkat|poll|ppoll|epoll_pwait)$/) k[pid "," call]++
				if (call ~ /^(clone|clone3|execve|fsync|renameat|pivot_root|unshare|wait4|exit_group)$/ || (call == "mkdirat" && $0 ~ /cgroup/)) {
					ev = $0; sub(/^[0-9]+ [0-9.]+ /, "", ev); ev = substr(ev, 1, 110)
					tl[++ntl] = sprintf("%8.2f ms  %-8s %s", (t - t0) * 1000, pid, ev)
				}
			}
			END {
				for (i = 1; i <= n; i++) {
					p = order[i]
					line = ""
					for (kk in k) { split(kk, a, ","); if (a[1] == p) line = line " " a[2] "=" k[kk] }
					if (role[p] != "thread/child" || cnt[p] > 20) printf "  pid %-8s %-13s %5d syscalls:%s\n", p, role[p], cnt[p], line
				}
				print "  timeline:"
				for (i = 1; i <= ntl; i++) print "  " tl[i]
			}' "$st" | awk '!/clone3\(\{flags=CLONE_VM\|CLONE_FS\|CLONE_FILES\|CLONE_SIGHAND\|CLONE_THREAD/'
		printf '  total syscalls: %d; fsync: %d; execve: %d; threads and processes: %d\n' \
			"$(grep -vc -e '<\.\.\. ' -e '+++ ' -e '--- ' "$st")" "$(grep -c ' fsync(' "$st" || true)" \
			"$(grep -c ' execve(' "$st" || true)" "$(awk '{print $1}' "$st" | sort -u | wc -l)"
	done
fi

# fold: perf script output -> inclusive share of each frame matching PAT,
# counted once per sample.
fold() {
	awk -v pat="$1" 'BEGIN { RS = ""; FS = "\n" }
	{
		tot++; delete seen
		for (i = 2; i <= NF; i++) {
			s = $i; sub(/^[ \t]+[0-9a-f]+ /, "", s); sub(/\+0x[0-9a-f]+ .*/, "", s); sub(/ \(.*/, "", s)
			if (s !~ pat || (s in seen)) continue
			seen[s] = 1; n[s]++
		}
	}
	END { for (s in n) printf "%6.2f%%  %s\n", 100 * n[s] / tot, s }' | sort -rn
}
if want 6 && have perf; then
	echo
	echo "== 6. CPU profile over $RUNS runs (perf record -e cpu-clock, 10 kHz)"
	for n in "${names[@]}"; do
		pd=$work/perf-$n.data
		perf record -q -e cpu-clock -F 10000 -g -o "$pd" -- \
			bash -c 'for ((i = 0; i < $1; i++)); do "$2" --root "$3" run -b "$4" prof || exit 1; done' \
			sh "$RUNS" "$work/$n" "$work/root-$n" "$work/bundle" >/dev/null 2>&1 || die "perf record failed"
		echo "-- $n: share of the samples per process name (the runtime is $n; init, before it executes the program, is named after its fd)"
		perf report -i "$pd" --no-children --sort comm --stdio -g none 2>/dev/null | awk '/%/ {printf "  %s %s\n", $1, $2}' | head -6
		echo "   the runtime process, inclusive (its own functions and the kernel entry points):"
		perf script -i "$pd" --comm "$n" 2>/dev/null >"$work/perf-$n.txt"
		fold 'nanobox-runc/|^main\.|encoding/json\.(Marshal|Unmarshal|typeFields)|^runtime\.(doInit1|schedinit)$|^__x64_sys_|^asm_exc_page_fault$' <"$work/perf-$n.txt" |
			awk '$1 + 0 >= 1.5' | head -40 | sed 's/^/  /'
		# init runs the binary as /proc/self/fd/N from inside the
		# container's mount namespace, where perf cannot open it: perf
		# prints its frames as offsets in the mapping, named here from the
		# binary's symbol table (go tool addr2line) at the address the
		# mapping's record gives them.
		init_comm=$(perf report -i "$pd" --no-children --sort comm --stdio -g none 2>/dev/null |
			awk '/%/ && $2 ~ /^[0-9]+$/ && !done {print $2; done = 1}')
		go_bin=$(command -v go || echo /usr/local/go/bin/go)
		init_base=$(perf script -i "$pd" --show-mmap-events --comm "${init_comm:-none}" 2>/dev/null |
			awk '/PERF_RECORD_MMAP2/ && / r-xp \/$/ && !done {
				match($0, /\[0x[0-9a-f]+\(/); s = substr($0, RSTART + 1, RLENGTH - 2)
				match($0, /@ 0x[0-9a-f]+ /); o = substr($0, RSTART + 2, RLENGTH - 3)
				print s, o; done = 1
			}')
		if [[ -n "$init_comm" && -n "$init_base" && -x "$go_bin" ]]; then
			read -r map_start map_off <<<"$init_base"
			echo "   init (process name $init_comm), inclusive; its first samples (the nsenter stage's C, the Go runtime's start) unwind only partly:"
			perf script -i "$pd" --comm "$init_comm" 2>/dev/null >"$work/perf-$n-init.txt"
			awk '$2 == "[unknown]" && $3 == "(/)" {print $1}' "$work/perf-$n-init.txt" | sort -u >"$work/init-offs"
			while read -r off; do
				printf '0x%x\n' $((16#$off + map_start - map_off))
			done <"$work/init-offs" | "$go_bin" tool addr2line "$work/$n" | paste - - | awk '{print $1}' |
				paste "$work/init-offs" - >"$work/init-syms"
			awk 'NR == FNR {sym[$1] = $2; next}
				$2 == "[unknown]" && $3 == "(/)" && ($1 in sym) {print "\t" $1 " " sym[$1] " (nanobox-runc)"; next}
				{print}' "$work/init-syms" "$work/perf-$n-init.txt" |
				fold 'nanobox-runc/|^main\.|encoding/json|filepath-securejoin|^runtime\.(doInit1|schedinit|sysmon)$|^__x64_sys_|^asm_exc_page_fault$' |
				awk '$1 + 0 >= 1.5' | head -30 | sed 's/^/  /'
		fi
	done
fi

if want 7 && have perf; then
	echo
	echo "== 7. why the runtime's threads sleep (sched_switch, voluntary, per run; 5 runs)"
	for n in "${names[@]}"; do
		sd=$work/sched-$n.data
		perf record -q -g -e sched:sched_switch -o "$sd" -- \
			bash -c 'for ((i = 0; i < 5; i++)); do "$1" --root "$2" run -b "$3" prof || exit 1; done' \
			sh "$work/$n" "$work/root-$n" "$work/bundle" >/dev/null 2>&1 || die "perf record failed"
		echo "-- $n"
		perf script -i "$sd" 2>/dev/null | awk -v bin="$n" 'BEGIN { RS = ""; FS = "\n" }
		{
			split($1, h, " "); comm = h[1]
			st = $1; sub(/.*prev_state=/, "", st); st = substr(st, 1, 1)
			who = (comm == bin) ? "runtime" : (comm ~ /^[0-9]+$/ ? "init" : "other")
			if (who == "other") next
			if (st != "S") { inv[who]++; next }
			k = ""; d = 0
			for (i = 2; i <= NF && d < 3; i++) {
				s = $i
				if (s ~ /kallsyms/) continue
				sub(/^[ \t]+[0-9a-f]+ /, "", s); sub(/\+0x.*/, "", s); sub(/ \(.*/, "", s)
				if (s ~ /^runtime\.(futex|futexsleep|notesleep|mPark|stopm|usleep|mcall|park_m|schedule)$/ || s ~ /^\[unknown\]$/) continue
				k = k (d++ ? " < " : "") s
			}
			c[who ": " (k == "" ? "?" : k)]++
		}
		END {
			for (w in inv) printf "  %5.0f  %s: preempted (involuntary)\n", inv[w] / 5, w
			for (x in c) printf "  %5.0f  %s\n", c[x] / 5, x
		}' | sort -rn | head -14
	done
fi

# 8. The floor under every process the runtime starts. A run starts the
# binary twice (the runtime, and the re-executed init), so what a process
# start costs before main() is paid twice: the Go runtime's own start
# (its CPUID feature probe, which is a VM exit under a hypervisor; the
# cgroup-aware GOMAXPROCS default, which reads /proc/self/cgroup and the
# whole /proc/self/mountinfo even when GOMAXPROCS is set; sysmon; the
# heap's first pages), and with cgo (the nsenter stage, libseccomp) static
# glibc's start and the cgo template thread. Each is timed here as its own
# program, built in the temporary directory, beside the binary's own
# `--version`: the difference between two lines is what one ingredient
# costs.
if want 8 && have perf && have gcc; then
	echo
	echo "== 8. what a process start costs, median of $RUNS interleaved runs (perf stat)"
	GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
	mkdir -p "$work/floor" "$work/floor-c"
	# (Not in the Go package's directory: cgo would compile it in.)
	printf 'int main(void) { return 0; }\n' >"$work/floor-c/c.c"
	printf 'package main\n\nfunc main() {}\n' >"$work/floor/main.go"
	printf 'package main\n\n// int x(void) { return 0; }\nimport "C"\n\nvar _ = C.x\n' >"$work/floor/cgo.go.in"
	# The repository's go line: GODEBUG defaults follow it.
	printf 'module floor\n\n%s\n' "$(grep -m1 '^go ' "$repo/go.mod")" >"$work/floor/go.mod"
	declare -A floor=()
	forder=()
	fadd() { floor[$1]=$2; forder+=("$1"); }
	gcc -O2 -static -o "$work/floor-c/c-static" "$work/floor-c/c.c" 2>/dev/null &&
		fadd "C, static glibc" "$work/floor-c/c-static"
	# What the binary is linked with when musl-gcc is there (the
	# Makefile's LIBC).
	! have musl-gcc || ! musl-gcc -O2 -static -o "$work/floor-c/c-musl" "$work/floor-c/c.c" 2>/dev/null ||
		fadd "C, static musl" "$work/floor-c/c-musl"
	if (cd "$work/floor" && CGO_ENABLED=0 GOFLAGS= "$GO" build -o go-nocgo . 2>/dev/null); then
		fadd "Go, no cgo" "$work/floor/go-nocgo"
	fi
	cp "$work/floor/cgo.go.in" "$work/floor/cgo.go"
	(cd "$work/floor" && GOFLAGS= "$GO" build -ldflags '-linkmode=external -extldflags=-static' -o go-cgo-static . 2>/dev/null) &&
		fadd "Go, static cgo (as nbx)" "$work/floor/go-cgo-static"
	for n in "${names[@]}"; do fadd "$n --version" "$work/$n --version"; done
	for ((i = 0; i < RUNS; i++)); do
		for j in "${!forder[@]}"; do
			# shellcheck disable=SC2086 # the commands are word lists
			perf_stat "$work/fl-$j" ${floor[${forder[$j]}]}
		done
	done
	perf_table program "$work/fl-" "${forder[@]}"
fi

# 9. The phases of one run on one clock. Each phase is the entry of a
# function (a uprobe: perf probe at the function's file offset, computed
# from the symbol table, so the Go names need no escaping) or a scheduler
# event, and each run is cut at the runtime's execve. A phase's time is
# when it begins; the step is the time since the phase before it (in the
# order of the medians), so a big step names what precedes it: "init:
# main.main" after "stage: forks init" is init's Go runtime start and
# package initialisation, which waits for nothing else.
if want 9 && have perf && have readelf && have nm; then
	echo
	echo "== 9. the critical path of a $TIMELINE: when each phase begins, ms from the runtime's execve (median of $RUNS runs)"
	lb=github.com/nanobox-sandbox/nanobox-runc/libbox
	# label|symbol|what the phase is called in the table (main.main is
	# hit by the runtime and by init: told apart by pid).
	phases=(
		"main|main.main|main.main (Go runtime and package init done)"
		"create|$lb.(*Runtime).Create|Runtime.Create"
		"cgroup|$lb.cgroupBeforeInit|cgroupBeforeInit (the container cgroup)"
		"spawn|$lb.(*spawnSpec).start|spawnSpec.start (clone3 of the stage)"
		"sendconfig|$lb.(*syncSocket).sendConfig|sendConfig (init is in its cgroup)"
		"initcontainer|$lb.initContainer|initContainer (config received)"
		"rootfs|$lb.prepareRootfs|prepareRootfs (mounts)"
		"pivot|$lb.pivotRootfs|pivotRootfs"
		"finalize|$lb.finalizeRootfs|finalizeRootfs"
		"process|$lb.prepareProcess|prepareProcess"
		"waitstart|$lb.waitForStart|waitForStart (ready sent)"
		"start|$lb.(*Container).startWith|Container.startWith"
		"delete|$lb.(*Container).deleteWith|Container.deleteWith"
	)
	# PROFILE_PROBES adds phases of its own: "label|symbol|name" entries
	# separated by ";" ($lb in a symbol is libbox's package path), e.g.
	# "mounts|$lb.openMountSources|openMountSources" (the nsenter stage's
	# C functions too: the stage is told apart by pid as well).
	if [[ -n ${PROFILE_PROBES:-} ]]; then
		IFS=';' read -r -a extra <<<"${PROFILE_PROBES//\$lb/$lb}"
		phases+=("${extra[@]}")
		# A label twice would be one probe event placed twice (perf
		# refuses it, and the section would blame uprobe support).
		dup=$(printf '%s\n' "${phases[@]}" | cut -d'|' -f1 | sort | uniq -d | head -1)
		[[ -z $dup ]] || die "PROFILE_PROBES: label \"$dup\" is used twice (the built-in ones: main create cgroup spawn sendconfig initcontainer rootfs pivot finalize process waitstart start delete)"
	fi
	names_of=$(printf '%s\n' "${phases[@]}" | awk -F'|' '{printf "%s%s=%s", (NR > 1 ? "|" : ""), $1, $3}')
	for n in "${names[@]}"; do
		bin=$work/$n
		probes=nbxprof_$n
		# The executable segment: file offset = address - its address +
		# its offset.
		read -r seg_off seg_addr < <(readelf -lW "$bin" | awk '$1 == "LOAD" && / R E / {print $2, $3; exit}')
		declare -A addr=()
		while read -r a _ sym; do addr[$sym]=$a; done < <(nm "$bin" 2>/dev/null | awk '$2 ~ /^[tT]$/')
		ok=1
		for ph in "${phases[@]}"; do
			IFS='|' read -r label sym _ <<<"$ph"
			if [[ -z "${addr[$sym]:-}" ]]; then
				echo "$n: no symbol $sym (a stripped binary?): section 9 skipped"
				ok=0
				break
			fi
			off=$(printf '0x%x' $((0x${addr[$sym]} - seg_addr + seg_off)))
			if ! perf probe -q -x "$bin" -a "$probes:$label=$off" >/dev/null 2>&1; then
				echo "$n: perf probe cannot place a uprobe here (no uprobe support, or no tracefs): section 9 skipped"
				ok=0
				break
			fi
		done
		unset addr
		if [[ $ok == 1 ]]; then
			perf record -q -o "$work/tl-$n.data" -e "$probes:*" -e sched:sched_process_exec \
				-e sched:sched_process_fork -e sched:sched_process_exit -- \
				bash -c 'for ((i = 0; i < $1; i++)); do
					if [[ $5 == sandbox ]]; then "$2" sandbox -- /bin/true; else "$2" --root "$3" run -b "$4" prof; fi
				done' sh "$RUNS" "$bin" "$work/root-$n" "$work/bundle" "$TIMELINE" >/dev/null 2>&1 || true
			perf script -i "$work/tl-$n.data" -F comm,pid,tid,time,event,trace 2>/dev/null |
				awk -v rt="$n" -v grp="$probes" -v names_of="$names_of" '
				BEGIN {
					n = split(names_of, pairs, "|")
					for (i = 1; i <= n; i++) {
						eq = index(pairs[i], "=")
						phase[substr(pairs[i], 1, eq - 1)] = substr(pairs[i], eq + 1)
					}
				}
				function mark(label) {
					if (run && !(label in seen)) {
						seen[label] = 1
						printf "%d\t%.3f\t%s\n", run, (t - t0) * 1000, label
					}
				}
				{
					comm = $1; split($2, pt, "/"); pid = pt[1]; tid = pt[2]
					t = $3; sub(/:$/, "", t); ev = $4; sub(/:$/, "", ev)
				}
				ev == "sched:sched_process_exec" && comm == rt {
					run++; delete seen; t0 = t; rpid = pid; stage = ""; ipid = ""
					mark("runtime: execve"); next
				}
				!run { next }
				ev == "sched:sched_process_exec" && pid != rpid && stage == "" { stage = pid; mark("stage: execve (the nsenter constructor runs)"); next }
				ev == "sched:sched_process_fork" && pid == stage && stage != "" {
					for (i = 5; i <= NF; i++) if ($i ~ /^child_pid=/) { ipid = $i; sub(/^child_pid=/, "", ipid) }
					mark("stage: forks init"); next
				}
				ev == "sched:sched_process_exit" && tid == stage && stage != "" { mark("stage: exits"); next }
				ev == "sched:sched_process_exec" && pid == ipid && ipid != "" { mark("program: execve"); next }
				ev == "sched:sched_process_exit" && tid == ipid && ipid != "" { mark("program: exits"); next }
				ev == "sched:sched_process_exit" && tid == rpid { mark("runtime: exits"); next }
				index(ev, grp ":") == 1 {
					label = substr(ev, length(grp) + 2)
					who = pid == rpid ? "runtime" : pid == ipid ? "init" : pid == stage ? "stage" : ""
					if (who == "") next
					if (label in phase) mark(who ": " phase[label])
				}' >"$work/tl-$n.tsv"
			runs=$(cut -f1 "$work/tl-$n.tsv" | sort -u | wc -l)
			echo "-- $n ($runs runs recorded)"
			printf '  %8s %8s  %s\n' "at(ms)" "step" phase
			cut -f3 "$work/tl-$n.tsv" | sort -u | while read -r label; do
				printf '%s\t%s\n' "$(awk -F'\t' -v l="$label" '$3 == l {print $2}' "$work/tl-$n.tsv" | median)" "$label"
			done | sort -n | awk -F'\t' '{printf "  %8.2f %8.2f  %s\n", $1, $1 - prev, $2; prev = $1}'
		fi
		perf probe -q -d "$probes:*" >/dev/null 2>&1 || true
		probes=
	done
fi
