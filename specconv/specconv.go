// Package specconv converts between the OCI runtime-spec world (config.json)
// and libbox.Config. It is the only place that does so: nothing downstream of
// FromSpec looks at the spec again.
//
// The rule FromSpec follows: every field of config.json is either carried
// into the Config, or refused with an error naming the field, or (for the few
// settings the runtime accepts but does not act on: SELinux labels on hosts
// without SELinux, resource settings the host's cgroup version has
// no knob for, the parts of a Landlock policy (annotation
// org.nanobox.landlock, see LandlockAnnotation) the kernel's Landlock ABI
// lacks) reported through Options.Warnf.
// Nothing is dropped silently.
package specconv

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// Options tune FromSpec.
type Options struct {
	// Bundle is the bundle directory. A relative root.path and relative bind
	// mount sources are resolved against it; "" means the current directory.
	Bundle string
	// Rootless is set when the runtime runs without root on the host. The
	// spec must then have a user namespace; a new one without mappings gets
	// the caller's euid/egid mapped to 0.
	Rootless bool
	// NoPivotRoot and NoNewKeyring are copied into the Config (runc's
	// --no-pivot and --no-new-keyring).
	NoPivotRoot  bool
	NoNewKeyring bool
	// Warnf receives one message per setting that is accepted but not acted
	// on. nil logs them with logrus.Warnf.
	Warnf func(format string, args ...any)
}

// UnsupportedError reports a config.json field this runtime does not
// implement. It matches errors.ErrUnsupported.
type UnsupportedError struct {
	// Field is the JSON path of the field, e.g. "process.scheduler".
	Field string
}

func (e *UnsupportedError) Error() string { return e.Field + " is not supported" }

// Is makes errors.Is(err, errors.ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

func unsupported(field string) error { return &UnsupportedError{Field: field} }

