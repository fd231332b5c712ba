package libbox

// Resource control through github.com/opencontainers/cgroups, the library
// runc uses: its fs manager on cgroup v1 and hybrid hosts, fs2 on cgroup v2.
// The device rules (the v1 devices cgroup, an eBPF program on v2, a systemd
// unit's properties) are internal/devcg's, which the library calls through
// the hooks set below: the library's own devices package would bring in an
// eBPF library (and with it Go parsers, compressors and an ELF reader) whose
// package initialisation every process of the runtime paid for. This file
// decides where a container's cgroup goes, whether it may run without one,
// and turns the library's errors into ones that say what to do.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nanobox-sandbox/nanobox-runc/internal/devcg"
	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/cgroups/systemd"
	"golang.org/x/sys/unix"
)

func init() {
	cgroups.DevicesSetV1 = devcg.SetV1
	cgroups.DevicesSetV2 = devcg.SetV2
	systemd.GenerateDeviceProps = devcg.SystemdProperties
}

// DefaultDeviceRules are allowed in every rootful container after the
// config's own rules, as runc does: a config whose only rule is "deny all"
// (podman's) still gets a working /dev. mknod is allowed for every device
// (creating a node grants no access to it); read and write only for the
// default device nodes, the pty slaves and /dev/ptmx.
var DefaultDeviceRules = []devices.Rule{
	{Type: devices.CharDevice, Major: devices.Wildcard, Minor: devices.Wildcard, Permissions: "m", Allow: true},
	{Type: devices.BlockDevice, Major: devices.Wildcard, Minor: devices.Wildcard, Permissions: "m", Allow: true},
	{Type: devices.CharDevice, Major: 1, Minor: 3, Permissions: "rwm", Allow: true},                  // /dev/null
	{Type: devices.CharDevice, Major: 1, Minor: 5, Permissions: "rwm", Allow: true},                  // /dev/zero
	{Type: devices.CharDevice, Major: 1, Minor: 7, Permissions: "rwm", Allow: true},                  // /dev/full
	{Type: devices.CharDevice, Major: 1, Minor: 8, Permissions: "rwm", Allow: true},                  // /dev/random
	{Type: devices.CharDevice, Major: 1, Minor: 9, Permissions: "rwm", Allow: true},                  // /dev/urandom
	{Type: devices.CharDevice, Major: 5, Minor: 0, Permissions: "rwm", Allow: true},                  // /dev/tty
	{Type: devices.CharDevice, Major: 5, Minor: 2, Permissions: "rwm", Allow: true},                  // /dev/ptmx
	{Type: devices.CharDevice, Major: 136, Minor: devices.Wildcard, Permissions: "rwm", Allow: true}, // /dev/pts/*
}

// cgroupSpec is the library's description of the container's cgroup: its
// place (Path, or Name beside the caller's own cgroup) and the resources to
// set. The config's resources are copied, never modified.
func cgroupSpec(id string, cfg *Config, rootless bool) (*cgroups.Cgroup, error) {
	res := &cgroups.Resources{}
	if cfg.Resources != nil {
		r := *cfg.Resources
		res = &r
	}
	res.Freezer = cgroups.Undefined
	forHost(res)
	if rootless {
		// An unprivileged runtime can neither write the v1 devices
		// cgroup nor load the v2 eBPF filter; the user namespace
		// already keeps device nodes from being created.
		res.Devices = nil
		res.SkipDevices = true
	} else {
		rules := make([]*devices.Rule, 0, len(res.Devices)+len(DefaultDeviceRules))
		rules = append(rules, res.Devices...)
		for i := range DefaultDeviceRules {
			r := DefaultDeviceRules[i]
			rules = append(rules, &r)
		}
		res.Devices = rules
	}
	cg := &cgroups.Cgroup{Resources: res, Rootless: rootless}
	if cfg.CgroupsPath == "" {
		// Beside the caller's own cgroup on v2 (inside its delegated
		// subtree when rootless), below it on v1: as runc does.
		cg.Name = id
	} else {
		// The library cleans the path ("../" cannot climb out) and
		// takes a relative one below the caller's own cgroup (on v2,
		// below its parent), as runc does. That includes the systemd
		// form "slice:prefix:name", which runc without --systemd-cgroup
		// uses as one relative cgroup name: containerd's CRI plugin
		// makes it from any ".slice" parent, even with cgroupfs.
		cg.Path = cfg.CgroupsPath
	}
	return cg, nil
}

// forHost adapts resources (a copy) to the host's cgroup version: on v2,
// cpu shares become cpu.weight, a conversion the library leaves to its
// caller.
func forHost(r *cgroups.Resources) {
	if r.CpuShares != 0 && cgroups.IsCgroup2UnifiedMode() {
		r.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(r.CpuShares)
	}
}

