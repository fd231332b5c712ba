package libbox

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuSample is CPU time used so far, split into user and system time.
type cpuSample struct {
	user, system time.Duration
	ok           bool
}

func (c cpuSample) total() time.Duration { return c.user + c.system }

// minus is c - base, each part at least 0.
func (c cpuSample) minus(base cpuSample) cpuSample {
	if !base.ok {
		return c
	}
	return cpuSample{user: max(c.user-base.user, 0), system: max(c.system-base.system, 0), ok: c.ok}
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture the runtime supports.
const clockTick = 10 * time.Millisecond

// procCPU is the CPU time process pid has used so far: its total from
// /proc/PID/schedstat (nanoseconds, as exact as rusage), split in the
// proportion of the tick-sampled utime and stime of /proc/PID/stat. Taken
// right after the program's execve, it is the share of the process's
// rusage that belongs to the runtime's own init, which the report leaves
// out.
func procCPU(pid int) cpuSample {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return cpuSample{}
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return cpuSample{}
	}
	ns, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return cpuSample{}
	}
	total := time.Duration(ns)
	st, err := readProcStat(pid)
	if err != nil || st.Utime+st.Stime == 0 {
		return cpuSample{user: total, ok: true}
	}
	user := time.Duration(float64(total) * float64(st.Utime) / float64(st.Utime+st.Stime))
	return cpuSample{user: user, system: total - user, ok: true}
}

// cpuPollInterval is how often the runtime reads a sandbox's CPU time for
// its limit: a twentieth of the limit, between 10 and 100 ms.
func cpuPollInterval(limit time.Duration) time.Duration {
	return min(max(limit/20, 10*time.Millisecond), 100*time.Millisecond)
}

// maxTreeWalk bounds the processes treeCPU reads in one walk (a fork bomb's
// tree is held by the pids limit; the walk must not become one).
const maxTreeWalk = 8192

// treeCPU is the CPU time the process tree under root has used so far:
// every live process's own (all its threads) and that of the children it
// waited for (utime, stime, cutime and cstime of /proc/PID/stat). Orphans
// are reparented to the pid namespace's init or to a child subreaper, the
// roots the runtime walks from, so they stay in the tree. A process that
// exits and is not waited for (its parent ignores SIGCHLD) takes its time
// with it: counted only by the walks that saw it alive.
//
// rootStart is root's start time as a first walk returned it (0 in that
// first walk): a root that is not that process any more (reaped, its pid
// reused) gives ok false. A child is counted only while its parent is
// the one it was listed under, so that a pid reused during the walk adds
// no stranger's time.
func treeCPU(root int, rootStart uint64) (_ cpuSample, start uint64) {
	st, err := readProcStat(root)
	if err != nil || rootStart != 0 && st.StartTime != rootStart {
		return cpuSample{}, 0
	}
	var user, system uint64
	seen := map[int]bool{root: true}
	type member struct {
		pid int
		st  procStat
	}
	queue := []member{{root, st}}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		user += m.st.Utime + m.st.Cutime
		system += m.st.Stime + m.st.Cstime
		for _, child := range childrenOf(m.pid) {
			if seen[child] || len(seen) >= maxTreeWalk {
				continue
			}
			seen[child] = true
			if cst, err := readProcStat(child); err == nil && cst.Ppid == m.pid {
				queue = append(queue, member{child, cst})
			}
		}
	}
	return cpuSample{user: time.Duration(user) * clockTick, system: time.Duration(system) * clockTick, ok: true}, st.StartTime
}

// rescale returns the split of c scaled so that its total is total.
func (c cpuSample) rescale(total time.Duration) cpuSample {
	sum := c.total()
	if sum <= 0 {
		return cpuSample{user: total, ok: c.ok}
	}
	user := time.Duration(float64(total) * float64(c.user) / float64(sum))
	return cpuSample{user: user, system: total - user, ok: c.ok}
}
