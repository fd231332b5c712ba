package libbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxCPU is the highest CPU number a CPUAffinity may name: the kernel's
// own limit (CONFIG_NR_CPUS is at most 8192).
const MaxCPU = 8191

// schedISO is SCHED_ISO, which the OCI spec lists and mainline Linux
// never implemented (sched_setattr says EINVAL).
const schedISO = 4

// schedPolicyName is the SCHED_* name of a policy number, for messages.
func schedPolicyName(p uint32) string {
	switch p {
	case unix.SCHED_NORMAL:
		return "SCHED_OTHER"
	case unix.SCHED_FIFO:
		return "SCHED_FIFO"
	case unix.SCHED_RR:
		return "SCHED_RR"
	case unix.SCHED_BATCH:
		return "SCHED_BATCH"
	case schedISO:
		return "SCHED_ISO"
	case unix.SCHED_IDLE:
		return "SCHED_IDLE"
	case unix.SCHED_DEADLINE:
		return "SCHED_DEADLINE"
	}
	return "policy " + strconv.FormatUint(uint64(p), 10)
}

// setScheduler applies s to the calling thread (sched_setattr(2) with pid
// 0 names the thread, not the process): the one that executes the program,
// whose policy, priority and nice value survive execve.
func setScheduler(s *Scheduler) error {
	attr := &unix.SchedAttr{
		Policy:   s.Policy,
		Flags:    s.Flags,
		Nice:     s.Nice,
		Priority: s.Priority,
		Runtime:  s.Runtime,
		Deadline: s.Deadline,
		Period:   s.Period,
	}
	err := unix.SchedSetAttr(0, attr, 0)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("sched_setattr %s: %w", schedPolicyName(s.Policy), err)
	switch {
	case errors.Is(err, unix.EPERM) && (s.Policy == unix.SCHED_FIFO || s.Policy == unix.SCHED_RR):
		return fmt.Errorf("%w: a real-time policy needs CAP_SYS_NICE in the host's user namespace (root without a user namespace) or RLIMIT_RTPRIO in process.rlimits, and, on a kernel with real-time group scheduling (cgroup v1 cpu.rt_runtime_us), a real-time budget for the container's cgroup: linux.resources.cpu.realtimeRuntime", err)
	case errors.Is(err, unix.EPERM) && s.Policy == unix.SCHED_DEADLINE:
		if have, online, narrowed := affinityNarrowed(); narrowed {
			// runc's words, which its suite and callers match.
			return fmt.Errorf("process scheduler can't be used together with AllowedCPUs: SCHED_DEADLINE needs a CPU affinity spanning every CPU, and the container's has %d of %d (linux.resources.cpu.cpus or execCPUAffinity): %w", have, online, err)
		}
		return fmt.Errorf("%w: SCHED_DEADLINE needs CAP_SYS_NICE in the host's user namespace (root without a user namespace), a CPU affinity spanning the whole root domain, and no real-time group scheduling limit on the cgroup", err)
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w: a nice value below the current one needs CAP_SYS_NICE in the host's user namespace (root without a user namespace) or RLIMIT_NICE in process.rlimits", err)
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("%w: the kernel's SCHED_DEADLINE admission control refused this runtime/period bandwidth", err)
	case errors.Is(err, unix.EINVAL) && s.Policy == schedISO:
		return fmt.Errorf("%w: SCHED_ISO is not implemented by Linux", err)
	case errors.Is(err, unix.EINVAL) && s.Policy == unix.SCHED_DEADLINE:
		return fmt.Errorf("%w: SCHED_DEADLINE needs 1024ns <= runtime <= deadline <= period (a period of 0 means the deadline)", err)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%w: the kernel refuses these attributes (priority is 1-99 for SCHED_FIFO and SCHED_RR, 0 otherwise; flags %#x)", err, s.Flags)
	}
	return err
}

// affinityNarrowed reports whether the calling thread may run on fewer
// CPUs than are online (a cpuset, an affinity): the CPUs it has, and the
// online ones, counted from /proc/stat (procfs is the container's, and
// lists every online CPU whatever the cpuset).
func affinityNarrowed() (have, online int, narrowed bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, 0, false
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "cpu"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			online++
		}
	}
	have = set.Count()
	return have, online, online > 0 && have < online
}

// ioprioWhoProcess is IOPRIO_WHO_PROCESS (linux/ioprio.h).
const ioprioWhoProcess = 1