// FromSpec converts an OCI spec into a libbox.Config, validating it on the
// way. Errors name the offending field of config.json.
func FromSpec(spec *specs.Spec, opts Options) (*libbox.Config, error) {
	if spec == nil {
		return nil, errors.New("spec is nil")
	}
	warnf := opts.Warnf
	if warnf == nil {
		warnf = logrus.Warnf
	}
	bundle, err := filepath.Abs(opts.Bundle)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", opts.Bundle, err)
	}
	if err := checkUnsupported(spec, warnf); err != nil {
		return nil, err
	}
	if v := spec.Version; v != "" && !strings.HasPrefix(v, "1.") {
		return nil, fmt.Errorf("ociVersion %q is not supported: this runtime implements runtime-spec 1.0.0 to %s", v, specs.Version)
	}

	c := &libbox.Config{
		OCIVersion:   spec.Version,
		Bundle:       bundle,
		Hostname:     spec.Hostname,
		Domainname:   spec.Domainname,
		NoPivotRoot:  opts.NoPivotRoot,
		NoNewKeyring: opts.NoNewKeyring,
	}
	if c.Rootfs, err = rootfsPath(spec.Root, bundle); err != nil {
		return nil, err
	}
	c.Readonlyfs = spec.Root.Readonly

	p, err := ProcessFromSpec(spec.Process, Options{Warnf: warnf})
	if err != nil {
		return nil, err
	}
	c.Process = *p

	if len(spec.Annotations) > 0 {
		c.Annotations = make(map[string]string, len(spec.Annotations))
		for k, v := range spec.Annotations {
			c.Annotations[k] = v
		}
	}

	linux := spec.Linux
	if linux == nil {
		linux = &specs.Linux{}
	}
	if err := convertNamespaces(c, linux, opts); err != nil {
		return nil, err
	}
	// root.readonly without a mount namespace of the container's own
	// reaches libbox, which refuses it (checkSharedMountNS): the root MUST
	// be read-only, and remounting it would change the runtime's own
	// mounts. runc 1.6 refuses it too (runc 1.3 ran the container with the
	// root writable, runc 1.1 remounted the host's).
	if c.Hostname != "" && !hasNS(c, libbox.NEWUTS) {
		return nil, errors.New("hostname needs a uts namespace: add {\"type\": \"uts\"} to linux.namespaces")
	}
	if c.Domainname != "" && !hasNS(c, libbox.NEWUTS) {
		return nil, errors.New("domainname needs a uts namespace: add {\"type\": \"uts\"} to linux.namespaces")
	}

	for i, sm := range spec.Mounts {
		m, err := convertMount(sm, bundle, c.Rootfs, warnf)
		if err != nil {
			return nil, fmt.Errorf("mounts[%d] (destination %q): %w", i, sm.Destination, err)
		}
		c.Mounts = append(c.Mounts, m)
	}

	if linux.RootfsPropagation != "" {
		flags, ok := rootPropagation[linux.RootfsPropagation]
		if !ok {
			return nil, fmt.Errorf("linux.rootfsPropagation %q is not one of shared, rshared, slave, rslave, private, rprivate, unbindable, runbindable", linux.RootfsPropagation)
		}
		// Without pivot_root the old root stays reachable; making it
		// private would hide the container's mounts from the host's
		// cleanup (runc refuses this too).
		if opts.NoPivotRoot && flags&unix.MS_PRIVATE != 0 {
			return nil, errors.New("linux.rootfsPropagation [r]private is not safe without pivot_root: drop --no-pivot or choose another propagation")
		}
		c.RootPropagation = flags
	}

	seenDev := map[string]bool{}
	for i, sd := range linux.Devices {
		d, err := convertDevice(sd)
		if err != nil {
			return nil, fmt.Errorf("linux.devices[%d] (path %q): %w", i, sd.Path, err)
		}
		if seenDev[d.Path] {
			return nil, fmt.Errorf("linux.devices: duplicate device path %s", d.Path)
		}
		seenDev[d.Path] = true
		c.Devices = append(c.Devices, d)
	}

	if c.MaskedPaths, err = containerPaths("linux.maskedPaths", linux.MaskedPaths); err != nil {
		return nil, err
	}
	if c.ReadonlyPaths, err = containerPaths("linux.readonlyPaths", linux.ReadonlyPaths); err != nil {
		return nil, err
	}

	if len(linux.Sysctl) > 0 {
		c.Sysctl = make(map[string]string, len(linux.Sysctl))
		for k, v := range linux.Sysctl {
			if err := checkSysctl(c, k); err != nil {
				return nil, fmt.Errorf("linux.sysctl: %w", err)
			}
			c.Sysctl[k] = v
		}
	}

	if spec.Hooks != nil {
		if c.Hooks, err = convertHooks(spec.Hooks); err != nil {
			return nil, err
		}
	}

	c.CgroupsPath = linux.CgroupsPath
	if c.Resources, err = Resources(linux.Resources, warnf); err != nil {
		return nil, err
	}
	if linux.Seccomp != nil {
		if c.Seccomp, err = convertSeccomp(linux.Seccomp); err != nil {
			return nil, err
		}
		defaultSeccompFlags(c.Seccomp, linux.Seccomp)
	}
	if c.Landlock, err = convertLandlock(spec.Annotations, warnf); err != nil {
		return nil, err
	}
	if c.Network, err = convertNetwork(spec.Annotations); err != nil {
		return nil, err
	}
	if c.Network != nil {
		if ns, ok := c.NamespaceOf(libbox.NEWNET); !ok {
			return nil, fmt.Errorf("annotations[%s]: a network allowlist needs a network namespace: add {\"type\": \"network\"} to linux.namespaces", NetworkAnnotation)
		} else if ns.Path != "" {
			warnf("annotations[%s]: the container joins the network namespace %s: it must have loopback only, or create fails", NetworkAnnotation, ns.Path)
		}
	}
	if c.TimeOffsets, err = convertTimeOffsets(c, linux.TimeOffsets); err != nil {
		return nil, err
	}
	if c.NetDevices, err = convertNetDevices(c, linux.NetDevices); err != nil {
		return nil, err
	}
	if c.Personality, err = convertPersonality(linux.Personality); err != nil {
		return nil, err
	}
	if c.MemoryPolicy, err = convertMemoryPolicy(linux.MemoryPolicy); err != nil {
		return nil, err
	}
	return c, nil
}

