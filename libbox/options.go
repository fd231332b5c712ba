package libbox

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Sizes, in bytes, for Limits and Tmpfs: 256 * libbox.MB.
const (
	KB int64 = 1 << 10
	MB int64 = 1 << 20
	GB int64 = 1 << 30
)

// Options describe a sandbox: what one program sees and may use. The zero
// value is a valid sandbox: the host's system directories read-only, a
// private /tmp, /proc and a minimal /dev, no network, an empty environment,
// no capabilities, the default seccomp profile, and no resource limits.
// Presets (presets.go) are Options values a caller adjusts before New.
//
// Options have one JSON form, the sandbox contract (docs/sandbox-contract.md):
// MarshalJSON writes it, UnmarshalJSON reads it, and `nanobox-runc sandbox
// --options FILE` accepts it. Field names below are given as their JSON
// paths in errors ("limits.memory: ...").
type Options struct {
	// ---- Filesystem

	// Rootfs, when set, is a host directory used as the sandbox's root
	// (read-only) instead of the host's system directories.
	Rootfs string
	// Mounts bind host paths into the sandbox, in order.
	Mounts []Bind
	// Tmpfs are private, empty, size-capped filesystems. One on /tmp
	// replaces the default /tmp.
	Tmpfs []Tmpfs
	// WorkDir is the program's working directory inside the sandbox;
	// "" means /tmp.
	WorkDir string

	// ---- Environment

	// Env is the program's whole environment, KEY=VALUE; nothing of the
	// caller's is passed unless listed here. (HOME is added, as in runc,
	// from the sandbox's /etc/passwd, or "/", when Env has none.)
	Env []string
	// Hostname inside the sandbox; "" means "sandbox".
	Hostname string
	// User is the uid and gid the program runs as inside the sandbox's
	// user namespace (0:0 by default: root in the sandbox, with no
	// capabilities, and the caller's own ids on the host). Umask is
	// honoured; additional gids are not supported (one id is mapped).
	User User

	// ---- Resources

	// Limits are enforced, or degraded only where AllowDegraded says so;
	// otherwise New fails naming the limit and the fix.
	Limits Limits
	// AllowDegraded lists the limits that may be enforced by a weaker
	// mechanism, or not at all, when this host cannot enforce them fully
	// (the report says which and how). DegradeNamespaces also allows the
	// namespace-less mode (Namespaces.None).
	AllowDegraded []LimitName

	// ---- Network

	// Network is none by default: a network namespace with loopback only.
	Network Network

	// ---- Security

	// Seccomp is the system call filter; the zero value is
	// SeccompDefault().
	Seccomp SeccompProfile
	// Landlock, when set, adds a Landlock policy on top of the mounts (its
	// paths are sandbox paths).
	Landlock *Landlock

	// ---- Namespaces

	Namespaces Namespaces

	// ---- Runtime

	// StateRoot is where the sandboxes' state directories live; "" means
	// DefaultStateRoot().
	StateRoot string
}

