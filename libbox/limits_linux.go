package libbox

// How each limit a sandbox asks for is enforced on this host, decided once
// by New: a cgroup when the caller can have one (root, or a delegated
// cgroup v2 subtree), rlimits, or the runtime itself (wall time, output).
// A limit that cannot be enforced as asked is an error naming the limit and
// the fix, unless the caller listed it in AllowDegraded: then it is
// enforced by the best weaker mechanism, or not at all, and the report
// says which. Never silently weaker.

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// cgroupProbe is whether this caller can have a cgroup for a sandbox, with
// which controllers.
type cgroupProbe struct {
	// version is 1 (v1 or hybrid) or 2 (unified).
	version int
	// usable: the runtime can create the sandbox's cgroup.
	usable bool
	// controllers usable in it (cgroup v2 names: "io" for blkio).
	controllers map[string]bool
	// why says why the cgroup is not usable, and fix what to do about it.
	why, fix string
}

func (c cgroupProbe) has(ctrl string) bool { return c.usable && c.controllers[ctrl] }

func (c cgroupProbe) versionName() string {
	if !c.usable {
		return ""
	}
	return fmt.Sprintf("v%d", c.version)
}

// whyNot explains why ctrl cannot be used, and what to do about it ("" when
// nothing can be done from the sandbox's side).
func (c cgroupProbe) whyNot(ctrl string) (why, fix string) {
	if !c.usable {
		return c.why, c.fix
	}
	if c.version == 2 {
		return fmt.Sprintf("the cgroup v2 controller %q is not available in the sandbox's parent cgroup", ctrl),
			"enable it in its cgroup.subtree_control (a delegated subtree must be delegated with it)"
	}
	return fmt.Sprintf("this host does not mount the cgroup v1 controller %q under /sys/fs/cgroup", v1Name(ctrl)), ""
}

// reason is whyNot as one phrase, for a report's reason.
func (c cgroupProbe) reason(ctrl string) string {
	return joinFix(c.whyNot(ctrl))
}

// probeCgroup finds out whether a sandbox of this caller can have a
// cgroup. Root can (the runtime creates it next to or below its own);
// an unprivileged caller only on cgroup v2, when the parent of its own
// cgroup (where the sandbox's goes, as with every rootless container of
// this runtime) is writable: a delegated subtree.
func probeCgroup(rootless bool) cgroupProbe {
	p := cgroupProbe{version: 1, controllers: map[string]bool{}}
	if cgroups.IsCgroup2UnifiedMode() {
		p.version = 2
		dir := "/sys/fs/cgroup"
		if rootless {
			own, err := ownCgroupV2()
			if err != nil {
				p.why = fmt.Sprintf("cannot find this process's cgroup (%v)", err)
				return p
			}
			dir = filepath.Dir(filepath.Join("/sys/fs/cgroup", own))
			if err := unix.Access(dir, unix.W_OK); err != nil {
				p.why = fmt.Sprintf("uid %d may not create cgroups in %s (%v): no delegated cgroup v2 subtree", os.Geteuid(), dir, err)
				p.fix = "run as root, or inside a subtree delegated to this user (e.g. systemd-run --user --scope -p Delegate=yes ...)"
				return p
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		if err != nil {
			p.why = fmt.Sprintf("cannot read %s/cgroup.controllers (%v)", dir, err)
			return p
		}
		for _, c := range strings.Fields(string(b)) {
			p.controllers[c] = true
		}
		p.usable = true
		return p
	}
	if rootless {
		p.why = "an unprivileged user cannot have a cgroup on this host: it uses cgroup v1 (or the hybrid layout), which cannot be delegated"
		p.fix = "run as root, or on a cgroup v2 host inside a delegated subtree"
		return p
	}
	for _, c := range []string{"memory", "pids", "cpu", "cpuacct", "cpuset", "io"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", v1Name(c), "cgroup.procs")); err == nil {
			p.controllers[c] = true
		}
	}
	p.usable = true
	return p
}

// ownCgroupV2 is this process's cgroup v2 path ("0::/user.slice/...").
func ownCgroupV2() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup v2 entry in /proc/self/cgroup")
}