// checkUnsupported refuses the spec fields this runtime does not implement.
func checkUnsupported(spec *specs.Spec, warnf func(string, ...any)) error {
	for field, set := range map[string]bool{
		"solaris": spec.Solaris != nil,
		"windows": spec.Windows != nil,
		"vm":      spec.VM != nil,
		"zos":     spec.ZOS != nil,
		"freebsd": spec.FreeBSD != nil,
	} {
		if set {
			return unsupported(field)
		}
	}
	l := spec.Linux
	if l == nil {
		return nil
	}
	switch {
	case l.IntelRdt != nil:
		return unsupported("linux.intelRdt")
	}
	return lsmLabel("linux.mountLabel", l.MountLabel, "SELinux", host.seLinuxEnabled, warnf)
}

// lsmLabel decides what to do with an AppArmor profile or SELinux label the
// runtime cannot apply. On a host where the LSM is active, running without
// the confinement the caller asked for would be a silent downgrade: error.
// On a host without it, no runtime could apply the label and it confines
// nothing; configs generated elsewhere still run, with a warning.
func lsmLabel(field, value, lsm string, enabled func() bool, warnf func(string, ...any)) error {
	if value == "" {
		return nil
	}
	if enabled() {
		return fmt.Errorf("%w: %s is enabled on this host and this runtime cannot apply it", unsupported(field), lsm)
	}
	warnf("%s %q ignored: %s is not enabled on this host", field, value, lsm)
	return nil
}

// SELinuxLabel checks an SELinux process label (field names where it comes
// from): as process.selinuxLabel in config.json, an error on a host where
// SELinux is enabled (this runtime cannot apply labels), and a warning
// through warnf where it is not, where it confines nothing.
func SELinuxLabel(field, label string, warnf func(string, ...any)) error {
	return lsmLabel(field, label, "SELinux", host.seLinuxEnabled, warnf)
}

// AppArmorProfile checks an AppArmor profile for the process (field names
// where it comes from, for the error) and returns it: applied by init right
// before the program's execve on a host where AppArmor is enabled, and an
// error on one where it is not, where runc fails too (at start, "write
// /proc/self/attr/exec: invalid argument"): running unconfined would be a
// silent downgrade of what the caller asked for.
func AppArmorProfile(field, profile string) (string, error) {
	if profile == "" || host.appArmorEnabled() {
		return profile, nil
	}
	return "", fmt.Errorf("%s %q: AppArmor is not enabled on this host (%s is not \"Y\"), so no profile can be applied: enable AppArmor and load the profile, or leave %s out", field, profile, libbox.AppArmorEnabledFile, field)
}

func rootfsPath(root *specs.Root, bundle string) (string, error) {
	if root == nil || root.Path == "" {
		return "", errors.New("root.path is required")
	}
	p := root.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(bundle, p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("rootfs %s does not exist: %w", p, err)
	}
	if err != nil {
		return "", fmt.Errorf("rootfs %s: %w", p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("rootfs %s is not a directory", p)
	}
	// Record the real path so the state, the mount and any later check
	// all talk about the same directory.
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("rootfs %s: %w", p, err)
	}
	return real, nil
}