// setIOPriority applies p to the calling thread (IOPRIO_WHO_PROCESS with
// who 0 is the caller; Go threads share no io_context, as they are not
// made with CLONE_IO), which executes the program: the priority survives
// execve and every child inherits it. runc asks for IOPRIO_WHO_PGRP
// instead, which is the same set of processes only because its processes
// lead their own process group; ours may share the caller's, which must
// not be changed.
func setIOPriority(p *IOPriority) error {
	ioprio := uintptr(p.Class)<<13 | uintptr(p.Priority)
	_, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, ioprio)
	if errno == 0 {
		return nil
	}
	err := fmt.Errorf("ioprio_set class %d level %d: %w", p.Class, p.Priority, errno)
	if errors.Is(errno, unix.EPERM) && p.Class == IOPrioClassRT {
		return fmt.Errorf("%w: IOPRIO_CLASS_RT needs CAP_SYS_NICE or CAP_SYS_ADMIN in the host's user namespace (root without a user namespace); use IOPRIO_CLASS_BE or IOPRIO_CLASS_IDLE", err)
	}
	return err
}

// setThreadAffinity pins the calling thread to cpus (a thread, not a
// process: sched_setaffinity with pid 0 is the caller). The kernel keeps
// only those the thread's cpuset allows and that are online; none left is
// EINVAL.
func setThreadAffinity(cpus []int) error {
	set := unix.NewCPUSet(MaxCPU + 1)
	for _, c := range cpus {
		if c < 0 || c > MaxCPU {
			return fmt.Errorf("cpu %d is out of range 0-%d", c, MaxCPU)
		}
		set.Set(c)
	}
	if err := unix.SchedSetaffinityDynamic(0, set); err != nil {
		err = fmt.Errorf("sched_setaffinity %s: %w", formatCPUList(cpus), err)
		if errors.Is(err, unix.EINVAL) {
			online, _ := os.ReadFile("/sys/devices/system/cpu/online")
			return fmt.Errorf("%w: none of these CPUs is online and allowed by the cpuset of the process (online: %s)", err, strings.TrimSpace(string(online)))
		}
		return err
	}
	return nil
}

// resetAffinity lets pid run on every CPU, rather than on the CPUs of an
// affinity it inherited (the runtime's own: taskset, a service's
// CPUAffinity=). One sched_setaffinity with every bit set: the kernel
// keeps only the CPUs that exist and that pid's cpuset allows, and keeps
// the whole mask as the one asked for, so that the cpuset alone decides
// when it changes or pid moves to another (since Linux 6.2 the kernel
// intersects a cpuset with the last mask asked for; before, a cpuset
// replaced it). pid must be single-threaded: the mask is its main
// thread's.
func resetAffinity(pid int) error {
	set := unix.NewCPUSet(MaxCPU + 1)
	set.Fill()
	if err := unix.SchedSetaffinityDynamic(pid, set); err != nil {
		return fmt.Errorf("reset the CPU affinity of pid %d: sched_setaffinity: %w", pid, err)
	}
	return nil
}

// startPinned runs start (which forks a process: forkExec) on
// a new OS thread pinned to a.Initial, so the process and every thread it
// makes run there from their first instruction, until the process enters
// the container's cgroup (OCI process.execCPUAffinity.initial). The thread
// is never unlocked: it exits with its goroutine, so no other goroutine of
// the runtime inherits the affinity. Without an initial set, start runs
// here.
func startPinned(a *CPUAffinity, start func() (*procHandle, error)) (*procHandle, error) {
	if a == nil || len(a.Initial) == 0 {
		return start()
	}
	var p *procHandle
	err := onOwnThread(func() error {
		if err := setThreadAffinity(a.Initial); err != nil {
			return fmt.Errorf("process.execCPUAffinity.initial: %w", err)
		}
		var err error
		p, err = start()
		return err
	})
	return p, err
}

// applyExecAffinity sets the final CPU affinity of a process added by exec,
// on the thread that executes the program, once it is in the container's
// cgroup. Without a final set the affinity stays as the move into the
// cgroup left it: the runtime-spec says the runtime should not change it
// then, and runc does not (an initial set alone may so outlive the
// set-up where the move does not reset it, e.g. with no cgroup).
func applyExecAffinity(a *CPUAffinity) error {
	if a == nil || len(a.Final) == 0 {
		return nil
	}
	if err := setThreadAffinity(a.Final); err != nil {
		return fmt.Errorf("process.execCPUAffinity.final: %w", err)
	}
	return nil
}

// logAffinity logs, at debug level, the CPU affinity of pid (a process
// exec adds, before it joins the container's cgroup) as a mask of its
// first 64 CPUs: where process.execCPUAffinity.initial can be seen, as
// runc's nsexec logs it ("affinity: 0x3"; runc's cpu_affinity.bats reads
// it there).
func logAffinity(log Logger, pid int) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		log.Debugf("nsexec: pid %d: sched_getaffinity: %v", pid, err)
		return
	}
	var mask uint64
	for i := 0; i < 64; i++ {
		if set.IsSet(i) {
			mask |= 1 << i
		}
	}
	log.Debugf("nsexec: pid %d: affinity: %#x", pid, mask)
}

// formatCPUList writes CPU numbers the way the kernel lists them
// (/sys/devices/system/cpu/online, cpuset.cpus): "0-3,7".
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