// limitPlan is how a sandbox's limits are enforced.
type limitPlan struct {
	// reports are the limits' fates (Hit is filled in after a run).
	reports map[LimitName]LimitReport
	// resources are the cgroup limits; nil when none is asked for and the
	// caller is unprivileged (then the sandbox runs without a cgroup).
	resources *cgroups.Resources
	rlimits   []Rlimit
	// cgroupCPUPoll: the runtime kills the sandbox when its cgroup's CPU
	// time passes Limits.CPUTime.
	cgroupCPUPoll bool
	// degraded lists, in words, what is weaker than asked.
	degraded []string
}

// planLimits decides the fate of every limit o asks for. forSpec plans for
// an OCI runtime that will be given the cgroup limits (spec --preset):
// every cgroup limit is then "enforced" by the cgroup.
func planLimits(o *Options, rootless bool, cg cgroupProbe, forSpec bool) (*limitPlan, error) {
	p := &limitPlan{reports: map[LimitName]LimitReport{}}
	res := &cgroups.Resources{}
	l := &o.Limits
	var errs []error
	set := func(n LimitName, st LimitStatus, mech, reason string) {
		v, _ := l.requested(n)
		p.reports[n] = LimitReport{Requested: v, Unit: limitUnit(n), Status: st, Mechanism: mech, Reason: reason}
		switch st {
		case LimitDegraded:
			p.degraded = append(p.degraded, fmt.Sprintf("%s: enforced by %s (%s)", n, mech, reason))
		case LimitUnavailable:
			p.degraded = append(p.degraded, fmt.Sprintf("%s: not enforced (%s)", n, reason))
		}
	}
	hasCgroup := func(ctrl string) bool { return forSpec || cg.has(ctrl) }
	cgName := func(v2, v1 string) string {
		if cg.version == 2 {
			return "cgroup v2 " + v2
		}
		return "cgroup v1 " + v1
	}
	refuse := func(n LimitName, ctrl, degradedBy string) {
		how := "to run without it"
		if degradedBy != "" {
			how = "to enforce it with " + degradedBy
		}
		why, fix := cg.whyNot(ctrl)
		errs = append(errs, &LimitError{
			Limit:  n,
			Reason: fmt.Sprintf("needs a cgroup with the %s controller: %s", ctrl, why),
			Fix:    joinFix(fix, fmt.Sprintf("or allow degradation (allowDegraded: [\"%s\"], CLI --allow-degraded %s) %s", n, n, how)),
		})
	}

	if l.Memory != 0 {
		switch {
		case hasCgroup("memory"):
			res.Memory = l.Memory
			// Swap counts against the limit: a program must not get
			// around it by being swapped out.
			if cg.version == 2 || memswAccounting() {
				res.MemorySwap = l.Memory
			}
			set(LimitMemory, LimitEnforced, cgName("memory.max", "memory.limit_in_bytes"), "")
		case o.allowsDegraded(LimitMemory):
			p.rlimits = append(p.rlimits, Rlimit{Type: unix.RLIMIT_AS, Soft: uint64(l.Memory), Hard: uint64(l.Memory)})
			set(LimitMemory, LimitDegraded, "RLIMIT_AS (per process address space)", cg.reason("memory"))
		default:
			refuse(LimitMemory, "memory", "RLIMIT_AS per process")
		}
	}
	if l.Pids != 0 {
		switch {
		case hasCgroup("pids"):
			pids := l.Pids
			res.PidsLimit = &pids
			set(LimitPids, LimitEnforced, cgName("pids.max", "pids.max"), "")
		case o.allowsDegraded(LimitPids) && o.Namespaces.None:
			set(LimitPids, LimitUnavailable, "", cg.reason("pids")+"; without a user namespace RLIMIT_NPROC would count every process of the caller's uid")
		case o.allowsDegraded(LimitPids):
			// Since Linux 5.14 RLIMIT_NPROC is counted per user namespace
			// and uid (ucounts): in the sandbox's own user namespace it
			// counts the sandbox's processes and threads only.
			p.rlimits = append(p.rlimits, Rlimit{Type: unix.RLIMIT_NPROC, Soft: uint64(l.Pids), Hard: uint64(l.Pids)})
			set(LimitPids, LimitDegraded, "RLIMIT_NPROC in the sandbox's own user namespace", cg.reason("pids"))
		default:
			refuse(LimitPids, "pids", "RLIMIT_NPROC in the sandbox's user namespace")
		}
	}
	if l.CPUs != 0 {
		switch {
		case hasCgroup("cpu"):
			const period = 100000
			q := int64(math.Ceil(l.CPUs * period))
			res.CpuQuota, res.CpuPeriod = q, period
			set(LimitCPUs, LimitEnforced, cgName("cpu.max", "cpu.cfs_quota_us"), "")
		case o.allowsDegraded(LimitCPUs):
			set(LimitCPUs, LimitUnavailable, "", cg.reason("cpu"))
		default:
			refuse(LimitCPUs, "cpu", "")
		}
	}
	if l.WallTime != 0 {
		mech := "runtime timer from execve, then SIGKILL of the whole sandbox"
		if o.Namespaces.None {
			set(LimitWallTime, LimitDegraded, "runtime timer, then SIGKILL of the program's process group", "without a pid namespace a process that leaves the group is not reached")
		} else {
			set(LimitWallTime, LimitEnforced, mech, "")
		}
	}
	if l.CPUTime != 0 {
		// RLIMIT_CPU counts whole seconds: SIGXCPU at the soft limit, and
		// SIGKILL a second later for a program that catches it.
		secs := uint64(math.Ceil(l.CPUTime.Seconds()))
		p.rlimits = append(p.rlimits, Rlimit{Type: unix.RLIMIT_CPU, Soft: secs, Hard: secs + 1})
		if !forSpec && cg.has("cpu") && (cg.version == 2 || cg.controllers["cpuacct"]) {
			p.cgroupCPUPoll = true
			set(LimitCPUTime, LimitEnforced, "cgroup CPU usage of the whole sandbox, and RLIMIT_CPU per process", "")
		} else {
			set(LimitCPUTime, LimitEnforced, fmt.Sprintf("RLIMIT_CPU per process (%ds), and the program's process tree polled from /proc (no cgroup: a process that exits between two polls, not waited for, is not counted)", secs), "")
		}
	}
	if l.OpenFiles != 0 {
		if err := checkHardLimit(unix.RLIMIT_NOFILE, uint64(l.OpenFiles), LimitOpenFiles); err != nil && !forSpec {
			errs = append(errs, err)
		}
		p.rlimits = append(p.rlimits, Rlimit{Type: unix.RLIMIT_NOFILE, Soft: uint64(l.OpenFiles), Hard: uint64(l.OpenFiles)})
		set(LimitOpenFiles, LimitEnforced, "RLIMIT_NOFILE", "")
	}
	if l.FileSize != 0 {
		p.rlimits = append(p.rlimits, Rlimit{Type: unix.RLIMIT_FSIZE, Soft: uint64(l.FileSize), Hard: uint64(l.FileSize)})
		set(LimitFileSize, LimitEnforced, "RLIMIT_FSIZE", "")
	}
	if l.Output != 0 {
		set(LimitOutput, LimitEnforced, "runtime-side cap on stdout and stderr, then SIGKILL of the whole sandbox", "")
	}
	// No core files: they would land in a writable directory of the
	// sandbox and take its space.
	p.rlimits = append(p.rlimits, Rlimit{Type: unix.RLIMIT_CORE})
	for _, rl := range p.rlimits {
		if rl.Type == unix.RLIMIT_NOFILE || forSpec {
			continue
		}
		if err := checkHardLimit(rl.Type, rl.Hard, rlimitLimit(rl.Type)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, oneLine(errs)
	}
	if HasLimits(res) || !rootless || cg.usable {
		// Root always gets a cgroup (it measures memory and CPU for the
		// whole sandbox and kills it as one); so does a caller with a
		// delegated subtree.
		p.resources = res
	}
	return p, nil
}

// checkHardLimit fails when v, the rlimit res that enforces limit, is
// above this process's hard limit, which only CAP_SYS_RESOURCE may raise.
func checkHardLimit(res int, v uint64, limit LimitName) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(res, &cur); err != nil || cur.Max == unix.RLIM_INFINITY || v <= cur.Max {
		return nil
	}
	return &LimitError{
		Limit:  limit,
		Reason: fmt.Sprintf("%d is above this process's hard %s of %d, which only CAP_SYS_RESOURCE may raise", v, rlimitName(res), cur.Max),
		Fix:    fmt.Sprintf("ask for at most %d", cur.Max),
	}
}