// ProcessFromSpec converts and validates an OCI process (the one of
// config.json, or one given to exec). Only opts.Warnf is used.
func ProcessFromSpec(sp *specs.Process, opts Options) (*libbox.Process, error) {
	warnf := opts.Warnf
	if warnf == nil {
		warnf = logrus.Warnf
	}
	if sp == nil {
		return nil, errors.New("process is required")
	}
	switch {
	case sp.User.Username != "":
		return nil, unsupported("process.user.username")
	case sp.CommandLine != "":
		return nil, unsupported("process.commandLine")
	}
	profile, err := AppArmorProfile("process.apparmorProfile", sp.ApparmorProfile)
	if err != nil {
		return nil, err
	}
	if err := SELinuxLabel("process.selinuxLabel", sp.SelinuxLabel, warnf); err != nil {
		return nil, err
	}

	if len(sp.Args) == 0 {
		return nil, errors.New("process.args must not be empty")
	}
	if sp.Args[0] == "" {
		return nil, errors.New("process.args[0] must not be empty")
	}
	if sp.Cwd == "" {
		return nil, errors.New("process.cwd is required")
	}
	if !filepath.IsAbs(sp.Cwd) {
		return nil, fmt.Errorf("process.cwd %q must be an absolute path", sp.Cwd)
	}
	for i, kv := range sp.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("process.env[%d] %q is not KEY=VALUE", i, kv)
		}
	}
	p := &libbox.Process{
		Args:            append([]string(nil), sp.Args...),
		Env:             append([]string(nil), sp.Env...),
		Cwd:             filepath.Clean(sp.Cwd),
		Terminal:        sp.Terminal,
		NoNewPrivileges: sp.NoNewPrivileges,
		AppArmorProfile: profile,
		User: libbox.User{
			UID:            sp.User.UID,
			GID:            sp.User.GID,
			AdditionalGids: append([]uint32(nil), sp.User.AdditionalGids...),
		},
	}
	if sp.User.Umask != nil {
		if *sp.User.Umask > 0o777 {
			return nil, fmt.Errorf("process.user.umask %#o is not a permission mask (0 to 0777)", *sp.User.Umask)
		}
		umask := *sp.User.Umask
		p.User.Umask = &umask
	}
	if sp.ConsoleSize != nil {
		p.ConsoleWidth = sp.ConsoleSize.Width
		p.ConsoleHeight = sp.ConsoleSize.Height
	}
	if sp.OOMScoreAdj != nil {
		adj := *sp.OOMScoreAdj
		if adj < -1000 || adj > 1000 {
			return nil, fmt.Errorf("process.oomScoreAdj %d is out of range -1000 to 1000", adj)
		}
		p.OOMScoreAdj = &adj
	}
	if sp.Capabilities != nil {
		if p.Capabilities, err = convertCapabilities(sp.Capabilities, warnf); err != nil {
			return nil, err
		}
	}
	if p.Rlimits, err = convertRlimits(sp.Rlimits); err != nil {
		return nil, err
	}
	if p.Scheduler, err = convertScheduler(sp.Scheduler); err != nil {
		return nil, err
	}
	if p.IOPriority, err = convertIOPriority(sp.IOPriority); err != nil {
		return nil, err
	}
	if p.ExecCPUAffinity, err = convertCPUAffinity(sp.ExecCPUAffinity); err != nil {
		return nil, err
	}
	return p, nil
}

func convertCapabilities(sc *specs.LinuxCapabilities, warnf func(string, ...any)) (*libbox.Capabilities, error) {
	last, err := host.capLastCap()
	if err != nil {
		warnf("capabilities not checked against the running kernel: %v", err)
		last = math.MaxInt
	}
	// Names this runtime or the running kernel does not know are dropped
	// with a warning, as runc (1.2 and later) does: leaving a capability
	// out only takes privilege away, and configs written for newer
	// kernels (CAP_BPF, CAP_CHECKPOINT_RESTORE on an old one) keep working.
	check := func(set string, names []string) ([]string, error) {
		var kept, unknown, unsupported []string
		for _, name := range names {
			n, ok := capabilities()[name]
			switch {
			case !ok:
				unknown = append(unknown, strconv.Quote(name))
			case n > last:
				unsupported = append(unsupported, name)
			default:
				kept = append(kept, name)
			}
		}
		if len(unknown) > 0 {
			warnf("process.capabilities.%s: ignoring unknown capabilities %s (names look like CAP_CHOWN)", set, strings.Join(unknown, ", "))
		}
		if len(unsupported) > 0 {
			warnf("process.capabilities.%s: ignoring %s, not supported by the running kernel (its last capability is number %d)", set, strings.Join(unsupported, ", "), last)
		}
		return kept, nil
	}
	c := &libbox.Capabilities{}
	for _, s := range []struct {
		name string
		in   []string
		out  *[]string
	}{
		{"bounding", sc.Bounding, &c.Bounding},
		{"effective", sc.Effective, &c.Effective},
		{"inheritable", sc.Inheritable, &c.Inheritable},
		{"permitted", sc.Permitted, &c.Permitted},
		{"ambient", sc.Ambient, &c.Ambient},
	} {
		if *s.out, err = check(s.name, s.in); err != nil {
			return nil, err
		}
	}
	// The kernel refuses to raise an ambient capability that is not both
	// permitted and inheritable; runc ignores that failure, and runc's own
	// `spec` output relies on it (ambient caps, no inheritable ones). Drop
	// them here, with a warning, so such configs keep working.
	var ambient, dropped []string
	for _, name := range c.Ambient {
		if slices.Contains(c.Inheritable, name) && slices.Contains(c.Permitted, name) {
			ambient = append(ambient, name)
		} else {
			dropped = append(dropped, name)
		}
	}
	if len(dropped) > 0 {
		// One warning per capability, in runc's words.
		for _, name := range dropped {
			warnf("can't raise ambient capability %s: an ambient capability must also be permitted and inheritable (process.capabilities)", name)
		}
		c.Ambient = ambient
	}
	return c, nil
}

