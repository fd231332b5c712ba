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
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, fmt.Errorf("malformed /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+2:]))
	// After ") ": field 3 is index 0, so 14 and 15 are 11 and 12.
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("malformed /proc/PID/stat")
	}
	if utime, err = strconv.ParseUint(f[11], 10, 64); err != nil {
		return 0, 0, err
	}
	if stime, err = strconv.ParseUint(f[12], 10, 64); err != nil {
		return 0, 0, err
	}
	return utime, stime, nil
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