// rlimitLimit is the limit an rlimit of a sandbox enforces.
func rlimitLimit(res int) LimitName {
	switch res {
	case unix.RLIMIT_AS:
		return LimitMemory
	case unix.RLIMIT_NPROC:
		return LimitPids
	case unix.RLIMIT_CPU:
		return LimitCPUTime
	case unix.RLIMIT_NOFILE:
		return LimitOpenFiles
	}
	return LimitFileSize
}

// memswAccounting reports whether cgroup v1 swap accounting is on.
func memswAccounting() bool {
	_, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")
	return err == nil
}

// cgroupCPU is the CPU time used by the cgroup h so far: the exact total
// (cpu.stat usage_usec, cpuacct.usage), split in the proportion of the
// user and system times the kernel keeps beside it.
func cgroupCPU(h *cgroupHandle) cpuSample { return cgroupCPUWith(h, nil) }

// cgroupCPUWith is cgroupCPU with the files read through r.
func cgroupCPUWith(h *cgroupHandle, r *statReader) cpuSample {
	var total, user, sys uint64
	var err error
	if cgroups.IsCgroup2UnifiedMode() {
		// One read of cpu.stat for the three fields.
		stat := filepath.Join(h.m.Path(""), "cpu.stat")
		b, err := r.read(stat)
		if err != nil {
			return cpuSample{}
		}
		if total, err = parseStatField(b, stat, "usage_usec"); err != nil {
			return cpuSample{}
		}
		user, _ = parseStatField(b, stat, "user_usec")
		sys, _ = parseStatField(b, stat, "system_usec")
		total, user, sys = total*1000, user*1000, sys*1000
	} else {
		dir := h.m.Path("cpuacct")
		if dir == "" {
			return cpuSample{}
		}
		if total, err = r.readUint(filepath.Join(dir, "cpuacct.usage")); err != nil {
			return cpuSample{}
		}
		if user, sys, err = cpuacctUsageAll(r, filepath.Join(dir, "cpuacct.usage_all")); err != nil {
			user, _ = r.readUint(filepath.Join(dir, "cpuacct.usage_user"))
			sys, _ = r.readUint(filepath.Join(dir, "cpuacct.usage_sys"))
		}
	}
	return cpuSample{user: time.Duration(user), system: time.Duration(sys), ok: true}.rescale(time.Duration(total))
}