func convertRlimits(in []specs.POSIXRlimit) ([]libbox.Rlimit, error) {
	var out []libbox.Rlimit
	seen := map[string]bool{}
	for _, r := range in {
		n, ok := rlimits()[r.Type]
		if !ok {
			return nil, fmt.Errorf("process.rlimits: unknown rlimit type %q", r.Type)
		}
		if seen[r.Type] {
			return nil, fmt.Errorf("process.rlimits: duplicate rlimit type %s", r.Type)
		}
		seen[r.Type] = true
		if r.Soft > r.Hard {
			return nil, fmt.Errorf("process.rlimits: %s soft limit %d exceeds hard limit %d", r.Type, r.Soft, r.Hard)
		}
		out = append(out, libbox.Rlimit{Type: n, Hard: r.Hard, Soft: r.Soft})
	}
	return out, nil
}

func hasNS(c *libbox.Config, t libbox.NamespaceType) bool {
	_, ok := c.NamespaceOf(t)
	return ok
}

// convertNamespaces fills in Namespaces and the id mappings, and checks that
// the process's ids are mapped.
func convertNamespaces(c *libbox.Config, l *specs.Linux, opts Options) error {
	for i, ns := range l.Namespaces {
		t, ok := namespaceTypes[ns.Type]
		if !ok {
			return fmt.Errorf("linux.namespaces[%d]: unknown namespace type %q", i, ns.Type)
		}
		if hasNS(c, t) {
			return fmt.Errorf("linux.namespaces: duplicate namespace type %q", ns.Type)
		}
		if ns.Path != "" && !filepath.IsAbs(ns.Path) {
			return fmt.Errorf("linux.namespaces[%d]: %s namespace path %q must be absolute", i, ns.Type, ns.Path)
		}
		c.Namespaces = append(c.Namespaces, libbox.Namespace{Type: t, Path: ns.Path})
	}
	// A type left out is the runtime's own (runtime-spec: MUST inherit),
	// the mount namespace too: libbox then makes the mounts under the
	// rootfs in the runtime's namespace and chroots, as runc does, and
	// refuses what would change the runtime's own mounts.

	userns, hasUser := c.NamespaceOf(libbox.NEWUSER)
	hasMaps := len(l.UIDMappings) > 0 || len(l.GIDMappings) > 0
	switch {
	case !hasUser && opts.Rootless:
		return errors.New("rootless container requires a user namespace: add {\"type\": \"user\"} to linux.namespaces")
	case !hasUser && hasMaps:
		return errors.New("linux.uidMappings and linux.gidMappings need a user namespace: add {\"type\": \"user\"} to linux.namespaces")
	case !hasUser:
		return nil
	case userns.Path != "":
		// Joining: the namespace's own mappings apply. Some engines
		// (containerd, CRI-O) pass matching mappings as well; keep them
		// for computing host ids, they are never written.
		c.UIDMappings = toIDMaps(l.UIDMappings)
		c.GIDMappings = toIDMaps(l.GIDMappings)
		return nil
	case !hasMaps && opts.Rootless:
		// The kernel lets an unprivileged process map its own euid/egid,
		// and nothing else without newuidmap/newgidmap.
		c.UIDMappings = []libbox.IDMap{{ContainerID: 0, HostID: uint32(os.Geteuid()), Size: 1}}
		c.GIDMappings = []libbox.IDMap{{ContainerID: 0, HostID: uint32(os.Getegid()), Size: 1}}
	case !hasMaps:
		return errors.New("a new user namespace needs linux.uidMappings and linux.gidMappings")
	case len(l.UIDMappings) == 0 || len(l.GIDMappings) == 0:
		return errors.New("linux.uidMappings and linux.gidMappings must both be set for a new user namespace")
	default:
		if err := checkIDMaps("linux.uidMappings", l.UIDMappings); err != nil {
			return err
		}
		if err := checkIDMaps("linux.gidMappings", l.GIDMappings); err != nil {
			return err
		}
		c.UIDMappings = toIDMaps(l.UIDMappings)
		c.GIDMappings = toIDMaps(l.GIDMappings)
	}

	// An unmapped id makes setuid/setgid fail with a bare EINVAL in the
	// container's init; say which id and which field instead.
	u := c.Process.User
	if !mapped(c.UIDMappings, u.UID) {
		return fmt.Errorf("process.user.uid %d is not mapped by linux.uidMappings", u.UID)
	}
	for _, g := range append([]uint32{u.GID}, u.AdditionalGids...) {
		if !mapped(c.GIDMappings, g) {
			return fmt.Errorf("process.user gid %d is not mapped by linux.gidMappings", g)
		}
	}
	return nil
}