// Bind is a bind mount of a host path into the sandbox.
type Bind struct {
	// Source is the host path; a relative one is made absolute against the
	// caller's working directory by New.
	Source string `json:"source"`
	// Target is the absolute path inside the sandbox; missing directories
	// are created in the sandbox's root (not on the host).
	Target string `json:"target"`
	// ReadOnly mounts it read-only. A read-only bind does not carry the
	// mounts beneath Source along (they could be writable).
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Tmpfs is a private tmpfs at Target.
type Tmpfs struct {
	Target string `json:"target"`
	// Size caps it, in bytes; 0 means 64 MiB.
	Size int64 `json:"size,omitempty"`
	// ReadOnly makes it an empty directory nothing can be created in: a
	// way to hide, or to keep empty, a directory of a writable mount.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Limits are resource limits; a zero field asks for no limit.
type Limits struct {
	// Memory caps the sandbox's memory, in bytes (cgroup memory.max /
	// memory.limit_in_bytes, swap included).
	Memory int64
	// CPUs caps CPU bandwidth, in CPUs (1.5 = one and a half CPUs).
	CPUs float64
	// Pids caps the number of processes and threads at once.
	Pids int64
	// WallTime is the real time the program may run, from its execve.
	WallTime time.Duration
	// CPUTime is the CPU time (user + system) it may use.
	CPUTime time.Duration
	// OpenFiles caps the open file descriptors of each process
	// (RLIMIT_NOFILE).
	OpenFiles int64
	// FileSize caps the size of any file a process writes (RLIMIT_FSIZE).
	FileSize int64
	// Output caps stdout and stderr together, in bytes: beyond it the
	// output is dropped and the sandbox killed (status output-limit).
	Output int64
}

// LimitName names a limit in AllowDegraded and in the report.
type LimitName string

// The limits, by their JSON names.
const (
	LimitMemory    LimitName = "memory"
	LimitCPUs      LimitName = "cpus"
	LimitPids      LimitName = "pids"
	LimitWallTime  LimitName = "wallTime"
	LimitCPUTime   LimitName = "cpuTime"
	LimitOpenFiles LimitName = "openFiles"
	LimitFileSize  LimitName = "fileSize"
	LimitOutput    LimitName = "output"
	// DegradeNamespaces in AllowDegraded allows Namespaces.None.
	DegradeNamespaces LimitName = "namespaces"
)

// LimitNames are every limit, in report order.
var LimitNames = []LimitName{LimitMemory, LimitCPUs, LimitPids, LimitWallTime, LimitCPUTime, LimitOpenFiles, LimitFileSize, LimitOutput}

// ParseLimitName accepts a limit's JSON name or its CLI spelling
// ("wall-time" for "wallTime").
func ParseLimitName(s string) (LimitName, error) {
	norm := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	for _, n := range append(slices.Clone(LimitNames), DegradeNamespaces) {
		if strings.ToLower(string(n)) == norm {
			return n, nil
		}
	}
	return "", fmt.Errorf("unknown limit %q: use one of %s", s, joinNames(append(slices.Clone(LimitNames), DegradeNamespaces)))
}

func joinNames(names []LimitName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// requested reports whether l asks for the limit n, and its value in the
// report's unit (bytes, seconds, count or CPUs).
func (l *Limits) requested(n LimitName) (float64, bool) {
	switch n {
	case LimitMemory:
		return float64(l.Memory), l.Memory != 0
	case LimitCPUs:
		return l.CPUs, l.CPUs != 0
	case LimitPids:
		return float64(l.Pids), l.Pids != 0
	case LimitWallTime:
		return l.WallTime.Seconds(), l.WallTime != 0
	case LimitCPUTime:
		return l.CPUTime.Seconds(), l.CPUTime != 0
	case LimitOpenFiles:
		return float64(l.OpenFiles), l.OpenFiles != 0
	case LimitFileSize:
		return float64(l.FileSize), l.FileSize != 0
	case LimitOutput:
		return float64(l.Output), l.Output != 0
	}
	return 0, false
}

// limitUnit is the unit of a limit's value in the report.
func limitUnit(n LimitName) string {
	switch n {
	case LimitMemory, LimitFileSize, LimitOutput:
		return "bytes"
	case LimitWallTime, LimitCPUTime:
		return "seconds"
	case LimitCPUs:
		return "cpus"
	}
	return "count"
}

// SeccompProfile selects the sandbox's system call filter: a named profile
// or a custom one.
type SeccompProfile struct {
	// Name is "default", "strict" or "none"; "" with Custom nil means
	// "default".
	Name string
	// Custom is a filter of the caller's (Name must then be "").
	Custom *Seccomp
}

// The named seccomp profiles.
const (
	// SeccompProfileDefault is Docker's default profile for a process
	// without capabilities.
	SeccompProfileDefault = "default"
	// SeccompProfileStrict is the default profile without the system calls
	// that reach other processes or are rarely needed and often exploited
	// (see seccomp_profiles.go): the code-judge preset's.
	SeccompProfileStrict = "strict"
	// SeccompProfileNone installs no filter.
	SeccompProfileNone = "none"
)

// SeccompDefault is the default profile.
func SeccompDefault() SeccompProfile { return SeccompProfile{Name: SeccompProfileDefault} }

// SeccompStrict is the strict profile.
func SeccompStrict() SeccompProfile { return SeccompProfile{Name: SeccompProfileStrict} }

// NoSeccomp installs no filter.
func NoSeccomp() SeccompProfile { return SeccompProfile{Name: SeccompProfileNone} }

// CustomSeccomp is the caller's own filter (see specconv for OCI profiles).
func CustomSeccomp(s *Seccomp) SeccompProfile { return SeccompProfile{Custom: s} }

func (p SeccompProfile) name() string {
	switch {
	case p.Custom != nil:
		return "custom"
	case p.Name == "":
		return SeccompProfileDefault
	}
	return p.Name
}

// Namespaces tune the isolation itself.
type Namespaces struct {
	// None runs the program without namespaces: confined only by Landlock
	// (the mounts become Landlock rules on the host's paths), seccomp and
	// rlimits, for hosts without user namespaces. It needs
	// DegradeNamespaces in AllowDegraded, and the report says degraded.
	None bool `json:"none,omitempty"`
	// HostUID and HostGID are the host ids the sandbox's user maps to;
	// nil means the caller's own. Only root may choose them.
	HostUID *uint32 `json:"hostUID,omitempty"`
	HostGID *uint32 `json:"hostGID,omitempty"`
}

func (o *Options) allowsDegraded(n LimitName) bool { return slices.Contains(o.AllowDegraded, n) }

// Validate checks the options' form, without looking at the host (New
// does both). Errors name the field by its JSON path and say what to do.
func (o *Options) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if o.Rootfs != "" && !filepath.IsAbs(o.Rootfs) {
		add(fieldError("rootfs", "%q must be an absolute path", o.Rootfs))
	}
	for i, b := range o.Mounts {
		f := fmt.Sprintf("mounts[%d]", i)
		if b.Source == "" {
			add(fieldError(f+".source", "is empty: give the host path to mount"))
		}
		add(checkTarget(f+".target", b.Target))
	}
	for i, t := range o.Tmpfs {
		f := fmt.Sprintf("tmpfs[%d]", i)
		add(checkTarget(f+".target", t.Target))
		if t.Size < 0 {
			add(fieldError(f+".size", "must not be negative (got %d)", t.Size))
		}
	}
	if o.WorkDir != "" && (!filepath.IsAbs(o.WorkDir) || strings.IndexByte(o.WorkDir, 0) >= 0) {
		add(fieldError("workDir", "%q must be an absolute path inside the sandbox", o.WorkDir))
	}
	for i, kv := range o.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
			add(fieldError(fmt.Sprintf("env[%d]", i), "%q must be KEY=VALUE", kv))
		}
	}
	if len(o.Hostname) > 64 || strings.ContainsAny(o.Hostname, "/ \x00") {
		add(fieldError("hostname", "%q is not a valid hostname (at most 64 characters, no spaces or slashes)", o.Hostname))
	}
	if len(o.User.AdditionalGids) > 0 {
		add(fieldError("user.additionalGids", "are not supported: a sandbox maps one uid and one gid"))
	}
	add(o.Limits.validate())
	for i, n := range o.AllowDegraded {
		if _, err := ParseLimitName(string(n)); err != nil {
			add(fieldError(fmt.Sprintf("allowDegraded[%d]", i), "%v", err))
		}
	}
	add(o.Network.Validate())
	switch p := o.Seccomp; {
	case p.Custom != nil && p.Name != "":
		add(fieldError("seccomp", "give a profile name or a custom filter, not both"))
	case p.Custom != nil:
		if err := p.Custom.Validate(); err != nil {
			add(fieldError("seccomp.profile", "%v", err))
		}
	case p.Name != "" && p.Name != SeccompProfileDefault && p.Name != SeccompProfileStrict && p.Name != SeccompProfileNone:
		add(fieldError("seccomp", "unknown profile %q: use default, strict, none or a custom filter", p.Name))
	}
	if o.Landlock != nil {
		if err := o.Landlock.Validate(); err != nil {
			add(fieldError("landlock", "%v", err))
		}
	}
	if o.Namespaces.None {
		if !o.allowsDegraded(DegradeNamespaces) {
			add(fieldError("namespaces.none", "runs the program without namespaces, a weaker sandbox: add %q to allowDegraded to allow it", DegradeNamespaces))
		}
		if o.Rootfs != "" {
			add(fieldError("rootfs", "needs namespaces (a mount namespace): drop namespaces.none"))
		}
		switch o.Network.mode() {
		case NetworkNone:
			add(fieldError("network", "none needs a network namespace: with namespaces.none use network host"))
		case NetworkAllowlist:
			add(fieldError("network", "allowlist needs a network namespace: drop namespaces.none"))
		}
	}
	if o.StateRoot != "" && !filepath.IsAbs(o.StateRoot) {
		add(fieldError("stateRoot", "%q must be an absolute path", o.StateRoot))
	}
	if len(errs) > 0 {
		return fmt.Errorf("sandbox options: %w", oneLine(errs))
	}
	return nil
}