// cpuacctUsageAll sums the per-CPU user and system times of a cgroup v1
// cpuacct.usage_all ("cpu user system", then one line per CPU, in ns):
// what cpuacct.usage_user and cpuacct.usage_sys add up (the same
// counters), in one read instead of two. (cpuacct.usage, the exact total,
// is another counter: the sum of these differs from it.)
func cpuacctUsageAll(r *statReader, path string) (user, sys uint64, err error) {
	b, err := r.read(path)
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || strings.Join(strings.Fields(lines[0]), " ") != "cpu user system" {
		return 0, 0, fmt.Errorf("%s: unexpected format", path)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return 0, 0, fmt.Errorf("%s: unexpected line %q", path, l)
		}
		u, err1 := strconv.ParseUint(f[1], 10, 64)
		s, err2 := strconv.ParseUint(f[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		user, sys = user+u, sys+s
	}
	return user, sys, nil
}

// readCgroupFile reads a small cgroup or proc file whole with plain system
// calls: os.ReadFile adds an fstat and registers the descriptor with the
// runtime's poller (cgroupfs files are pollable), about nine calls for
// each file instead of three or four, and a report reads several.
func readCgroupFile(path string) ([]byte, error) {
	return readFileSized(path, 512)
}

// readFileSized is readCgroupFile for a file of up to about size bytes,
// read in one call then (state.json: readState).
func readFileSized(path string, size int) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	return readWhole(fd, path, false, size)
}

// readWhole reads fd to its end, into a buffer of size bytes to begin
// with: with pread from offset 0 when positional (a descriptor read again
// and again, statReader: each pread at 0 makes a cgroup file anew), with
// read otherwise.
func readWhole(fd int, path string, positional bool, size int) ([]byte, error) {
	op := "read"
	if positional {
		op = "pread"
	}
	buf := make([]byte, 0, max(size, 512))
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		var n int
		var err error
		if positional {
			n, err = unix.Pread(fd, buf[len(buf):cap(buf)], int64(len(buf)))
		} else {
			n, err = unix.Read(fd, buf[len(buf):cap(buf)])
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: op, Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func parseStatField(b []byte, path, key string) (uint64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			var n uint64
			if _, err := fmt.Sscan(v, &n); err != nil {
				return 0, fmt.Errorf("%s %s: %w", path, key, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s has no %s", path, key)
}

func parseUint(b []byte, path string) (uint64, error) {
	var n uint64
	if _, err := fmt.Sscan(string(b), &n); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}
