package libbox

import (
	"bytes"
	"fmt"
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
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return cpuSample{user: total, ok: true}
	}
	ut, stt, err := parseStatTimes(st)
	if err != nil || ut+stt == 0 {
		return cpuSample{user: total, ok: true}
	}
	user := time.Duration(float64(total) * float64(ut) / float64(ut+stt))
	return cpuSample{user: user, system: total - user, ok: true}
}

// parseStatTimes reads utime and stime (fields 14 and 15) of
// /proc/PID/stat, counting from the last ')' (the command may hold any).
func parseStatTimes(b []byte) (utime, stime uint64, err error) {
	f, err := statFieldsAfterComm(b, 13)
	if err != nil {
		return 0, 0, err
	}
	// After ") ": field 3 is index 0, so 14 and 15 are 11 and 12.
	if utime, err = strconv.ParseUint(f[11], 10, 64); err != nil {
		return 0, 0, err
	}
	if stime, err = strconv.ParseUint(f[12], 10, 64); err != nil {
		return 0, 0, err
	}
	return utime, stime, nil
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
func treeCPU(root int) cpuSample {
	var user, system int64
	seen := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 && len(seen) < maxTreeWalk {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		if u, s, err := parseStatCPU(b); err == nil {
			user += u
			system += s
		}
		queue = append(queue, childrenOf(pid)...)
	}
	return cpuSample{user: time.Duration(user) * clockTick, system: time.Duration(system) * clockTick, ok: len(seen) > 0}
}

// parseStatCPU is utime + cutime and stime + cstime (fields 14 to 17) of
// /proc/PID/stat, in clock ticks.
func parseStatCPU(b []byte) (user, system int64, err error) {
	f, err := statFieldsAfterComm(b, 15)
	if err != nil {
		return 0, 0, err
	}
	var t [4]int64
	for j, s := range f[11:15] {
		if t[j], err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, 0, err
		}
		t[j] = max(t[j], 0)
	}
	return t[0] + t[2], t[1] + t[3], nil
}

// statFieldsAfterComm splits /proc/PID/stat after the command (from the
// last ')': the command may hold any byte), field 3 first; fewer than n
// fields is an error.
func statFieldsAfterComm(b []byte, n int) ([]string, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return nil, fmt.Errorf("malformed /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < n {
		return nil, fmt.Errorf("malformed /proc/PID/stat")
	}
	return f, nil
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
