package libbox

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// RunStatus is what happened to the program, for a judge or an agent loop
// to act on without guessing.
type RunStatus string

// The statuses. Only one applies: a limit that stopped the program wins
// over the signal it was stopped with.
const (
	StatusOK          RunStatus = "ok"           // exited 0
	StatusExited      RunStatus = "exited"       // exited non-zero
	StatusSignaled    RunStatus = "signaled"     // killed by a signal of its own making
	StatusOOM         RunStatus = "oom"          // the memory limit's OOM killer fired
	StatusWallTimeout RunStatus = "wall-timeout" // killed at the wall time limit
	StatusCPUTimeout  RunStatus = "cpu-timeout"  // killed at the CPU time limit
	StatusOutputLimit RunStatus = "output-limit" // killed past the output limit
	StatusCancelled   RunStatus = "cancelled"    // killed because the caller's context ended
	StatusSetupError  RunStatus = "setup-error"  // the sandbox could not be set up; nothing ran
)

// LimitStatus is the fate of a limit that was asked for.
type LimitStatus string

// The fates.
const (
	// LimitEnforced: enforced as asked, by Mechanism.
	LimitEnforced LimitStatus = "enforced"
	// LimitDegraded: enforced by a weaker Mechanism than asked for (Reason
	// says why); the caller allowed it.
	LimitDegraded LimitStatus = "degraded"
	// LimitUnavailable: not enforced at all (Reason says why); the caller
	// allowed it.
	LimitUnavailable LimitStatus = "unavailable"
)

// LimitReport is one requested limit in the report.
type LimitReport struct {
	// Requested is the value asked for, in Unit: bytes, seconds, count or
	// cpus.
	Requested float64     `json:"requested"`
	Unit      string      `json:"unit"`
	Status    LimitStatus `json:"status"`
	// Mechanism is what enforces it, e.g. "cgroup v1 memory.limit_in_bytes"
	// or "RLIMIT_AS (per process address space)".
	Mechanism string `json:"mechanism,omitempty"`
	// Reason says why the limit is degraded or unavailable.
	Reason string `json:"reason,omitempty"`
	// Hit is true when the runtime knows the program reached the limit
	// (a kill by it, a cgroup event, SIGXFSZ...). False means not seen,
	// which for an rlimit the program merely ran into (EMFILE, EAGAIN) is
	// not proof it was never reached.
	Hit bool `json:"hit,omitempty"`
}

// Isolation is what confined the program.
type Isolation struct {
	// Rootless: the runtime ran without root on the host.
	Rootless bool `json:"rootless"`
	// Namespaces is "all" (user, mount, pid, ipc, uts, cgroup and, unless
	// the network is host's, network) or "none" (degraded mode).
	Namespaces string `json:"namespaces"`
	// Network is the network mode: none, host or allowlist.
	Network NetworkMode `json:"network"`
	// Seccomp is the profile: default, strict, custom or none.
	Seccomp string `json:"seccomp"`
	// Landlock is the fate of the Landlock policy (enforced, degraded,
	// unavailable), or "" without one.
	Landlock LandlockStatus `json:"landlock,omitempty"`
	// Cgroup is "v1", "v2" or "" when the sandbox ran without a cgroup.
	Cgroup string `json:"cgroup,omitempty"`
	// Degraded lists, in words, everything weaker than asked for.
	Degraded []string `json:"degraded,omitempty"`
}

// Report is the execution report of one run. Its JSON form is part of the
// sandbox contract (docs/sandbox-contract.md): durations in seconds, sizes
// in bytes.
type Report struct {
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Status  RunStatus `json:"status"`
	// ExitCode is the program's exit status, 128+N when signal N killed
	// it, and for a set-up error 125 (126: the program is not executable,
	// 127: not found), as a shell reports it.
	ExitCode int `json:"exitCode"`
	// Signal is the number of the signal that killed the program, 0 if it
	// exited; SignalName its name ("SIGKILL").
	Signal     int    `json:"signal,omitempty"`
	SignalName string `json:"signalName,omitempty"`
	// Killed is true when the runtime killed the sandbox (a limit, the
	// caller's context); Status says why.
	Killed bool `json:"killed,omitempty"`
	// Error is the set-up error, or what made the runtime kill the sandbox.
	Error string `json:"error,omitempty"`
	// ErrorKind and Problems are a set-up error's machine-readable form
	// (sandbox_errors.go): the kind of its first cause, and every cause
	// with the option or limit at fault and the fix.
	ErrorKind ErrorKind `json:"errorKind,omitempty"`
	Problems  []Problem `json:"problems,omitempty"`

	// WallTime runs from the program's execve to its exit.
	WallTime time.Duration `json:"-"`
	// CPUUser and CPUSystem are the CPU time of the whole sandbox (from its
	// cgroup) or of the program and the children it waited for (rusage),
	// or, when more, of the program's process tree as the runtime's last
	// poll of /proc saw it ("proc": a CPU time limit without a cgroup), as
	// CPUSource says. Either includes the runtime's own init before
	// execve (a millisecond or two).
	CPUUser   time.Duration `json:"-"`
	CPUSystem time.Duration `json:"-"`
	CPUSource string        `json:"cpuSource,omitempty"`
	// PeakMemory is the largest memory use seen, in bytes, measured by
	// PeakMemorySource: "cgroup v2 memory.peak", "cgroup v1
	// memory.max_usage_in_bytes" (the whole sandbox), or "rusage maxrss"
	// (the largest single process's resident set).
	PeakMemory       int64  `json:"peakMemory"`
	PeakMemorySource string `json:"peakMemorySource,omitempty"`
	// OOMKilled: the kernel's OOM killer killed a process of the sandbox
	// (known only with a memory cgroup).
	OOMKilled bool `json:"oomKilled,omitempty"`
	// Context switches of the program and its waited-for children.
	VoluntaryContextSwitches   int64 `json:"voluntaryContextSwitches"`
	InvoluntaryContextSwitches int64 `json:"involuntaryContextSwitches"`
	// OutputBytes counts stdout and stderr as written (kept or not) when
	// the runtime reads them (Run, or an output limit set; not when the
	// program writes to the caller's files directly); OutputTruncated is
	// true when some of it was dropped.
	OutputBytes     int64 `json:"outputBytes,omitempty"`
	OutputTruncated bool  `json:"outputTruncated,omitempty"`

	// Network is what the network allowlist let through and refused
	// (allowlist mode only).
	Network *NetworkReport `json:"network,omitempty"`

	// Limits has one entry per limit asked for.
	Limits    map[LimitName]LimitReport `json:"limits,omitempty"`
	Isolation Isolation                 `json:"isolation"`
}