// requiredControllers lists the controllers the resources need, by their
// cgroup v2 names ("io" is "blkio" on v1), sorted. Device rules and the
// freezer are not limits: they are left out.
func requiredControllers(r *cgroups.Resources) []string {
	if r == nil {
		return nil
	}
	need := map[string]bool{}
	if r.Memory != 0 || r.MemoryReservation != 0 || r.MemorySwap != 0 || r.OomKillDisable || r.MemorySwappiness != nil {
		need["memory"] = true
	}
	if r.CpuShares != 0 || r.CpuQuota != 0 || r.CpuBurst != nil || r.CpuPeriod != 0 ||
		r.CpuRtRuntime != 0 || r.CpuRtPeriod != 0 || r.CPUIdle != nil || r.CpuWeight != 0 {
		need["cpu"] = true
	}
	if r.CpusetCpus != "" || r.CpusetMems != "" {
		need["cpuset"] = true
	}
	if r.PidsLimit != nil {
		need["pids"] = true
	}
	if r.BlkioWeight != 0 || r.BlkioLeafWeight != 0 || len(r.BlkioWeightDevice) > 0 ||
		len(r.BlkioThrottleReadBpsDevice) > 0 || len(r.BlkioThrottleWriteBpsDevice) > 0 ||
		len(r.BlkioThrottleReadIOPSDevice) > 0 || len(r.BlkioThrottleWriteIOPSDevice) > 0 {
		need["io"] = true
	}
	if len(r.HugetlbLimit) > 0 {
		need["hugetlb"] = true
	}
	if len(r.Rdma) > 0 {
		need["rdma"] = true
	}
	if r.NetClsClassid != 0 {
		need["net_cls"] = true
	}
	if len(r.NetPrioIfpriomap) > 0 {
		need["net_prio"] = true
	}
	for k := range r.Unified {
		if c, _, ok := strings.Cut(k, "."); ok && c != "cgroup" {
			need[c] = true
		}
	}
	out := make([]string, 0, len(need))
	for c := range need {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// HasLimits reports whether r asks for any resource limit (device rules
// alone are not limits).
func HasLimits(r *cgroups.Resources) bool { return len(requiredControllers(r)) > 0 }

// v1Name is the cgroup v1 name of a controller.
func v1Name(c string) string {
	if c == "io" {
		return "blkio"
	}
	return c
}

// missingControllers returns the controllers in need that the container's
// cgroup cannot use.
func missingControllers(m cgroups.Manager, need []string) ([]string, error) {
	var missing []string
	if cgroups.IsCgroup2UnifiedMode() {
		data, err := cgroups.ReadFile(m.Path(""), "cgroup.controllers")
		if err != nil {
			return nil, err
		}
		have := strings.Fields(data)
		for _, c := range need {
			if !slices.Contains(have, c) {
				missing = append(missing, c)
			}
		}
		return missing, nil
	}
	for _, c := range need {
		if m.Path(v1Name(c)) == "" {
			missing = append(missing, v1Name(c))
		}
	}
	return missing, nil
}

// cgroupHandle is a container's cgroup, reopened from its persisted paths
// or made by applyCgroup (which also fills in what join needs).
type cgroupHandle struct {
	m cgroups.Manager
	// Set by newCgroup, for join.
	cg       *cgroups.Cgroup
	need     []string
	rootless bool
	// late are the limits left for setLate: pids.max, written once init
	// is done setting the container up (see lateResources).
	late *cgroups.Resources
}

// lateResources splits r into the limits written when the cgroup is made,
// before init exists, and those written only once init has set the
// container up, before its program can run (setLate): pids.max. init is
// a Go program, whose runtime starts a few threads, each a task that
// pids.max counts: a limit of a few tasks, written before, would make
// its setup fail, or kill it. r is not modified; late is nil when there
// is nothing to write late.
func lateResources(r *cgroups.Resources) (early, late *cgroups.Resources) {
	if r.PidsLimit == nil {
		return r, nil
	}
	e := *r
	e.PidsLimit = nil
	return &e, &cgroups.Resources{PidsLimit: r.PidsLimit, SkipDevices: true}
}

// setLate writes the limits lateResources left out; init must be done
// with its setup, and its program not started yet. A nil h (no cgroup)
// has nothing to write.
func (h *cgroupHandle) setLate() error {
	if h == nil || h.late == nil {
		return nil
	}
	if err := h.m.Set(h.late); err != nil {
		return fmt.Errorf("set cgroup limits: %w", err)
	}
	h.late = nil
	return nil
}

// applyCgroup creates the container's cgroup, moves pid (init) into it and
// sets the limits, but those for setLate; pid -1 creates it and sets them
// with no process in it yet (for init to be born in it, see
// cgroupBeforeInit). It returns
// nil and no error when the container runs without a cgroup: rootless, no
// cgroup it may create, and no limits asked for. On error the returned
// handle, when not nil, is for the caller to destroy once pid is dead (a
// cgroup cannot be removed while pid is in it).
func applyCgroup(id string, cfg *Config, rootless bool, pid int, log Logger) (*cgroupHandle, error) {
	cg, err := cgroupSpec(id, cfg, rootless)
	if err != nil {
		return nil, err
	}
	return applyCgroupSpec(id, cg, cfg.V1Hierarchies, rootless, pid, log)
}

// applyCgroupSpec is applyCgroup with the cgroup's spec (cgroupSpec)
// already made; only are Config.V1Hierarchies.
func applyCgroupSpec(id string, cg *cgroups.Cgroup, only []string, rootless bool, pid int, log Logger) (*cgroupHandle, error) {
	need := requiredControllers(cg.Resources)
	if len(cg.Resources.Unified) > 0 && !cgroups.IsCgroup2UnifiedMode() {
		return nil, errors.New("invalid configuration: linux.resources.unified needs a cgroup v2 host, and this one uses cgroup v1 (or the hybrid layout): set the limits through the v1 fields instead")
	}
	m, err := newCgroupManager(cg, only)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	early, late := lateResources(cg.Resources)
	h := &cgroupHandle{m: m, cg: cg, need: need, rootless: rootless, late: late}
	if err := checkCgroupUsable(m); err != nil {
		return nil, fmt.Errorf("cgroup of container %s: %w", id, err)
	}
	joined, err := h.join(id, pid)
	if joined == nil {
		return nil, err
	}
	if err != nil {
		return h, err
	}
	// Every controller the limits need is checked now, the late ones'
	// too: a missing one fails before init is started.
	return h, h.set(early, need)
}

// v1Subsystems are the hierarchies the library's cgroup v1 manager
// (cgroups/fs) places a container in, by the names its paths map uses, in
// its order; the cgroup v2 mount of a hybrid host ("") is added at run
// time. TestNewCgroupManager checks the paths made from it against the
// library's own.
var v1Subsystems = []string{
	"cpuset", "devices", "memory", "cpu", "cpuacct", "pids", "blkio", "hugetlb",
	"net_cls", "net_prio", "perf_event", "freezer", "rdma", "name=systemd", "misc",
}

// newCgroupManager is manager.New(cg) with, on a cgroup v1 or hybrid host
// and a relative cgroup (below the caller's own, the common case), the
// per-hierarchy paths worked out here from one read of /proc/self/cgroup:
// the library reads and parses it again for each of its ~16 hierarchies
// (cgroups.GetOwnCgroupPath), which was a fifth of the runtime's CPU of a
// run. The paths are the ones the library makes (its fs initPaths): the
// own cgroup of each hierarchy, relative to the root of the first mount of
// it (cgroups.FindCgroupMountpointAndRoot, whose mountinfo the library
// caches), joined with the cleaned inner path; on a hybrid host the v2
// mount gets the inner path below the mount itself, as the library does.
// A hierarchy that is not there is skipped, except devices when device
// rules are enforced (a missing devices cgroup is an error, for security,
// as in the library). Absolute paths, systemd and cgroup v2 are left to
// the library, which reads /proc/self/cgroup at most once for them.
func newCgroupManager(cg *cgroups.Cgroup, only []string) (cgroups.Manager, error) {
	if cg.Systemd || cgroups.IsCgroup2UnifiedMode() {
		return manager.New(cg)
	}
	inner, err := innerCgroupPath(cg)
	if err != nil || filepath.IsAbs(inner) {
		return manager.New(cg)
	}
	own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	names := v1Subsystems
	if only != nil {
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(only, n) })
	}
	if cgroups.IsCgroup2HybridMode() {
		names = append(slices.Clip(names), "")
	}
	paths := make(map[string]string, len(names))
	for _, name := range names {
		p, err := v1SubsysPath(own, inner, name)
		if err != nil {
			if cgroups.IsNotFound(err) && (cg.SkipDevices || name != "devices") {
				continue
			}
			return nil, err
		}
		paths[name] = p
	}
	return manager.NewWithPaths(cg, paths)
}