// convertTimeOffsets converts linux.timeOffsets: the monotonic and boottime
// clocks only, and only for a time namespace the container makes (the
// kernel takes offsets before any process is in the namespace).
func convertTimeOffsets(c *libbox.Config, in map[string]specs.LinuxTimeOffset) (map[string]libbox.TimeOffset, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if ns, ok := c.NamespaceOf(libbox.NEWTIME); !ok || ns.Path != "" {
		return nil, errors.New("linux.timeOffsets need a new time namespace: add {\"type\": \"time\"} (without a path) to linux.namespaces")
	}
	out := make(map[string]libbox.TimeOffset, len(in))
	for clock, o := range in {
		if clock != "monotonic" && clock != "boottime" {
			return nil, fmt.Errorf("linux.timeOffsets: clock %q is not one of monotonic, boottime", clock)
		}
		if o.Nanosecs >= 1e9 {
			return nil, fmt.Errorf("linux.timeOffsets.%s.nanosecs %d is not below one second", clock, o.Nanosecs)
		}
		out[clock] = libbox.TimeOffset{Secs: o.Secs, Nanosecs: o.Nanosecs}
	}
	return out, nil
}

func toIDMaps(in []specs.LinuxIDMapping) []libbox.IDMap {
	var out []libbox.IDMap
	for _, m := range in {
		out = append(out, libbox.IDMap{ContainerID: m.ContainerID, HostID: m.HostID, Size: m.Size})
	}
	return out
}

// checkIDMaps rejects what the kernel would reject when uid_map is written,
// with the field named.
func checkIDMaps(field string, maps []specs.LinuxIDMapping) error {
	for i, m := range maps {
		if m.Size == 0 {
			return fmt.Errorf("%s[%d]: size must be at least 1", field, i)
		}
		if uint64(m.ContainerID)+uint64(m.Size) > 1<<32 || uint64(m.HostID)+uint64(m.Size) > 1<<32 {
			return fmt.Errorf("%s[%d]: range overflows 32-bit ids", field, i)
		}
		for j := range i {
			o := maps[j]
			if m.ContainerID < o.ContainerID+o.Size && o.ContainerID < m.ContainerID+m.Size {
				return fmt.Errorf("%s[%d]: container ids overlap entry %d", field, i, j)
			}
		}
	}
	return nil
}

func mapped(maps []libbox.IDMap, id uint32) bool {
	for _, m := range maps {
		if id >= m.ContainerID && uint64(id) < uint64(m.ContainerID)+uint64(m.Size) {
			return true
		}
	}
	return false
}