type reportTimes struct {
	Wall   Seconds `json:"wallTime"`
	User   Seconds `json:"cpuUser"`
	System Seconds `json:"cpuSystem"`
}

// MarshalJSON writes the report in the contract's form.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		plain
		reportTimes
	}{plain(r), reportTimes{Seconds(r.WallTime), Seconds(r.CPUUser), Seconds(r.CPUSystem)}})
}

// UnmarshalJSON reads a report (for tools that consume them from Go).
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	var w struct {
		plain
		reportTimes
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Report(w.plain)
	r.WallTime, r.CPUUser, r.CPUSystem = time.Duration(w.Wall), time.Duration(w.User), time.Duration(w.System)
	return checkVersion(r.Version)
}

// CPUTime is user plus system CPU time.
func (r *Report) CPUTime() time.Duration { return r.CPUUser + r.CPUSystem }

// WriteIsolate writes the report as an isolate meta file ("key:value"
// lines), so that judge back-ends written for isolate read it unchanged.
// Times are seconds with 3 decimals, memory in KiB; status is RE (exited
// non-zero), SG (killed by a signal, the OOM killer included), TO (a time
// limit) or XX (set-up error), absent when the program exited 0.
func (r *Report) WriteIsolate(w io.Writer) error {
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\n", k, v) }
	secs := func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
	kv("time", secs(r.CPUTime()))
	kv("time-wall", secs(r.WallTime))
	if r.PeakMemorySource == peakRusage {
		kv("max-rss", r.PeakMemory/1024)
	} else if r.PeakMemorySource != "" {
		kv("cg-mem", r.PeakMemory/1024)
	}
	if r.OOMKilled {
		kv("cg-oom-killed", 1)
	}
	kv("csw-voluntary", r.VoluntaryContextSwitches)
	kv("csw-forced", r.InvoluntaryContextSwitches)
	if r.Signal != 0 {
		kv("exitsig", r.Signal)
	} else if r.Status != StatusSetupError {
		kv("exitcode", r.ExitCode)
	}
	if r.Killed || r.Status == StatusOOM {
		kv("killed", 1)
	}
	status, msg := "", ""
	switch r.Status {
	case StatusExited:
		status, msg = "RE", fmt.Sprintf("Exited with error status %d", r.ExitCode)
	case StatusSignaled:
		status, msg = "SG", fmt.Sprintf("Caught fatal signal %d", r.Signal)
	case StatusOOM:
		status, msg = "SG", "Memory limit exceeded"
	case StatusOutputLimit:
		status, msg = "SG", "Output limit exceeded"
	case StatusCancelled:
		status, msg = "SG", "Cancelled by the caller"
	case StatusWallTimeout:
		status, msg = "TO", "Time limit exceeded (wall clock)"
	case StatusCPUTimeout:
		status, msg = "TO", "Time limit exceeded"
	case StatusSetupError:
		status, msg = "XX", r.Error
	}
	if status != "" {
		kv("status", status)
		kv("message", strings.ReplaceAll(msg, "\n", " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// The peak memory sources.
const (
	peakCgroupV2 = "cgroup v2 memory.peak"
	peakCgroupV1 = "cgroup v1 memory.max_usage_in_bytes"
	peakRusage   = "rusage maxrss"
)

// signalName is "SIGKILL" for 9.
func signalName(sig int) string {
	if n := unix.SignalName(unix.Signal(sig)); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", sig)
}

// sortedLimitNames are the keys of m in report order.
func sortedLimitNames(m map[LimitName]LimitReport) []LimitName {
	names := make([]LimitName, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	order := func(n LimitName) int {
		for i, x := range LimitNames {
			if x == n {
				return i
			}
		}
		return math.MaxInt
	}
	sort.Slice(names, func(i, j int) bool { return order(names[i]) < order(names[j]) })
	return names
}