// v1SubsysPath is the library's subsysPath for a relative inner path, with
// the caller's own cgroups (/proc/self/cgroup, parsed) given.
func v1SubsysPath(own map[string]string, inner, name string) (string, error) {
	cur, ok := own[name]
	if !ok {
		cur, ok = own[cgroups.CgroupNamePrefix+name]
	}
	if !ok {
		return "", cgroups.NewNotFoundError(name)
	}
	if name == "" {
		return filepath.Join("/sys/fs/cgroup/unified", inner), nil
	}
	mnt, root, err := cgroups.FindCgroupMountpointAndRoot("", name)
	if err != nil {
		return "", err
	}
	// In a nested container without a cgroup namespace, the own path is
	// the host's, below the mount's root.
	rel, err := filepath.Rel(root, cur)
	if err != nil {
		return "", err
	}
	return filepath.Join(mnt, rel, inner), nil
}

// innerCgroupPath is the library's path of the cgroup below a mount
// (cgroups/internal/path.Inner): Path, or Parent/Name, cleaned so that a
// relative one cannot climb above its starting point.
func innerCgroupPath(c *cgroups.Cgroup) (string, error) {
	if (c.Name != "" || c.Parent != "") && c.Path != "" {
		return "", errors.New("cgroup: either Path or Name and Parent should be used")
	}
	if p := cleanCgroupPath(c.Path); p != "" {
		return p, nil
	}
	return filepath.Join(cleanCgroupPath(c.Parent), cleanCgroupPath(c.Name)), nil
}

func cleanCgroupPath(p string) string {
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	p, _ = filepath.Rel("/", filepath.Clean("/"+p))
	return p
}