// oneLine joins errors on one line ("a; b"), keeping them for errors.Is.
func oneLine(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return joinedError(errs)
}

type joinedError []error

func (e joinedError) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (e joinedError) Unwrap() []error { return e }

func checkTarget(field, p string) error {
	switch {
	case p == "":
		return fieldError(field, "is empty: give an absolute path inside the sandbox")
	case !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0:
		return fieldError(field, "%q must be an absolute path inside the sandbox", p)
	case filepath.Clean(p) == "/":
		return fieldError(field, "cannot be / (use rootfs for a root of your own)")
	}
	for _, top := range []string{"/proc", "/dev"} {
		if c := filepath.Clean(p); c == top || strings.HasPrefix(c, top+"/") {
			return fieldError(field, "%q is inside %s, which the sandbox sets up itself", p, top)
		}
	}
	return nil
}

func (l *Limits) validate() error {
	var errs []error
	neg := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fieldError("limits."+name, "must not be negative (got %d)", v))
		}
	}
	neg("memory", l.Memory)
	neg("pids", l.Pids)
	neg("openFiles", l.OpenFiles)
	neg("fileSize", l.FileSize)
	neg("output", l.Output)
	if l.WallTime < 0 {
		errs = append(errs, fieldError("limits.wallTime", "must not be negative (got %s)", l.WallTime))
	}
	if l.CPUTime < 0 {
		errs = append(errs, fieldError("limits.cpuTime", "must not be negative (got %s)", l.CPUTime))
	}
	if l.CPUs < 0 || math.IsNaN(l.CPUs) || math.IsInf(l.CPUs, 0) {
		errs = append(errs, fieldError("limits.cpus", "must be a positive number of CPUs (got %v)", l.CPUs))
	} else if l.CPUs != 0 && l.CPUs < 0.01 {
		errs = append(errs, fieldError("limits.cpus", "%v is below the smallest quota the kernel takes (0.01)", l.CPUs))
	}
	if l.Memory > 0 && l.Memory < 4*MB {
		errs = append(errs, fieldError("limits.memory", "%d bytes is too small to start a program: give at least 4 MiB", l.Memory))
	}
	if l.CPUTime != 0 && l.CPUTime < time.Millisecond {
		errs = append(errs, fieldError("limits.cpuTime", "%s is below a millisecond", l.CPUTime))
	}
	if l.WallTime != 0 && l.WallTime < time.Millisecond {
		errs = append(errs, fieldError("limits.wallTime", "%s is below a millisecond", l.WallTime))
	}
	if len(errs) == 0 {
		return nil
	}
	return oneLine(errs)
}