func convertDevice(sd specs.LinuxDevice) (libbox.Device, error) {
	var d libbox.Device
	switch sd.Type {
	case "c", "u":
		d.Type = 'c'
	case "b":
		d.Type = 'b'
	case "p":
		d.Type = 'p'
	default:
		return d, fmt.Errorf("type %q is not one of c, u, b, p", sd.Type)
	}
	if sd.Path == "" || !filepath.IsAbs(sd.Path) || strings.IndexByte(sd.Path, 0) >= 0 {
		return d, errors.New("path must be an absolute path")
	}
	d.Path = filepath.Clean(sd.Path)
	if d.Type != 'p' && (sd.Major < 0 || sd.Minor < 0) {
		return d, fmt.Errorf("major and minor must not be negative, got %d:%d", sd.Major, sd.Minor)
	}
	d.Major, d.Minor = sd.Major, sd.Minor
	d.FileMode = 0o666
	if sd.FileMode != nil {
		// Engines fill this in from os.Stat of the host node, so it may
		// carry Go's type bits or S_IFCHR; only the permissions count.
		d.FileMode = sd.FileMode.Perm()
	}
	if sd.UID != nil {
		d.UID = *sd.UID
	}
	if sd.GID != nil {
		d.GID = *sd.GID
	}
	return d, nil
}

func containerPaths(field string, in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
			return nil, fmt.Errorf("%s: %q must be an absolute path", field, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

func convertHooks(h *specs.Hooks) (libbox.Hooks, error) {
	var out libbox.Hooks
	for _, k := range []struct {
		name string
		in   []specs.Hook
		out  *[]libbox.Hook
	}{
		{"prestart", h.Prestart, &out.Prestart}, //nolint:staticcheck // deprecated, still honoured (runtime-spec)
		{"createRuntime", h.CreateRuntime, &out.CreateRuntime},
		{"createContainer", h.CreateContainer, &out.CreateContainer},
		{"startContainer", h.StartContainer, &out.StartContainer},
		{"poststart", h.Poststart, &out.Poststart},
		{"poststop", h.Poststop, &out.Poststop},
	} {
		for i, sh := range k.in {
			if !filepath.IsAbs(sh.Path) {
				return out, fmt.Errorf("hooks.%s[%d]: path %q must be absolute", k.name, i, sh.Path)
			}
			hook := libbox.Hook{
				Path: sh.Path,
				Args: append([]string(nil), sh.Args...),
				Env:  append([]string(nil), sh.Env...),
			}
			if sh.Timeout != nil {
				if *sh.Timeout <= 0 || int64(*sh.Timeout) > math.MaxInt64/int64(time.Second) {
					return out, fmt.Errorf("hooks.%s[%d]: timeout must be a positive number of seconds, got %d", k.name, i, *sh.Timeout)
				}
				hook.Timeout = time.Duration(*sh.Timeout) * time.Second
			}
			*k.out = append(*k.out, hook)
		}
	}
	return out, nil
}

// convertNetDevices takes linux.netDevices, sorted by host name: the
// devices create moves into the container's network namespace, which it
// must have (its own or one joined by path; not the host's).
func convertNetDevices(c *libbox.Config, devs map[string]specs.LinuxNetDevice) ([]libbox.NetDevice, error) {
	if len(devs) == 0 {
		return nil, nil
	}
	if _, ok := c.NamespaceOf(libbox.NEWNET); !ok {
		return nil, errors.New("linux.netDevices: moving devices needs a network namespace of the container's: add {\"type\": \"network\"} to linux.namespaces")
	}
	var out []libbox.NetDevice
	targets := map[string]string{}
	for _, host := range slices.Sorted(maps.Keys(devs)) {
		d := libbox.NetDevice{HostName: host, Name: devs[host].Name}
		if err := libbox.ValidateNetDeviceName(host); err != nil || strings.Contains(host, "%") {
			if err == nil {
				err = fmt.Errorf("%q is a template, not a device", host)
			}
			return nil, fmt.Errorf("linux.netDevices: the host device name %w", err)
		}
		if d.Name != "" {
			if err := libbox.ValidateNetDeviceName(d.Name); err != nil {
				return nil, fmt.Errorf("linux.netDevices[%q].name: %w", host, err)
			}
		}
		t := d.Name
		if t == "" {
			t = host
		}
		if other, dup := targets[t]; dup && !strings.HasSuffix(t, "%d") {
			return nil, fmt.Errorf("linux.netDevices: %q and %q would both be %q in the container: rename one", other, host, t)
		}
		targets[t] = host
		out = append(out, d)
	}
	return out, nil
}