// join creates the cgroup if it does not exist yet and moves pid into it
// (-1: none). It returns h, or nil when the container runs without a
// cgroup (rootless, the cgroup cannot be made or joined, and no limits
// need it), or h and an error.
func (h *cgroupHandle) join(id string, pid int) (*cgroupHandle, error) {
	err := h.m.Apply(pid)
	if err == nil {
		if h.rootless && !cgroups.IsCgroup2UnifiedMode() {
			return h.keepExisting(id)
		}
		return h, nil
	}
	if !h.rootless || !(errors.Is(err, cgroups.ErrRootless) || isPermissionError(err)) {
		return h, fmt.Errorf("create cgroup for container %s: %w", id, err)
	}
	if h.cg.Path != "" {
		// An explicit cgroupsPath is a cgroup asked for: as runc (its
		// rootless manager ignores errors only without one).
		return h, fmt.Errorf("unable to apply cgroup configuration of container %s: %w: an unprivileged runtime may only use a cgroupsPath it may create (inside a subtree delegated to it); leave linux.cgroupsPath out to run without a cgroup", id, err)
	}
	if len(h.need) > 0 {
		return h, rootlessCgroupError(h.need, h.m, h.cg, err)
	}
	// No cgroup, and none needed: run without one. (The manager keeps
	// paths it never created, e.g. the skipped devices cgroup, so none of
	// them is kept either.)
	_ = h.m.Destroy()
	return nil, nil
}

// keepExisting drops from the manager the cgroup v1 (and hybrid cgroup2)
// paths that an unprivileged runtime's Apply did not make: the devices
// cgroup it skips, a hierarchy it may not write. Kept, they would be
// stored in the state, and exec would fail to join them, ps would list
// nothing and delete of a paused container would not thaw it (the
// library's Exists and GetAllPids look at the devices path only). None
// left is no cgroup, or the error when limits need one.
func (h *cgroupHandle) keepExisting(id string) (*cgroupHandle, error) {
	all := h.m.GetPaths()
	existing := make(map[string]string, len(all))
	for name, p := range all {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			existing[name] = p
		}
	}
	if len(existing) == len(all) {
		return h, nil
	}
	if len(existing) == 0 {
		if len(h.need) > 0 {
			return h, rootlessCgroupError(h.need, h.m, h.cg, errors.New("no cgroup directory was made"))
		}
		return nil, nil
	}
	m, err := manager.NewWithPaths(h.cg, existing)
	if err != nil {
		return h, fmt.Errorf("cgroup of container %s: %w", id, err)
	}
	h.m = m
	return h, nil
}

// bornCgroup is the container's cgroup made, with its limits, before
// init's stage exists, for the stage to start in it or join it while it is
// still single-threaded, so that init is born there: no process is moved
// between cgroups by pid afterwards (a write to cgroup.procs, which takes
// the kernel's global cgroup_threadgroup_rwsem for writing and waits out
// an RCU grace period: 10 ms and more a move), and init never runs outside
// the container's limits (pids.max comes later: see lateResources).
type bornCgroup struct {
	h *cgroupHandle
	// dir is the cgroup2 directory, open, for clone3 to start the stage in
	// (CLONE_INTO_CGROUP): the container's cgroup on a cgroup v2 host, its
	// cgroup in the cgroup2 mount of a hybrid one.
	dir *os.File
	// tasks are the "tasks" files of its cgroup v1 hierarchies, open for
	// writing, for the stage to join (nsenter's cgroupfd).
	tasks []nsenterCgroup
}

// nsenterCgroup is one v1 tasks file for the stage.
type nsenterCgroup struct {
	f    *os.File
	path string
}

// closeFiles closes the files b opened: once the stage has started, they
// are its business.
func (b *bornCgroup) closeFiles() {
	if b.dir != nil {
		b.dir.Close()
	}
	for _, t := range b.tasks {
		t.f.Close()
	}
	b.dir, b.tasks = nil, nil
}

// cgroupBeforeInit makes the container's cgroup for init to be born in
// (see bornCgroup). It applies unless the container's init would have to be
// moved anyway: rootless on a cgroup v1 or hybrid host (where a cgroup it
// may create is the exception, and a refused one is not an error), or a
// systemd-managed cgroup on one (a unit is started with its process).
//
// It returns ok false when it does not apply. Else the cgroup (b.h nil:
// the container runs without one), with its files for the stage for the
// caller to close; on error, a cgroup whose handle, when not nil, is for
// the caller to destroy, as applyCgroup's.
func cgroupBeforeInit(id string, cfg *Config, rootless bool, log Logger) (b *bornCgroup, ok bool, err error) {
	v2 := cgroups.IsCgroup2UnifiedMode()
	if !v2 && rootless {
		return nil, false, nil
	}
	cg, err := cgroupSpec(id, cfg, rootless)
	if err != nil {
		return nil, true, err
	}
	if !v2 && cg.Systemd {
		return nil, false, nil
	}
	b = &bornCgroup{}
	b.h, err = applyCgroupSpec(id, cg, cfg.V1Hierarchies, rootless, -1, log)
	if err != nil || b.h == nil {
		return b, true, err
	}
	if err := b.h.openForStage(b); err != nil {
		return b, true, fmt.Errorf("open cgroup for container %s: %w", id, err)
	}
	return b, true, nil
}

// openForStage opens, into b, what a stage needs to be born in h (see
// bornCgroup): the cgroup2 directory and the v1 tasks files. On error
// nothing is left open.
func (h *cgroupHandle) openForStage(b *bornCgroup) error {
	paths := h.m.GetPaths()
	seen := make(map[string]bool, len(paths))
	for _, ctrl := range slices.Sorted(maps.Keys(paths)) {
		p := paths[ctrl]
		if p == "" || seen[p] {
			continue
		}
		// Hierarchies mounted together (cpu,cpuacct) share a directory.
		seen[p] = true
		var err error
		if ctrl == "" {
			b.dir, err = openPlain(p, unix.O_RDONLY|unix.O_DIRECTORY)
		} else {
			var f *os.File
			tasks := filepath.Join(p, "tasks")
			if f, err = openPlain(tasks, unix.O_WRONLY); err == nil {
				b.tasks = append(b.tasks, nsenterCgroup{f: f, path: tasks})
			}
		}
		if err != nil {
			b.closeFiles()
			return err
		}
	}
	return nil
}

// openPlain opens path close-on-exec, as os.OpenFile does, but keeps the
// file out of the Go poller: cgroup files are pollable, and os.OpenFile
// registers each with epoll and makes it non-blocking (three more syscalls
// at open, one at close) for files that are only handed to the nsenter
// stage or written once.
func openPlain(path string, flags int) (*os.File, error) {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// checkCgroupUsable looks at the container's cgroup before init joins it.
// A frozen one (frozen itself, or by a frozen ancestor, which freezes a new
// child too) is refused: init would be frozen in it, in D state, and
// create would never return. One that already holds processes is refused
// too, as runc has done since 1.2 (1.1 warned): they would share the
// container's limits, and kill --all and delete --force would kill them.
// The error texts keep runc's ("container's cgroup is not empty",
// "container's cgroup unexpectedly frozen"): callers match them.
func checkCgroupUsable(m cgroups.Manager) error {
	paths := m.GetPaths()
	var pids []int
	for ctrl, p := range paths {
		if p == "" {
			continue
		}
		// The cgroup v2 tree ("" on v2, and on hybrid hosts the
		// cgroup2 mount the container also joins), and the v1 freezer.
		if ctrl == "" || ctrl == "freezer" {
			frozen, at, err := effectivelyFrozen(p, ctrl == "freezer")
			if err != nil {
				return err
			}
			if frozen {
				what, thaw := "it is frozen", "echo 0 > "+filepath.Join(at, "cgroup.freeze")
				if at != p {
					what = at + " is frozen, and so would it be"
				}
				if ctrl == "freezer" {
					thaw = "echo THAWED > " + filepath.Join(at, "freezer.state")
				}
				return fmt.Errorf("container's cgroup unexpectedly frozen: cgroup %s cannot hold a container: %s (thaw it: %s, or use another cgroupsPath)", p, what, thaw)
			}
		}
		if !cgroups.PathExists(p) {
			continue
		}
		more, err := cgroups.GetAllPids(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("list the processes of cgroup %s: %w", p, err)
		}
		for _, pid := range more {
			if !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	if len(pids) > 0 {
		sort.Ints(pids)
		return fmt.Errorf("container's cgroup is not empty: %d process(es) found (%s): give the container a cgroupsPath of its own, or stop those processes",
			len(pids), strings.Trim(fmt.Sprint(pids), "[]"))
	}
	return nil
}

// effectivelyFrozen reports whether a new or existing cgroup at path would
// hold its processes frozen, from path or its nearest existing ancestor
// (the one whose state a new child inherits): cgroup.events "frozen 1" on
// the v2 tree, freezer.state FROZEN or FREEZING on the v1 freezer.
func effectivelyFrozen(path string, v1 bool) (bool, string, error) {
	for p := path; ; {
		if cgroups.PathExists(p) {
			if v1 {
				st, err := cgroups.ReadFile(p, "freezer.state")
				if err != nil {
					return false, p, ignoreMissing(err)
				}
				st = strings.TrimSpace(st)
				return st == "FROZEN" || st == "FREEZING", p, nil
			}
			ev, err := cgroups.ReadFile(p, "cgroup.events")
			if err != nil {
				// The root cgroup has no cgroup.events: it cannot be frozen.
				return false, p, ignoreMissing(err)
			}
			for _, l := range strings.Split(ev, "\n") {
				if l == "frozen 1" {
					return true, p, nil
				}
			}
			return false, p, nil
		}
		parent := filepath.Dir(p)
		if parent == p || !strings.HasPrefix(parent, "/sys/fs/cgroup") {
			return false, p, nil
		}
		p = parent
	}
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENODEV) {
		return nil
	}
	return err
}

// set checks that every controller the limits need is usable, then writes
// the limits.
func (h *cgroupHandle) set(r *cgroups.Resources, need []string) error {
	missing, err := missingControllers(h.m, need)
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	if len(missing) > 0 {
		return controllersError(missing, h.m)
	}
	if err := h.m.Set(r); err != nil {
		return fmt.Errorf("set cgroup limits: %w", err)
	}
	return nil
}

func controllersError(missing []string, m cgroups.Manager) error {
	list := strings.Join(missing, ", ")
	if cgroups.IsCgroup2UnifiedMode() {
		dir := m.Path("")
		return fmt.Errorf("the resource limits need the cgroup v2 controller(s) %s, which are not enabled for %s: enable them in %s/cgroup.subtree_control (for an unprivileged user, that subtree must be delegated with them, e.g. systemd's Delegate=yes)",
			list, dir, filepath.Dir(dir))
	}
	return fmt.Errorf("the resource limits need the cgroup v1 controller(s) %s, which this host does not mount under /sys/fs/cgroup: remove those limits or run on a host that has them", list)
}

// rootlessCgroupError explains why an unprivileged caller's limits cannot
// be enforced, and what would make them work.
func rootlessCgroupError(need []string, m cgroups.Manager, cg *cgroups.Cgroup, cause error) error {
	// runc's words first ("cannot set pids limit: container could not
	// join or create cgroup"), which its tests and callers match.
	what := fmt.Sprintf("cannot set %s limit: container could not join or create cgroup: the resource limits in linux.resources (%s) need a cgroup", need[0], strings.Join(need, ", "))
	todo := "run as root, run inside a cgroup v2 subtree delegated to uid " + fmt.Sprint(os.Geteuid()) +
		" (e.g. systemd-run --user --scope -p Delegate=yes ...), or remove the limits"
	if !cgroups.IsCgroup2UnifiedMode() {
		return fmt.Errorf("%s, and an unprivileged user cannot have one on this host: it uses cgroup v1 (or the hybrid layout), which cannot be delegated; %s", what, todo)
	}
	// The library's own wording around the cause is about its internals;
	// the failed mkdir or write says it all.
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe
	}
	dir := m.Path("")
	if cg.Path != "" {
		todo = "set cgroupsPath to a path inside a subtree delegated to you, or leave it empty to use the one you run in; or " + todo
	}
	return fmt.Errorf("%s, and uid %d may not create %s (%w): no delegated cgroup v2 subtree; %s", what, os.Geteuid(), dir, cause, todo)
}

func isPermissionError(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, unix.EROFS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// openCgroup reopens a container's cgroup from the paths stored in its
// state; nil when it has none.
func openCgroup(id string, cfg *Config, rootless bool, paths map[string]string) *cgroupHandle {
	if len(paths) == 0 {
		return nil
	}
	cg, err := cgroupSpec(id, cfg, rootless)
	if err != nil {
		return nil
	}
	// The paths are known: no Name/Path needed, and none may conflict.
	cg.Name, cg.Path = "", ""
	m, err := manager.NewWithPaths(cg, paths)
	if err != nil {
		return nil
	}
	return &cgroupHandle{m: m}
}

// paths are what the state stores to reopen the cgroup.
func (h *cgroupHandle) paths() map[string]string {
	if h == nil {
		return nil
	}
	return h.m.GetPaths()
}

func (h *cgroupHandle) frozen() bool {
	st, err := h.m.GetFreezerState()
	return err == nil && st == cgroups.Frozen
}

func (h *cgroupHandle) freeze(state cgroups.FreezerState) error {
	return h.m.Freeze(state)
}

// pids returns the host pids of every process in the cgroup and below,
// read from the devices hierarchy as the library does, or from another
// one where the container has no devices cgroup (an unprivileged
// runtime's on cgroup v1: keepExisting dropped it). On cgroup v1 every
// hierarchy holds all of the container's processes. No stat on the
// common path: a devices path kept is one that was made.
func (h *cgroupHandle) pids() ([]int, error) {
	if cgroups.IsCgroup2UnifiedMode() || h.m.Path("devices") != "" {
		return h.m.GetAllPids()
	}
	paths := h.m.GetPaths()
	names := slices.Sorted(maps.Keys(paths))
	for _, name := range names {
		if name == "" || paths[name] == "" {
			continue
		}
		if _, err := os.Stat(paths[name]); err == nil {
			return cgroups.GetAllPids(paths[name])
		}
	}
	return h.m.GetAllPids()
}

// signal sends sig to every process in the cgroup. SIGKILL goes through
// cgroup.kill where the kernel has it (5.14+; on hybrid hosts through the
// cgroup2 mount the container also joined), which cannot miss a process
// forked meanwhile. Otherwise the cgroup is frozen while the pids are read
// and signalled, so none escapes by forking (as runc does); a paused
// container stays paused.
func (h *cgroupHandle) signal(sig unix.Signal) error {
	wasFrozen := h.frozen()
	if sig == unix.SIGKILL {
		if p := h.m.Path(""); p != "" {
			err := cgroups.WriteFile(p, "cgroup.kill", "1")
			if err == nil {
				if wasFrozen {
					// On a hybrid host the v1 freezer holds the
					// killed tasks until it thaws.
					_ = h.m.Freeze(cgroups.Thawed)
				}
				return nil
			}
			if !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("write cgroup.kill: %w", err)
			}
		}
	}
	frozeNow := false
	if !wasFrozen {
		frozeNow = h.m.Freeze(cgroups.Frozen) == nil
	}
	pids, err := h.pids()
	if err == nil {
		for _, pid := range pids {
			_ = unix.Kill(pid, sig)
		}
	}
	// A cgroup v1 freezer holds even killed tasks until it thaws.
	if frozeNow || (wasFrozen && sig == unix.SIGKILL) {
		_ = h.m.Freeze(cgroups.Thawed)
	}
	if err != nil {
		return fmt.Errorf("list processes of cgroup: %w", err)
	}
	return nil
}

// destroy kills whatever is left in the cgroup and removes it.
func (h *cgroupHandle) destroy() error {
	if !h.anyExists() {
		return nil
	}
	if pids, err := h.pids(); err == nil && len(pids) > 0 {
		_ = h.signal(unix.SIGKILL)
	} else if h.frozen() {
		_ = h.m.Freeze(cgroups.Thawed)
	}
	// RemovePaths retries while the kernel finishes reaping the tasks.
	if err := h.m.Destroy(); err != nil {
		return fmt.Errorf("remove cgroup: %w", err)
	}
	return nil
}

func (h *cgroupHandle) destroyBestEffort() { _ = h.destroy() }

// anyExists: a directory of the cgroup exists in some hierarchy. (The
// manager's Exists looks at the devices hierarchy only, which a create
// that failed in an earlier one, cpuset say, never made.)
func (h *cgroupHandle) anyExists() bool {
	for _, p := range h.m.GetPaths() {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func (h *cgroupHandle) oomKills() (uint64, error) {
	return h.m.OOMKillCount()
}

// oomKillsWith is oomKills with the count's file (memory.events on cgroup
// v2, memory.oom_control on v1, key oom_kill: what the cgroup manager
// reads) read through r; without r, or when that read fails, the
// manager's own read.
func (h *cgroupHandle) oomKillsWith(r *statReader) (uint64, error) {
	if r != nil {
		var file string
		if cgroups.IsCgroup2UnifiedMode() {
			file = filepath.Join(h.m.Path(""), "memory.events")
		} else if dir := h.m.Path("memory"); dir != "" {
			file = filepath.Join(dir, "memory.oom_control")
		}
		if file != "" {
			if n, err := r.statField(file, "oom_kill"); err == nil {
				return n, nil
			}
		}
	}
	return h.oomKills()
}

// OOMKillAnnotation is added to a container's state annotations once the
// kernel's OOM killer has killed a process in it; the value is the count
// (memory.events oom_kill on cgroup v2, memory.oom_control oom_kill on v1).
const OOMKillAnnotation = "org.nanobox.oom-kills"

// cgroup reopens the container's cgroup; nil when it has none.
func (c *Container) cgroup() *cgroupHandle {
	return openCgroup(c.st.ID, c.headConfig(), c.rt.cgroupRootless(), c.st.CgroupPaths)
}

// needCgroup is c.cgroup(), or an error saying why what cannot be done.
func (c *Container) needCgroup(what string) (*cgroupHandle, error) {
	if cg := c.cgroup(); cg != nil {
		return cg, nil
	}
	return nil, fmt.Errorf("container %s %w (an unprivileged user without a delegated cgroup v2 subtree created it), so it cannot be %s", c.st.ID, ErrNoCgroup, what)
}

// Pause freezes every process of a created or running container.
func (c *Container) Pause() error {
	lock, err := c.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	switch s := c.Status(); s {
	case Running, Created:
	case Paused:
		return fmt.Errorf("container %s %w", c.st.ID, ErrPaused)
	default:
		return fmt.Errorf("container %s %w", c.st.ID, ErrNotRunning)
	}
	cg, err := c.needCgroup("paused")
	if err != nil {
		return err
	}
	if err := cg.freeze(cgroups.Frozen); err != nil {
		return fmt.Errorf("pause container %s: %w", c.st.ID, err)
	}
	return nil
}

// Resume thaws a paused container.
func (c *Container) Resume() error {
	lock, err := c.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	if s := c.Status(); s != Paused {
		return fmt.Errorf("container %s %w (it is %s)", c.st.ID, ErrNotPaused, s)
	}
	cg, err := c.needCgroup("resumed")
	if err != nil {
		return err
	}
	if err := cg.freeze(cgroups.Thawed); err != nil {
		return fmt.Errorf("resume container %s: %w", c.st.ID, err)
	}
	return nil
}

// Stats returns the cgroup statistics of the container: cpu, memory, pids,
// block I/O, hugetlb.
func (c *Container) Stats() (*cgroups.Stats, error) {
	cg, err := c.needCgroup("measured")
	if err != nil {
		return nil, err
	}
	st, err := cg.m.GetStats()
	if err != nil {
		return nil, fmt.Errorf("container %s: cgroup stats: %w", c.st.ID, err)
	}
	return st, nil
}

// Update replaces the resource limits of a created, running or paused
// container with r (the complete new set; device rules are kept as they
// are) and records them in its state.
func (c *Container) Update(r *cgroups.Resources) error {
	lock, err := c.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	if c.Status() == Stopped {
		return fmt.Errorf("container %s %w", c.st.ID, ErrNotRunning)
	}
	cg, err := c.needCgroup("updated")
	if err != nil {
		return err
	}
	next := *r
	next.Devices = nil
	if old := c.st.Config.Resources; old != nil {
		next.Devices = old.Devices
	}
	next.Freezer = cgroups.Undefined
	set := next
	set.Devices = nil
	set.SkipDevices = true // the device rules never change after create
	forHost(&set)
	if err := cg.set(&set, requiredControllers(&set)); err != nil {
		return fmt.Errorf("update container %s: %w", c.st.ID, err)
	}
	st := *c.st
	cfg := *c.st.Config
	cfg.Resources = &next
	st.Config = &cfg
	if err := writeState(c.dir, &st, !c.rt.Ephemeral); err != nil {
		return err
	}
	c.st = &st
	return nil
}

// OOMKillCount is how many of the container's processes the kernel's OOM
// killer has killed; 0 for a container without a memory cgroup.
func (c *Container) OOMKillCount() (uint64, error) {
	cg := c.cgroup()
	if cg == nil {
		return 0, nil
	}
	n, err := cg.oomKills()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("container %s: read OOM kill count: %w", c.st.ID, err)
	}
	return n, nil
}

// oomAnnotation returns annotations plus OOMKillAnnotation when the OOM
// killer fired in the container (a copy: the config is not changed).
func (c *Container) oomAnnotation(annotations map[string]string) map[string]string {
	n, err := c.OOMKillCount()
	if err != nil || n == 0 {
		return annotations
	}
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	out[OOMKillAnnotation] = strconv.FormatUint(n, 10)
	return out
}

// joinSub moves pid into existing sub-cgroups of the container's cgroup
// (see ExecOpts.SubCgroups and subCgroupTargets). Errors keep runc's
// wording, which callers match: "error adding pid N to cgroups: ...".
func (h *cgroupHandle) joinSub(pid int, sub map[string]string) error {
	targets, err := h.subCgroupTargets(sub)
	if err != nil {
		return err
	}
	for _, ctrl := range slices.Sorted(maps.Keys(targets)) {
		if err := cgroups.WriteCgroupProc(targets[ctrl], pid); err != nil {
			return fmt.Errorf("error adding pid %d to cgroups: %w", pid, err)
		}
	}
	return nil
}

// subCgroupTargets are the cgroup directories, by controller (cgroup v2:
// ""), that joinSub moves a process into: sub[""] in every hierarchy,
// sub[c] in that of controller c (cgroup v1 only), the container's own
// cgroup in the others. Checked before anything is moved, and before exec
// starts a process. Errors keep runc's wording, which callers match:
// "unknown controller X", "X is not a sub cgroup path".
func (h *cgroupHandle) subCgroupTargets(sub map[string]string) (map[string]string, error) {
	paths := h.m.GetPaths()
	for ctrl := range sub {
		if ctrl == "" {
			continue
		}
		if cgroups.IsCgroup2UnifiedMode() {
			return nil, fmt.Errorf("--cgroup %s:%s: cgroup v2 has one hierarchy: give the sub-cgroup without a controller", ctrl, sub[ctrl])
		}
		if paths[ctrl] == "" {
			return nil, fmt.Errorf("unknown controller %s in --cgroup %s:%s: the container has no %s cgroup", ctrl, ctrl, sub[ctrl], ctrl)
		}
	}
	targets := make(map[string]string, len(paths))
	for ctrl, base := range paths {
		if base == "" {
			continue
		}
		add, ok := sub[ctrl]
		if !ok || ctrl == "" {
			if add, ok = sub[""]; !ok {
				targets[ctrl] = base
				continue
			}
		}
		target, err := subCgroupPath(base, add)
		if err != nil {
			return nil, err
		}
		targets[ctrl] = target
	}
	return targets, nil
}

// joinInitSubCgroup moves pid into the cgroup of the container's init
// when that is a cgroup v2 sub-cgroup of the container's (init, or a
// process of the container, moved it there): for exec, where the
// container's cgroup refuses processes. It returns that cgroup's
// directory, or "" where it moved nothing: not on cgroup v2, init in the
// container's cgroup itself or out of it (never a way out for exec), or
// the move failed.
func (h *cgroupHandle) joinInitSubCgroup(initPid, pid int) string {
	if !cgroups.IsCgroup2UnifiedMode() {
		return ""
	}
	own, err := cgroups.ParseCgroupFile("/proc/" + strconv.Itoa(initPid) + "/cgroup")
	if err != nil {
		return ""
	}
	p, ok := own[""]
	if !ok {
		return ""
	}
	dir := subCgroupOf(h.m.GetPaths()[""], filepath.Join("/sys/fs/cgroup", p))
	if dir == "" || cgroups.WriteCgroupProc(dir, pid) != nil {
		return ""
	}
	return dir
}

// subCgroupOf is dir when it is a cgroup below base, "" otherwise.
func subCgroupOf(base, dir string) string {
	if base == "" {
		return ""
	}
	rel, err := filepath.Rel(base, dir)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return ""
	}
	return dir
}

// subCgroupPath is the directory of sub-cgroup sub (a --cgroup path) of
// the cgroup at base: base itself for "/" or "", one below it otherwise.
// A path that leads out of base ("..", "../sibling", even a sibling whose
// name starts with base's) is an error.
func subCgroupPath(base, sub string) (string, error) {
	target := filepath.Join(base, sub)
	if rel, err := filepath.Rel(base, target); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("bad sub cgroup path: --cgroup %s is not a sub cgroup path (it leads out of the container's cgroup): give a path inside it (\"/\" is the cgroup itself)", sub)
	}
	return target, nil
}
