package specconv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// fakeHost makes the host answers deterministic for the duration of a test:
// a kernel whose last capability is lastCap, no LSM, a cgroup v1 host, and
// /proc/self/ns/* never equal to a given path unless it is "/runtime/ns".
func fakeHost(t *testing.T, lastCap int) *hostProbe {
	t.Helper()
	saved := host
	t.Cleanup(func() { host = saved })
	host = hostProbe{
		capLastCap:      func() (int, error) { return lastCap, nil },
		appArmorEnabled: func() bool { return false },
		seLinuxEnabled:  func() bool { return false },
		isRuntimeNamespace: func(kind, path string) (bool, error) {
			return path == "/runtime/ns/"+kind, nil
		},
		cgroup2Unified: func() bool { return false },
	}
	return &host
}

// warnings collects what FromSpec reports through Options.Warnf.
type warnings []string

func (w *warnings) warnf(format string, args ...any) { *w = append(*w, fmt.Sprintf(format, args...)) }

func (w warnings) contains(s string) bool {
	for _, m := range w {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// newBundle returns an absolute bundle directory holding an empty rootfs.
func newBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func convert(t *testing.T, spec *specs.Spec, opts Options) (*libbox.Config, warnings, error) {
	t.Helper()
	var w warnings
	if opts.Bundle == "" {
		opts.Bundle = newBundle(t)
	}
	opts.Warnf = w.warnf
	c, err := FromSpec(spec, opts)
	return c, w, err
}

func mustConvert(t *testing.T, spec *specs.Spec, opts Options) (*libbox.Config, warnings) {
	t.Helper()
	c, w, err := convert(t, spec, opts)
	if err != nil {
		t.Fatalf("FromSpec: %v", err)
	}
	return c, w
}

func mountAt(t *testing.T, c *libbox.Config, dest string) libbox.Mount {
	t.Helper()
	for _, m := range c.Mounts {
		if m.Destination == dest {
			return m
		}
	}
	t.Fatalf("no mount at %s in %+v", dest, c.Mounts)
	return libbox.Mount{}
}

func TestParseMountOptions(t *testing.T) {
	tests := []struct {
		opts    []string
		flags   int
		cleared int
		prop    []int
		data    string
		err     string
		recSet  uint64
		recClr  uint64
	}{
		{opts: nil},
		{opts: []string{"ro", "nosuid", "nodev", "noexec"}, flags: unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{opts: []string{"rw", "suid", "dev", "exec"}, cleared: unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		// The last of two contradicting options wins, both ways.
		{opts: []string{"ro", "rw"}, cleared: unix.MS_RDONLY},
		{opts: []string{"rw", "ro"}, flags: unix.MS_RDONLY},
		{opts: []string{"rbind"}, flags: unix.MS_BIND | unix.MS_REC},
		{opts: []string{"bind", "rprivate"}, flags: unix.MS_BIND, prop: []int{unix.MS_PRIVATE | unix.MS_REC}},
		{opts: []string{"shared", "slave", "unbindable", "runbindable"}, prop: []int{unix.MS_SHARED, unix.MS_SLAVE, unix.MS_UNBINDABLE, unix.MS_UNBINDABLE | unix.MS_REC}},
		{opts: []string{"relatime", "strictatime", "noatime", "nodiratime"}, flags: unix.MS_RELATIME | unix.MS_STRICTATIME | unix.MS_NOATIME | unix.MS_NODIRATIME},
		{opts: []string{"sync", "dirsync", "mand", "silent", "iversion", "lazytime", "remount"}, flags: unix.MS_SYNCHRONOUS | unix.MS_DIRSYNC | unix.MS_MANDLOCK | unix.MS_SILENT | unix.MS_I_VERSION | unix.MS_LAZYTIME | unix.MS_REMOUNT},
		{opts: []string{"async", "nomand", "loud", "noiversion", "nolazytime", "atime", "diratime", "norelatime", "nostrictatime"}, cleared: unix.MS_SYNCHRONOUS | unix.MS_MANDLOCK | unix.MS_SILENT | unix.MS_I_VERSION | unix.MS_LAZYTIME | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME | unix.MS_STRICTATIME},
		{opts: []string{"nosuid", "mode=755", "defaults", "size=65536k", "newinstance"}, flags: unix.MS_NOSUID, data: "mode=755,size=65536k,newinstance"},
		{opts: []string{"rnosuid", "rnodev", "rnoexec", "rnosymfollow", "rnodiratime"}, recSet: unix.MOUNT_ATTR_NOSUID |
			unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC | unix.MOUNT_ATTR_NOSYMFOLLOW | unix.MOUNT_ATTR_NODIRATIME},
		{opts: []string{"rrw", "rsuid", "rdev", "rexec", "rsymfollow", "rdiratime"}, recClr: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID |
			unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC | unix.MOUNT_ATTR_NOSYMFOLLOW | unix.MOUNT_ATTR_NODIRATIME},
		// rro is RecursiveReadonly (checked below); rrw after it undoes it.
		{opts: []string{"rro", "rrw"}, recClr: unix.MOUNT_ATTR_RDONLY},
		// An atime mode clears the whole atime field; the last one wins.
		{opts: []string{"rnoatime"}, recSet: unix.MOUNT_ATTR_NOATIME, recClr: unix.MOUNT_ATTR__ATIME},
		{opts: []string{"rnoatime", "rstrictatime"}, recSet: unix.MOUNT_ATTR_STRICTATIME, recClr: unix.MOUNT_ATTR__ATIME},
		{opts: []string{"rstrictatime", "rrelatime"}, recSet: unix.MOUNT_ATTR_RELATIME, recClr: unix.MOUNT_ATTR__ATIME},
		{opts: []string{"rnoatime", "ratime"}, recClr: unix.MOUNT_ATTR__ATIME},
		{opts: []string{"idmap=uids=0-1000-10"}, err: "mount option idmap=uids=0-1000-10 is not supported: give the mount's mappings as uidMappings and gidMappings"},
	}
	var rro libbox.Mount
	if err := parseMountOptions(&rro, []string{"rbind", "rro"}); err != nil || !rro.RecursiveReadonly || rro.Flags != unix.MS_BIND|unix.MS_REC {
		t.Errorf("rbind,rro: %+v %v", rro, err)
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.opts, ","), func(t *testing.T) {
			var m libbox.Mount
			err := parseMountOptions(&m, tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Flags != tt.flags || m.ClearedFlags != tt.cleared || m.Data != tt.data || !reflect.DeepEqual(m.PropagationFlags, tt.prop) {
				t.Errorf("got flags %#x cleared %#x prop %v data %q, want %#x %#x %v %q",
					m.Flags, m.ClearedFlags, m.PropagationFlags, m.Data, tt.flags, tt.cleared, tt.prop, tt.data)
			}
			if m.RecAttrSet != tt.recSet || m.RecAttrClr != tt.recClr {
				t.Errorf("recursive attributes set %#x clear %#x, want %#x %#x", m.RecAttrSet, m.RecAttrClr, tt.recSet, tt.recClr)
			}
		})
	}
}

func TestConvertMount(t *testing.T) {
	const bundle = "/bundles/b1"
	tests := []struct {
		name string
		in   specs.Mount
		want libbox.Mount
		warn string
		err  string
	}{
		{
			name: "relative bind source is relative to the bundle",
			in:   specs.Mount{Destination: "/data", Type: "bind", Source: "data/../in", Options: []string{"rbind", "ro"}},
			want: libbox.Mount{Destination: "/data", Type: "bind", Source: "/bundles/b1/in", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY},
		},
		{
			name: "type bind without a bind option is a bind mount",
			in:   specs.Mount{Destination: "/data", Type: "bind", Source: "/srv"},
			want: libbox.Mount{Destination: "/data", Type: "bind", Source: "/srv", Flags: unix.MS_BIND},
		},
		{
			name: "type none with rbind becomes bind",
			in:   specs.Mount{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "nosuid"}},
			want: libbox.Mount{Destination: "/sys", Type: "bind", Source: "/sys", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_NOSUID},
		},
		{
			name: "non-bind source is left alone",
			in:   specs.Mount{Destination: "/tmp/", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "mode=1777"}},
			want: libbox.Mount{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Flags: unix.MS_NOSUID, Data: "mode=1777"},
		},
		{
			name: "tmpcopyup on a tmpfs",
			in:   specs.Mount{Destination: "/run", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "tmpcopyup"}},
			want: libbox.Mount{Destination: "/run", Type: "tmpfs", Source: "tmpfs", Flags: unix.MS_NOSUID, CopyUp: true},
		},
		{
			name: "relative destination is resolved against / with a warning",
			in:   specs.Mount{Destination: "run/x", Type: "tmpfs", Source: "tmpfs"},
			want: libbox.Mount{Destination: "/run/x", Type: "tmpfs", Source: "tmpfs"},
			warn: "is not absolute",
		},
		{name: "missing destination", in: specs.Mount{Type: "tmpfs"}, err: "destination is required"},
		{name: "missing type", in: specs.Mount{Destination: "/x", Source: "x"}, err: "type is required"},
		{name: "bind without source", in: specs.Mount{Destination: "/x", Type: "bind"}, err: "needs a source"},
		{name: "nul byte", in: specs.Mount{Destination: "/x\x00y", Type: "tmpfs"}, err: "NUL"},
		{
			name: "idmap takes the container's mappings",
			in:   specs.Mount{Destination: "/x", Type: "bind", Source: "/x", Options: []string{"idmap"}},
			want: libbox.Mount{Destination: "/x", Type: "bind", Source: "/x", Flags: unix.MS_BIND, IDMap: &libbox.MountIDMap{}},
		},
		{
			name: "ridmap with its own mappings",
			in: specs.Mount{Destination: "/x", Type: "bind", Source: "/x", Options: []string{"rbind", "ridmap"},
				UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 10}}, GIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 2000, Size: 10}}},
			want: libbox.Mount{Destination: "/x", Type: "bind", Source: "/x", Flags: unix.MS_BIND | unix.MS_REC, IDMap: &libbox.MountIDMap{
				UIDMappings: []libbox.IDMap{{ContainerID: 0, HostID: 1000, Size: 10}}, GIDMappings: []libbox.IDMap{{ContainerID: 0, HostID: 2000, Size: 10}}, Recursive: true}},
		},
		{
			name: "mappings alone make an idmapped mount",
			in: specs.Mount{Destination: "/x", Type: "bind", Source: "/x",
				UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 1}}, GIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 1}}},
			want: libbox.Mount{Destination: "/x", Type: "bind", Source: "/x", Flags: unix.MS_BIND, IDMap: &libbox.MountIDMap{
				UIDMappings: []libbox.IDMap{{ContainerID: 0, HostID: 1000, Size: 1}}, GIDMappings: []libbox.IDMap{{ContainerID: 0, HostID: 1000, Size: 1}}}},
		},
		{name: "uidMappings without gidMappings", in: specs.Mount{Destination: "/x", Type: "bind", Source: "/x", UIDMappings: []specs.LinuxIDMapping{{Size: 1}}}, err: "uidMappings and gidMappings of an idmapped mount go together"},
		{name: "empty mapping", in: specs.Mount{Destination: "/x", Type: "bind", Source: "/x", UIDMappings: []specs.LinuxIDMapping{{Size: 0}}, GIDMappings: []specs.LinuxIDMapping{{Size: 1}}}, err: "uidMappings[0]: size must be at least 1"},
		{name: "idmap on a tmpfs", in: specs.Mount{Destination: "/x", Type: "tmpfs", Source: "tmpfs", Options: []string{"idmap"}}, err: "an idmapped mount must be a bind mount, not tmpfs"},
		{name: "crun's idmap= spelling", in: specs.Mount{Destination: "/x", Type: "bind", Source: "/x", Options: []string{"idmap=uids=0-1-10"}}, err: "mount option idmap=uids=0-1-10 is not supported"},
		{name: "tmpcopyup on a bind", in: specs.Mount{Destination: "/x", Type: "bind", Source: "/x", Options: []string{"tmpcopyup"}}, err: "tmpcopyup applies only to tmpfs, not bind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w warnings
			got, err := convertMount(tt.in, bundle, "/nonexistent/rootfs", w.warnf)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if tt.warn != "" && !w.contains(tt.warn) {
				t.Errorf("warnings %q do not mention %q", w, tt.warn)
			}
			if tt.warn == "" && len(w) > 0 {
				t.Errorf("unexpected warnings %q", w)
			}
		})
	}
}

// TestExampleRoundTrip writes Example() into a bundle, loads it back and
// converts it: the default config must work as is.
func TestExampleRoundTrip(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	bundle := newBundle(t)
	if err := WriteSpec(bundle, Example()); err != nil {
		t.Fatal(err)
	}
	spec, err := LoadSpec(bundle, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, w := mustConvert(t, spec, Options{Bundle: bundle})

	if want := filepath.Join(bundle, "rootfs"); c.Rootfs != want || !c.Readonlyfs || c.Bundle != bundle {
		t.Errorf("rootfs %q readonly %v bundle %q, want %q true %q", c.Rootfs, c.Readonlyfs, c.Bundle, want, bundle)
	}
	if c.OCIVersion != specs.Version || c.Hostname != "nanobox" {
		t.Errorf("ociVersion %q hostname %q", c.OCIVersion, c.Hostname)
	}
	p := c.Process
	if !reflect.DeepEqual(p.Args, []string{"sh"}) || p.Cwd != "/" || !p.Terminal || !p.NoNewPrivileges || len(p.Env) != 2 {
		t.Errorf("process %+v", p)
	}
	wantCaps := []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	if p.Capabilities == nil || !reflect.DeepEqual(p.Capabilities.Bounding, wantCaps) ||
		!reflect.DeepEqual(p.Capabilities.Permitted, wantCaps) || !reflect.DeepEqual(p.Capabilities.Effective, wantCaps) ||
		p.Capabilities.Ambient != nil || p.Capabilities.Inheritable != nil {
		t.Errorf("capabilities %+v", p.Capabilities)
	}
	if want := []libbox.Rlimit{{Type: unix.RLIMIT_NOFILE, Hard: 1024, Soft: 1024}}; !reflect.DeepEqual(p.Rlimits, want) {
		t.Errorf("rlimits %+v, want %+v", p.Rlimits, want)
	}
	if len(c.Mounts) != 7 {
		t.Fatalf("%d mounts, want 7", len(c.Mounts))
	}
	if m := mountAt(t, c, "/dev/pts"); m.Type != "devpts" || m.Flags != unix.MS_NOSUID|unix.MS_NOEXEC || m.Data != "newinstance,ptmxmode=0666,mode=0620,gid=5" {
		t.Errorf("/dev/pts %+v", m)
	}
	if m := mountAt(t, c, "/sys"); m.Type != "sysfs" || m.Flags != unix.MS_NOSUID|unix.MS_NOEXEC|unix.MS_NODEV|unix.MS_RDONLY || m.IsBind() {
		t.Errorf("/sys %+v", m)
	}
	if m := mountAt(t, c, "/sys/fs/cgroup"); m.Flags&unix.MS_RELATIME == 0 || m.Flags&unix.MS_RDONLY == 0 {
		t.Errorf("/sys/fs/cgroup %+v", m)
	}
	var types []libbox.NamespaceType
	for _, ns := range c.Namespaces {
		types = append(types, ns.Type)
	}
	if want := []libbox.NamespaceType{libbox.NEWPID, libbox.NEWNET, libbox.NEWIPC, libbox.NEWUTS, libbox.NEWNS}; !reflect.DeepEqual(types, want) {
		t.Errorf("namespaces %v, want %v", types, want)
	}
	if len(c.MaskedPaths) != 11 || c.MaskedPaths[0] != "/proc/acpi" || len(c.ReadonlyPaths) != 5 || c.ReadonlyPaths[3] != "/proc/sys" {
		t.Errorf("masked %v readonly %v", c.MaskedPaths, c.ReadonlyPaths)
	}
	if c.UIDMappings != nil {
		t.Errorf("unexpected user mappings %v", c.UIDMappings)
	}
	// The example's one device rule, deny all, converted; no warning.
	if r := c.Resources; r == nil || len(r.Devices) != 1 || r.Devices[0].Allow || r.Devices[0].Permissions != "rwm" || libbox.HasLimits(r) {
		t.Errorf("resources %+v", c.Resources)
	}
	if w.contains("linux.resources") {
		t.Errorf("resources warning %q", w)
	}
}

func TestExampleCgroupNamespace(t *testing.T) {
	h := fakeHost(t, unix.CAP_LAST_CAP)
	h.cgroup2Unified = func() bool { return true }
	ns := Example().Linux.Namespaces
	if ns[len(ns)-1].Type != specs.CgroupNamespace {
		t.Errorf("cgroup v2 host: namespaces %v lack cgroup", ns)
	}
	h.cgroup2Unified = func() bool { return false }
	for _, n := range Example().Linux.Namespaces {
		if n.Type == specs.CgroupNamespace {
			t.Errorf("cgroup v1 host: unexpected cgroup namespace")
		}
	}
}

func TestToRootless(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	ToRootless(spec)

	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == specs.NetworkNamespace {
			t.Errorf("network namespace kept")
		}
	}
	if last := spec.Linux.Namespaces[len(spec.Linux.Namespaces)-1]; last.Type != specs.UserNamespace {
		t.Errorf("last namespace %v, want user", last)
	}
	if spec.Linux.Resources != nil {
		t.Errorf("resources kept: %+v", spec.Linux.Resources)
	}
	want := []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(os.Geteuid()), Size: 1}}
	if !reflect.DeepEqual(spec.Linux.UIDMappings, want) {
		t.Errorf("uidMappings %v, want %v", spec.Linux.UIDMappings, want)
	}
	// Applying it twice must not add a second user namespace.
	ToRootless(spec)
	n := 0
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == specs.UserNamespace {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d user namespaces after ToRootless twice", n)
	}

	c, w := mustConvert(t, spec, Options{Rootless: true})
	if !hasNS(c, libbox.NEWUSER) || hasNS(c, libbox.NEWNET) {
		t.Errorf("rootless namespaces %v", c.Namespaces)
	}
	if m := mountAt(t, c, "/sys"); m.Type != "bind" || m.Source != "/sys" || m.Flags != unix.MS_BIND|unix.MS_REC|unix.MS_NOSUID|unix.MS_NOEXEC|unix.MS_NODEV|unix.MS_RDONLY {
		t.Errorf("/sys %+v", m)
	}
	if m := mountAt(t, c, "/dev/pts"); strings.Contains(m.Data, "gid=") {
		t.Errorf("/dev/pts data %q still has gid=", m.Data)
	}
	if w.contains("linux.resources") {
		t.Errorf("resources warning for a spec without resources: %q", w)
	}
}

func TestUserNamespaces(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	withUserNS := func(path string, uid, gid []specs.LinuxIDMapping) *specs.Spec {
		s := Example()
		s.Linux.Resources = nil
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace, Path: path})
		s.Linux.UIDMappings, s.Linux.GIDMappings = uid, gid
		return s
	}
	uidMap := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	gidMap := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 200000, Size: 65536}}

	t.Run("explicit mappings", func(t *testing.T) {
		c, _ := mustConvert(t, withUserNS("", uidMap, gidMap), Options{})
		if want := []libbox.IDMap{{ContainerID: 0, HostID: 100000, Size: 65536}}; !reflect.DeepEqual(c.UIDMappings, want) {
			t.Errorf("uid mappings %v, want %v", c.UIDMappings, want)
		}
		if want := []libbox.IDMap{{ContainerID: 0, HostID: 200000, Size: 65536}}; !reflect.DeepEqual(c.GIDMappings, want) {
			t.Errorf("gid mappings %v, want %v", c.GIDMappings, want)
		}
	})
	t.Run("rootless default mapping", func(t *testing.T) {
		c, _ := mustConvert(t, withUserNS("", nil, nil), Options{Rootless: true})
		if want := []libbox.IDMap{{ContainerID: 0, HostID: uint32(os.Geteuid()), Size: 1}}; !reflect.DeepEqual(c.UIDMappings, want) {
			t.Errorf("uid mappings %v, want %v", c.UIDMappings, want)
		}
		if want := []libbox.IDMap{{ContainerID: 0, HostID: uint32(os.Getegid()), Size: 1}}; !reflect.DeepEqual(c.GIDMappings, want) {
			t.Errorf("gid mappings %v, want %v", c.GIDMappings, want)
		}
	})
	t.Run("joined user namespace needs no mappings", func(t *testing.T) {
		c, _ := mustConvert(t, withUserNS("/proc/42/ns/user", nil, nil), Options{Rootless: true})
		if ns, _ := c.NamespaceOf(libbox.NEWUSER); ns.Path != "/proc/42/ns/user" || c.UIDMappings != nil {
			t.Errorf("user ns %+v mappings %v", ns, c.UIDMappings)
		}
	})

	errCases := []struct {
		name string
		spec *specs.Spec
		opts Options
		err  string
	}{
		{"root without mappings", withUserNS("", nil, nil), Options{}, "needs linux.uidMappings and linux.gidMappings"},
		{"only uid mappings", withUserNS("", uidMap, nil), Options{}, "must both be set"},
		{"zero size", withUserNS("", []specs.LinuxIDMapping{{Size: 0}}, gidMap), Options{}, "linux.uidMappings[0]: size must be at least 1"},
		{"overflow", withUserNS("", []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1 << 31, Size: 1 << 31}, {ContainerID: 1 << 31, HostID: 0xffffffff, Size: 2}}, gidMap), Options{}, "overflows"},
		{"overlap", withUserNS("", []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 10}, {ContainerID: 5, HostID: 5000, Size: 10}}, gidMap), Options{}, "overlap"},
		{"process uid unmapped", func() *specs.Spec {
			s := withUserNS("", nil, nil)
			s.Process.User.UID = 1000
			return s
		}(), Options{Rootless: true}, "process.user.uid 1000 is not mapped"},
		{"additional gid unmapped", func() *specs.Spec {
			s := withUserNS("", uidMap, gidMap)
			s.Process.User.AdditionalGids = []uint32{70000}
			return s
		}(), Options{}, "gid 70000 is not mapped"},
		{"relative namespace path", withUserNS("proc/1/ns/user", nil, nil), Options{}, "must be absolute"},
		{"rootless without user namespace", Example(), Options{Rootless: true}, "rootless container requires a user namespace: add {\"type\": \"user\"} to linux.namespaces"},
		{"mappings without user namespace", func() *specs.Spec {
			s := Example()
			s.Linux.UIDMappings, s.Linux.GIDMappings = uidMap, gidMap
			return s
		}(), Options{}, "need a user namespace"},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := convert(t, tt.spec, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error = %v, want %q", err, tt.err)
			}
		})
	}
}

// TestFromSpecErrors checks that each invalid or unsupported setting is
// refused with an error naming it.
func TestFromSpecErrors(t *testing.T) {
	one := 1
	zero := 0
	tests := []struct {
		name        string
		mutate      func(s *specs.Spec)
		lastCap     int
		err         string
		unsupported bool
	}{
		{name: "missing rootfs", mutate: func(s *specs.Spec) { s.Root.Path = "nope" }, err: "/nope does not exist"},
		{name: "rootfs is a file", mutate: func(s *specs.Spec) { s.Root.Path = "/proc/self/status" }, err: "is not a directory"},
		{name: "no root", mutate: func(s *specs.Spec) { s.Root = nil }, err: "root.path is required"},
		{name: "no process", mutate: func(s *specs.Spec) { s.Process = nil }, err: "process is required"},
		{name: "empty args", mutate: func(s *specs.Spec) { s.Process.Args = nil }, err: "process.args must not be empty"},
		{name: "relative cwd", mutate: func(s *specs.Spec) { s.Process.Cwd = "home" }, err: `process.cwd "home" must be an absolute path`},
		{name: "bad env", mutate: func(s *specs.Spec) { s.Process.Env = append(s.Process.Env, "NOEQUALS") }, err: `process.env[2] "NOEQUALS"`},
		{name: "unknown rlimit", mutate: func(s *specs.Spec) {
			s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_FOO"})
		}, err: `unknown rlimit type "RLIMIT_FOO"`},
		{name: "duplicate rlimit", mutate: func(s *specs.Spec) { s.Process.Rlimits = append(s.Process.Rlimits, s.Process.Rlimits[0]) }, err: "duplicate rlimit type RLIMIT_NOFILE"},
		{name: "soft above hard", mutate: func(s *specs.Spec) { s.Process.Rlimits[0].Soft = 4096 }, err: "soft limit 4096 exceeds hard limit 1024"},
		{name: "oom score", mutate: func(s *specs.Spec) { v := 1001; s.Process.OOMScoreAdj = &v }, err: "process.oomScoreAdj 1001 is out of range"},
		{name: "umask", mutate: func(s *specs.Spec) { v := uint32(0o1000); s.Process.User.Umask = &v }, err: "process.user.umask"},
		{name: "scheduler policy", mutate: func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: "SCHED_FAST"} }, err: `process.scheduler.policy "SCHED_FAST" is not one of`},
		{name: "scheduler without policy", mutate: func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{} }, err: `process.scheduler.policy "" is not one of`},
		{name: "scheduler nice", mutate: func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: 20} }, err: "process.scheduler.nice 20 is out of range -20 to 19"},
		{name: "real-time priority 0", mutate: func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedFIFO} }, err: "process.scheduler.priority 0 is out of range 1 to 99 for SCHED_FIFO"},
		{name: "priority of SCHED_OTHER", mutate: func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Priority: 5} }, err: "process.scheduler.priority can only be set for SCHED_FIFO and SCHED_RR, not SCHED_OTHER"},
		{name: "deadline fields of SCHED_RR", mutate: func(s *specs.Spec) {
			s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedRR, Priority: 1, Period: 5}
		}, err: "runtime, deadline and period can only be set for SCHED_DEADLINE, not SCHED_RR"},
		{name: "scheduler flag", mutate: func(s *specs.Spec) {
			s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedBatch, Flags: []specs.LinuxSchedulerFlag{"SCHED_FLAG_FAST"}}
		}, err: `process.scheduler.flags: unknown flag "SCHED_FLAG_FAST"`},
		{name: "ioPriority class", mutate: func(s *specs.Spec) { s.Process.IOPriority = &specs.LinuxIOPriority{} }, err: `process.ioPriority.class "" is not one of IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE`},
		{name: "ioPriority level", mutate: func(s *specs.Spec) {
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_BE, Priority: 8}
		}, err: "process.ioPriority.priority 8 is out of range 0 (highest) to 7"},
		{name: "execCPUAffinity initial", mutate: func(s *specs.Spec) { s.Process.ExecCPUAffinity = &specs.CPUAffinity{Initial: "0-x"} }, err: `process.execCPUAffinity.initial: "0-x" is not a CPU list like 0-3,7: "x" is not a CPU number`},
		{name: "execCPUAffinity final", mutate: func(s *specs.Spec) { s.Process.ExecCPUAffinity = &specs.CPUAffinity{Final: "3-1"} }, err: `process.execCPUAffinity.final: "3-1" is not a CPU list: range 3-1 goes backwards`},
		{name: "execCPUAffinity too high", mutate: func(s *specs.Spec) { s.Process.ExecCPUAffinity = &specs.CPUAffinity{Final: "8192"} }, err: `"8192": CPU 8192 is above the highest CPU number Linux supports (8191)`},
		{name: "username", mutate: func(s *specs.Spec) { s.Process.User.Username = "root" }, err: "process.user.username is not supported", unsupported: true},
		{name: "intelRdt", mutate: func(s *specs.Spec) { s.Linux.IntelRdt = &specs.LinuxIntelRdt{} }, err: "linux.intelRdt is not supported", unsupported: true},
		{name: "personality domain", mutate: func(s *specs.Spec) { s.Linux.Personality = &specs.LinuxPersonality{Domain: "LINUX64"} }, err: `linux.personality.domain "LINUX64" is not one of LINUX, LINUX32`},
		{name: "personality flags", mutate: func(s *specs.Spec) {
			s.Linux.Personality = &specs.LinuxPersonality{Domain: specs.PerLinux, Flags: []specs.LinuxPersonalityFlag{"ADDR_NO_RANDOMIZE"}}
		}, err: "no personality flags are defined"},
		{name: "memoryPolicy empty", mutate: func(s *specs.Spec) { s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{} }, err: "linux.memoryPolicy.mode is empty: invalid memory policy mode: set it to one of MPOL_BIND, MPOL_DEFAULT"},
		{name: "memoryPolicy missing mode", mutate: func(s *specs.Spec) { s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Nodes: "0-7"} }, err: "linux.memoryPolicy.mode is empty: invalid memory policy mode"},
		{name: "memoryPolicy unknown mode", mutate: func(s *specs.Spec) { s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: "INTERLEAVE", Nodes: "0"} }, err: `linux.memoryPolicy.mode "INTERLEAVE": invalid memory policy mode: use one of MPOL_BIND, MPOL_DEFAULT`},
		{name: "memoryPolicy nodes", mutate: func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0-x"}
		}, err: `linux.memoryPolicy.nodes: invalid memory policy nodes: "0-x" is not a node list`},
		{name: "memoryPolicy node too high", mutate: func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0-9876543210"}
		}, err: `linux.memoryPolicy.nodes: invalid memory policy nodes: "0-9876543210": node 9876543210 is above the highest node number Linux supports (1023)`},
		{name: "memoryPolicy bind without nodes", mutate: func(s *specs.Spec) { s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind} }, err: "linux.memoryPolicy: invalid memory policy: the MPOL_BIND mode requires at least 1 node but got 0: name the nodes"},
		{name: "memoryPolicy default with nodes", mutate: func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolDefault, Nodes: "0-7"}
		}, err: "linux.memoryPolicy: invalid memory policy: the MPOL_DEFAULT mode requires 0 nodes but got 8: remove the nodes"},
		{name: "memoryPolicy local with flags", mutate: func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolLocal, Flags: []specs.MemoryPolicyFlagType{specs.MpolFStaticNodes}}
		}, err: "linux.memoryPolicy: invalid memory policy: the MPOL_LOCAL mode takes no flags"},
		{name: "memoryPolicy flags", mutate: func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0", Flags: []specs.MemoryPolicyFlagType{specs.MpolFRelativeNodes, specs.MpolFStaticNodes}}
		}, err: "invalid memory policy flags: MPOL_F_RELATIVE_NODES and MPOL_F_STATIC_NODES exclude each other"},
		{name: "memoryPolicy unknown flag", mutate: func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0", Flags: []specs.MemoryPolicyFlagType{"MPOL_F_FAST"}}
		}, err: `linux.memoryPolicy.flags: invalid memory policy flag "MPOL_F_FAST": use only MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES`},
		{name: "netDevices without a network namespace", mutate: func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {}}
			s.Linux.Namespaces = slices.DeleteFunc(s.Linux.Namespaces, func(n specs.LinuxNamespace) bool { return n.Type == specs.NetworkNamespace })
		}, err: "linux.netDevices: moving devices needs a network namespace"},
		{name: "netDevices host name too long", mutate: func(s *specs.Spec) { s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"a234567890123456": {}} }, err: `linux.netDevices: the host device name "a234567890123456" is longer than 15 bytes`},
		{name: "netDevices host name template", mutate: func(s *specs.Spec) { s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth%d": {}} }, err: `"eth%d" is a template, not a device`},
		{name: "netDevices name with slash", mutate: func(s *specs.Spec) { s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {Name: "a/b"}} }, err: `linux.netDevices["eth1"].name: "a/b" has a '/'`},
		{name: "netDevices bad template", mutate: func(s *specs.Spec) { s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {Name: "e%dx"}} }, err: `the only template is a trailing %d`},
		{name: "netDevices same target", mutate: func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {Name: "eth2"}, "eth2": {}}
		}, err: `linux.netDevices: "eth1" and "eth2" would both be "eth2" in the container`},
		{name: "timeOffsets without a time namespace", mutate: func(s *specs.Spec) {
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"monotonic": {Secs: 10}}
		}, err: "linux.timeOffsets need a new time namespace"},
		{name: "timeOffsets of a joined time namespace", mutate: func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.TimeNamespace, Path: "/proc/1/ns/time"})
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"monotonic": {Secs: 10}}
		}, err: "linux.timeOffsets need a new time namespace"},
		{name: "timeOffsets clock", mutate: func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.TimeNamespace})
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"realtime": {Secs: 10}}
		}, err: `linux.timeOffsets: clock "realtime" is not one of monotonic, boottime`},
		{name: "timeOffsets nanosecs", mutate: func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.TimeNamespace})
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"boottime": {Nanosecs: 1e9}}
		}, err: "linux.timeOffsets.boottime.nanosecs 1000000000 is not below one second"},
		{name: "windows", mutate: func(s *specs.Spec) { s.Windows = &specs.Windows{} }, err: "windows is not supported", unsupported: true},
		{name: "vm", mutate: func(s *specs.Spec) { s.VM = &specs.VM{} }, err: "vm is not supported", unsupported: true},
		{name: "ociVersion 2", mutate: func(s *specs.Spec) { s.Version = "2.0.0" }, err: `ociVersion "2.0.0" is not supported`},
		{name: "duplicate namespace", mutate: func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.PIDNamespace, Path: "/proc/1/ns/pid"})
		}, err: `duplicate namespace type "pid"`},
		{name: "unknown namespace", mutate: func(s *specs.Spec) { s.Linux.Namespaces[0].Type = "pids" }, err: `linux.namespaces[0]: unknown namespace type "pids"`},
		{name: "hostname without uts", mutate: func(s *specs.Spec) { s.Linux.Namespaces = s.Linux.Namespaces[4:] }, err: "hostname needs a uts namespace"},
		{name: "bad rootfsPropagation", mutate: func(s *specs.Spec) { s.Linux.RootfsPropagation = "sharred" }, err: `linux.rootfsPropagation "sharred"`},
		{name: "device type", mutate: func(s *specs.Spec) { s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/x", Type: "z"}} }, err: `linux.devices[0] (path "/dev/x"): type "z"`},
		{name: "device relative path", mutate: func(s *specs.Spec) { s.Linux.Devices = []specs.LinuxDevice{{Path: "dev/x", Type: "c"}} }, err: "must be an absolute path"},
		{name: "device negative major", mutate: func(s *specs.Spec) { s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/x", Type: "c", Major: -1}} }, err: "must not be negative"},
		{name: "duplicate device", mutate: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/x", Type: "c"}, {Path: "/dev//x", Type: "b"}}
		}, err: "duplicate device path /dev/x"},
		{name: "relative masked path", mutate: func(s *specs.Spec) { s.Linux.MaskedPaths = append(s.Linux.MaskedPaths, "proc/kcore") }, err: `linux.maskedPaths: "proc/kcore" must be an absolute path`},
		{name: "relative readonly path", mutate: func(s *specs.Spec) { s.Linux.ReadonlyPaths = []string{"x"} }, err: "linux.readonlyPaths"},
		{name: "mount error names the mount", mutate: func(s *specs.Spec) { s.Mounts[1].Options = append(s.Mounts[1].Options, "idmap") }, err: `mounts[1] (destination "/dev"): an idmapped mount must be a bind mount, not tmpfs`},
		{name: "relative hook", mutate: func(s *specs.Spec) { s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "hook.sh"}}} }, err: `hooks.poststop[0]: path "hook.sh" must be absolute`},
		{name: "zero hook timeout", mutate: func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/true", Timeout: &zero}}}
		}, err: "hooks.createRuntime[0]: timeout must be a positive number"},
		{name: "hook ok then bad", mutate: func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{StartContainer: []specs.Hook{{Path: "/bin/true", Timeout: &one}, {Path: ""}}}
		}, err: "hooks.startContainer[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lastCap := tt.lastCap
			if lastCap == 0 {
				lastCap = unix.CAP_LAST_CAP
			}
			fakeHost(t, lastCap)
			spec := Example()
			tt.mutate(spec)
			c, _, err := convert(t, spec, Options{})
			if err == nil {
				t.Fatalf("no error, config %+v", c)
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %q does not contain %q", err, tt.err)
			}
			if got := errors.Is(err, errors.ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", got, tt.unsupported)
			}
		})
	}
}

func TestNoPivotPrivatePropagation(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Linux.RootfsPropagation = "rprivate"
	c, _ := mustConvert(t, spec, Options{})
	if c.RootPropagation != unix.MS_PRIVATE|unix.MS_REC {
		t.Errorf("root propagation %#x", c.RootPropagation)
	}
	if _, _, err := convert(t, spec, Options{NoPivotRoot: true}); err == nil || !strings.Contains(err.Error(), "not safe without pivot_root") {
		t.Errorf("error = %v", err)
	}
	spec.Linux.RootfsPropagation = "rslave"
	c, _ = mustConvert(t, spec, Options{NoPivotRoot: true, NoNewKeyring: true})
	if !c.NoPivotRoot || !c.NoNewKeyring || c.RootPropagation != unix.MS_SLAVE|unix.MS_REC {
		t.Errorf("noPivot %v noNewKeyring %v propagation %#x", c.NoPivotRoot, c.NoNewKeyring, c.RootPropagation)
	}
}

// root.readonly without a mount namespace is passed on, with no warning,
// for libbox to refuse (runc 1.6 refuses it): never dropped.
func TestReadonlyRootWithoutMountNS(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Root.Readonly = true
	spec.Linux.Namespaces = slices.DeleteFunc(spec.Linux.Namespaces, func(n specs.LinuxNamespace) bool {
		return n.Type == specs.MountNamespace
	})
	spec.Linux.MaskedPaths, spec.Linux.ReadonlyPaths = nil, nil
	c, w := mustConvert(t, spec, Options{})
	if !c.Readonlyfs || len(w) != 0 {
		t.Errorf("readonly %v, warnings %q: want it kept, with no warning", c.Readonlyfs, w)
	}
}

// A bundle's init does not ask for huge pages (libbox.Config.InitHugePages):
// a created container's init would hold them until start, and many
// containers created at once would each take fresh ones.
func TestInitHugePages(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	c, _ := mustConvert(t, Example(), Options{})
	if c.InitHugePages {
		t.Error("a container's Config asks for huge pages in init")
	}
}

func TestSysctl(t *testing.T) {
	withNS := func(extra ...specs.LinuxNamespace) *specs.Spec {
		s := Example()
		s.Linux.Namespaces = append([]specs.LinuxNamespace{{Type: specs.MountNamespace}}, extra...)
		s.Hostname = ""
		return s
	}
	tests := []struct {
		name string
		spec *specs.Spec
		key  string
		err  string
	}{
		{"ipc sysctl with ipc ns", withNS(specs.LinuxNamespace{Type: specs.IPCNamespace}), "kernel.shmmax", ""},
		{"mqueue with ipc ns", withNS(specs.LinuxNamespace{Type: specs.IPCNamespace}), "fs.mqueue.msg_max", ""},
		{"ipc sysctl without ipc ns", withNS(), "kernel.msgmax", `needs a ipc namespace`},
		{"ipc sysctl in the runtime's ipc ns", withNS(specs.LinuxNamespace{Type: specs.IPCNamespace, Path: "/runtime/ns/ipc"}), "kernel.sem", "runtime's own ipc namespace"},
		{"net with new netns", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace}), "net.ipv4.ip_forward", ""},
		{"net slashed form", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace}), "net/ipv4/conf/eth0.100/rp_filter", ""},
		{"net with another container's netns", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: "/proc/42/ns/net"}), "net.core.somaxconn", ""},
		{"net with the host netns", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: "/runtime/ns/net"}), "net.core.somaxconn", "runtime's own network namespace"},
		{"net without netns", withNS(), "net.ipv4.ip_forward", "needs a network namespace"},
		{"domainname with uts", withNS(specs.LinuxNamespace{Type: specs.UTSNamespace}), "kernel.domainname", ""},
		{"hostname with uts", withNS(specs.LinuxNamespace{Type: specs.UTSNamespace}), "kernel.hostname", ""},
		{"hostname without uts", withNS(), "kernel.hostname", "needs a uts namespace"},
		{"host-wide sysctl", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace}), "kernel.core_pattern", "is not namespaced"},
		{"vm sysctl", withNS(), "vm.overcommit_memory", "is not namespaced"},
		{"path traversal", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace}), "net.ipv4/../../kernel.core_pattern", "not a valid name"},
		{"slashed traversal", withNS(specs.LinuxNamespace{Type: specs.NetworkNamespace}), "net/../kernel/core_pattern", "not a valid name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeHost(t, unix.CAP_LAST_CAP)
			tt.spec.Linux.Sysctl = map[string]string{tt.key: "1"}
			c, _, err := convert(t, tt.spec, Options{})
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Sysctl[tt.key] != "1" {
					t.Errorf("sysctl %v lacks %s", c.Sysctl, tt.key)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error = %v, want %q", err, tt.err)
			}
		})
	}

	t.Run("hostname sysctl conflicts with the hostname field", func(t *testing.T) {
		fakeHost(t, unix.CAP_LAST_CAP)
		s := Example()
		s.Linux.Sysctl = map[string]string{"kernel.hostname": "x"}
		if _, _, err := convert(t, s, Options{}); err == nil || !strings.Contains(err.Error(), "conflicts with the hostname field") {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestLSMLabels(t *testing.T) {
	for _, tt := range []struct {
		field   string
		set     func(s *specs.Spec)
		enabled func(h *hostProbe)
	}{
		{"process.selinuxLabel", func(s *specs.Spec) { s.Process.SelinuxLabel = "system_u:system_r:container_t:s0" }, func(h *hostProbe) { h.seLinuxEnabled = func() bool { return true } }},
		{"linux.mountLabel", func(s *specs.Spec) { s.Linux.MountLabel = "system_u:object_r:container_file_t:s0" }, func(h *hostProbe) { h.seLinuxEnabled = func() bool { return true } }},
	} {
		t.Run(tt.field, func(t *testing.T) {
			h := fakeHost(t, unix.CAP_LAST_CAP)
			spec := Example()
			tt.set(spec)
			_, w, err := convert(t, spec, Options{})
			if err != nil {
				t.Fatalf("LSM absent: %v", err)
			}
			if !w.contains(tt.field) || !w.contains("is not enabled on this host") {
				t.Errorf("LSM absent: warnings %q do not mention %s", w, tt.field)
			}
			tt.enabled(h)
			_, _, err = convert(t, spec, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.field) || !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("LSM enabled: error = %v, want an unsupported error naming %s", err, tt.field)
			}
		})
	}
}

func TestAppArmorProfile(t *testing.T) {
	h := fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Process.ApparmorProfile = "cri-containerd.apparmor.d"
	// Not enabled: refused, as runc fails at start, with the problem and
	// the fix on one line.
	_, _, err := convert(t, spec, Options{})
	if err == nil {
		t.Fatal("a profile on a host without AppArmor was accepted")
	}
	for _, want := range []string{`process.apparmorProfile "cri-containerd.apparmor.d"`, "AppArmor is not enabled on this host",
		"/sys/module/apparmor/parameters/enabled", "leave process.apparmorProfile out"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	// Enabled: carried to the process, which init confines at execve.
	h.appArmorEnabled = func() bool { return true }
	cfg, _, err := convert(t, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Process.AppArmorProfile != "cri-containerd.apparmor.d" {
		t.Errorf("Process.AppArmorProfile = %q", cfg.Process.AppArmorProfile)
	}
	// An exec'd process's profile goes through the same check.
	h.appArmorEnabled = func() bool { return false }
	if _, err := AppArmorProfile("--apparmor", "x"); err == nil || !strings.HasPrefix(err.Error(), `--apparmor "x": `) {
		t.Errorf("--apparmor: %v", err)
	}
	if p, err := AppArmorProfile("--apparmor", ""); p != "" || err != nil {
		t.Errorf("no profile: %q, %v", p, err)
	}
}

func TestProcessDetails(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	umask := uint32(0o27)
	oom := -500
	spec.Process.User = specs.User{UID: 1, GID: 2, AdditionalGids: []uint32{3, 4}, Umask: &umask}
	spec.Process.ConsoleSize = &specs.Box{Height: 24, Width: 80}
	spec.Process.OOMScoreAdj = &oom
	spec.Process.Cwd = "/home/../srv/"
	spec.Process.Rlimits = append(spec.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_CORE", Hard: 0, Soft: 0})
	spec.Process.Capabilities = &specs.LinuxCapabilities{}
	c, _ := mustConvert(t, spec, Options{})
	p := c.Process
	if p.User.UID != 1 || p.User.GID != 2 || !reflect.DeepEqual(p.User.AdditionalGids, []uint32{3, 4}) || p.User.Umask == nil || *p.User.Umask != 0o27 {
		t.Errorf("user %+v", p.User)
	}
	if p.ConsoleWidth != 80 || p.ConsoleHeight != 24 || p.OOMScoreAdj == nil || *p.OOMScoreAdj != -500 || p.Cwd != "/srv" {
		t.Errorf("process %+v", p)
	}
	if len(p.Rlimits) != 2 || p.Rlimits[1].Type != unix.RLIMIT_CORE {
		t.Errorf("rlimits %+v", p.Rlimits)
	}
	// An empty capabilities object means no capabilities, not the default.
	if p.Capabilities == nil || p.Capabilities.Bounding != nil {
		t.Errorf("capabilities %+v, want empty non-nil", p.Capabilities)
	}
	spec.Process.Capabilities = nil
	if c, _ = mustConvert(t, spec, Options{}); c.Process.Capabilities != nil {
		t.Errorf("nil capabilities became %+v", c.Process.Capabilities)
	}
}

func TestPersonalityAndMemoryPolicy(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Linux.Personality = &specs.LinuxPersonality{Domain: specs.PerLinux32}
	spec.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolInterleave, Nodes: "0-2,5",
		Flags: []specs.MemoryPolicyFlagType{specs.MpolFStaticNodes}}
	c, _ := mustConvert(t, spec, Options{})
	if c.Personality == nil || *c.Personality != libbox.PerLinux32 {
		t.Errorf("personality %v", c.Personality)
	}
	want := &libbox.MemoryPolicy{Mode: libbox.MPolInterleave, Flags: libbox.MPolFStaticNodes, Nodes: []uint{0, 1, 2, 5}}
	if !reflect.DeepEqual(c.MemoryPolicy, want) {
		t.Errorf("memory policy %+v, want %+v", c.MemoryPolicy, want)
	}
	spec.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolLocal}
	if c, _ = mustConvert(t, spec, Options{}); c.MemoryPolicy == nil || c.MemoryPolicy.Mode != libbox.MPolLocal || c.MemoryPolicy.Nodes != nil {
		t.Errorf("MPOL_LOCAL: %+v", c.MemoryPolicy)
	}
}

// A namespace type left out is inherited, the mount namespace too; a spec
// with no linux section at all shares every namespace.
func TestInheritedNamespaces(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	var kept []specs.LinuxNamespace
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type != specs.MountNamespace {
			kept = append(kept, ns)
		}
	}
	spec.Linux.Namespaces = kept
	c, _ := mustConvert(t, spec, Options{})
	if _, ok := c.NamespaceOf(libbox.NEWNS); ok || len(c.Namespaces) != len(kept) {
		t.Errorf("namespaces %+v", c.Namespaces)
	}
	spec = Example()
	spec.Linux = nil
	spec.Hostname = ""
	c, _ = mustConvert(t, spec, Options{})
	if len(c.Namespaces) != 0 {
		t.Errorf("no linux section: namespaces %+v", c.Namespaces)
	}
}

// Unknown capabilities, and ones the running kernel lacks, are dropped with
// a warning naming the set (runc 1.2 and later), never a create failure.
func TestUnknownCapabilitiesDropped(t *testing.T) {
	fakeHost(t, unix.CAP_PERFMON)
	spec := Example()
	spec.Process.Capabilities = &specs.LinuxCapabilities{
		Bounding:    []string{"CAP_KILL", "CAP_FLY", "cap_chown"},
		Permitted:   []string{"CAP_KILL", "CAP_BPF"},
		Effective:   []string{"CAP_KILL"},
		Inheritable: []string{"CAP_BPF"},
		Ambient:     []string{"CAP_BPF"},
	}
	c, w := mustConvert(t, spec, Options{})
	caps := c.Process.Capabilities
	if !reflect.DeepEqual(caps.Bounding, []string{"CAP_KILL"}) || !reflect.DeepEqual(caps.Permitted, []string{"CAP_KILL"}) ||
		len(caps.Inheritable) != 0 || len(caps.Ambient) != 0 || !reflect.DeepEqual(caps.Effective, []string{"CAP_KILL"}) {
		t.Errorf("capabilities %+v", caps)
	}
	for _, want := range []string{
		`process.capabilities.bounding: ignoring unknown capabilities "CAP_FLY", "cap_chown"`,
		"process.capabilities.permitted: ignoring CAP_BPF, not supported by the running kernel",
		"process.capabilities.ambient: ignoring CAP_BPF, not supported",
	} {
		if !w.contains(want) {
			t.Errorf("warnings %q do not mention %q", w, want)
		}
	}
}

// An ambient capability that is not also inheritable and permitted cannot
// be raised: runc warns, in these words, once per capability, and the
// container runs with the rest (runc's suite: capabilities.bats).
func TestAmbientNotInheritableWarns(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Process.Capabilities = &specs.LinuxCapabilities{
		Bounding:    []string{"CAP_KILL", "CAP_CHOWN", "CAP_NET_RAW"},
		Permitted:   []string{"CAP_KILL", "CAP_CHOWN", "CAP_NET_RAW"},
		Inheritable: []string{"CAP_KILL", "CAP_NET_RAW"},
		Ambient:     []string{"CAP_KILL", "CAP_CHOWN", "CAP_NET_RAW"},
	}
	c, w := mustConvert(t, spec, Options{})
	if got := c.Process.Capabilities.Ambient; !reflect.DeepEqual(got, []string{"CAP_KILL", "CAP_NET_RAW"}) {
		t.Errorf("ambient %v, want CAP_KILL and CAP_NET_RAW", got)
	}
	if !w.contains("can't raise ambient capability CAP_CHOWN: ") {
		t.Errorf("warnings %q: none says CAP_CHOWN cannot be raised", w)
	}
	if w.contains("capability CAP_KILL") {
		t.Errorf("warnings %q name a capability that was raised", w)
	}
}

func TestDevicesHooksAndCopiedFields(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	mode := os.FileMode(0o620) | os.ModeDevice | os.ModeCharDevice // as engines fill it from os.Stat
	uid, gid := uint32(5), uint32(6)
	spec.Linux.Devices = []specs.LinuxDevice{
		{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229},
		{Path: "/dev/tty9", Type: "u", Major: 4, Minor: 9, FileMode: &mode, UID: &uid, GID: &gid},
		{Path: "/dev/loop0", Type: "b", Major: 7, Minor: 0},
		{Path: "/dev/fifo", Type: "p"},
	}
	timeout := 5
	spec.Hooks = &specs.Hooks{
		Prestart:        []specs.Hook{{Path: "/bin/pre"}}, //nolint:staticcheck // deprecated but still converted
		CreateRuntime:   []specs.Hook{{Path: "/bin/cr", Args: []string{"cr", "x"}, Env: []string{"A=1"}, Timeout: &timeout}},
		CreateContainer: []specs.Hook{{Path: "/bin/cc"}},
		StartContainer:  []specs.Hook{{Path: "/bin/sc"}},
		Poststart:       []specs.Hook{{Path: "/bin/ps"}},
		Poststop:        []specs.Hook{{Path: "/bin/pst"}, {Path: "/bin/pst2"}},
	}
	spec.Annotations = map[string]string{"a": "b"}
	spec.Domainname = "example.org"
	spec.Linux.CgroupsPath = "/nanobox/c1"
	spec.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}
	c, w := mustConvert(t, spec, Options{})

	want := []libbox.Device{
		{Type: 'c', Path: "/dev/fuse", Major: 10, Minor: 229, FileMode: 0o666},
		{Type: 'c', Path: "/dev/tty9", Major: 4, Minor: 9, FileMode: 0o620, UID: 5, GID: 6},
		{Type: 'b', Path: "/dev/loop0", Major: 7, Minor: 0, FileMode: 0o666},
		{Type: 'p', Path: "/dev/fifo", FileMode: 0o666},
	}
	if !reflect.DeepEqual(c.Devices, want) {
		t.Errorf("devices %+v\nwant %+v", c.Devices, want)
	}
	h := c.Hooks
	if len(h.Prestart) != 1 || len(h.CreateContainer) != 1 || len(h.StartContainer) != 1 || len(h.Poststart) != 1 || len(h.Poststop) != 2 {
		t.Errorf("hooks %+v", h)
	}
	if cr := h.CreateRuntime; len(cr) != 1 || cr[0].Timeout != 5*time.Second || cr[0].Path != "/bin/cr" || !reflect.DeepEqual(cr[0].Args, []string{"cr", "x"}) || cr[0].Env[0] != "A=1" {
		t.Errorf("createRuntime %+v", cr)
	}
	if h.Poststop[0].Timeout != 0 {
		t.Errorf("hook without timeout got %v", h.Poststop[0].Timeout)
	}
	if c.Annotations["a"] != "b" || c.Domainname != "example.org" || c.CgroupsPath != "/nanobox/c1" {
		t.Errorf("annotations %v domainname %q cgroupsPath %q", c.Annotations, c.Domainname, c.CgroupsPath)
	}
	if c.Seccomp == nil || c.Seccomp.DefaultAction != libbox.SeccompErrno || w.contains("seccomp") {
		t.Errorf("seccomp %+v, warnings %q", c.Seccomp, w)
	}
}

func TestRootfsPath(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	bundle := newBundle(t)
	abs := t.TempDir()
	link := filepath.Join(bundle, "link")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{"rootfs", filepath.Join(bundle, "rootfs")},
		{"./rootfs/", filepath.Join(bundle, "rootfs")},
		{abs, abs},
		{"link", abs}, // the real path is recorded
	} {
		spec := Example()
		spec.Root.Path = tt.in
		c, _ := mustConvert(t, spec, Options{Bundle: bundle})
		if c.Rootfs != tt.want {
			t.Errorf("root.path %q: rootfs %q, want %q", tt.in, c.Rootfs, tt.want)
		}
	}
}

func TestLoadSpec(t *testing.T) {
	write := func(t *testing.T, content string) string {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	t.Run("missing file", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadSpec(dir, nil)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("error = %v, want ErrNotExist", err)
		}
		for _, s := range []string{"config.json not found in bundle " + dir, "nanobox-runc spec"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
	})
	t.Run("malformed json names the file and line", func(t *testing.T) {
		dir := write(t, "{\n  \"ociVersion\": \"1.0.0\",\n  \"process\": {,\n}\n")
		_, err := LoadSpec(dir, nil)
		var syntaxErr *json.SyntaxError
		if err == nil || !errors.As(err, &syntaxErr) {
			t.Fatalf("error = %v, want a wrapped json.SyntaxError", err)
		}
		for _, s := range []string{filepath.Join(dir, "config.json"), "line 3, column 15", "invalid character ','"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		_, err := LoadSpec(write(t, `{"process": {"args": "sh"}}`), nil)
		if err == nil || !strings.Contains(err.Error(), "line 1, column") || !strings.Contains(err.Error(), "process.args") {
			t.Fatalf("error = %v", err)
		}
	})
	for _, tt := range []struct{ name, json, err string }{
		{"no process", `{"root": {"path": "rootfs"}}`, "process is required"},
		{"no args", `{"process": {"cwd": "/"}, "root": {"path": "rootfs"}}`, "process.args must not be empty"},
		{"no root", `{"process": {"args": ["sh"], "cwd": "/"}}`, "root is required"},
		{"no root path", `{"process": {"args": ["sh"], "cwd": "/"}, "root": {}}`, "root.path is required"},
		{"null", `null`, "process is required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := write(t, tt.json)
			_, err := LoadSpec(dir, nil)
			want := filepath.Join(dir, "config.json") + ": " + tt.err
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v, want %q", err, want)
			}
		})
	}
	t.Run("unknown properties are ignored, each with a warning naming it", func(t *testing.T) {
		var warnings []string
		warnf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
		dir := write(t, `{"ociVersion": "1.0.2", "future": {"x": 1}, "process": {"args": ["sh"], "cwd": "/", "newThing": true}, "root": {"path": "rootfs"}}`)
		spec, err := LoadSpec(dir, warnf)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Version != "1.0.2" || spec.Process.Args[0] != "sh" || spec.Root.Path != "rootfs" {
			t.Errorf("spec %+v", spec)
		}
		want := []string{
			filepath.Join(dir, "config.json") + ": unknown key future ignored (not in runtime-spec " + specs.Version + ": a typo?)",
			filepath.Join(dir, "config.json") + ": unknown key process.newThing ignored (not in runtime-spec " + specs.Version + ": a typo?)",
		}
		if !reflect.DeepEqual(warnings, want) {
			t.Errorf("warnings:\n%q\nwant\n%q", warnings, want)
		}
	})
}

func TestWriteSpec(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	dir := t.TempDir()
	if err := WriteSpec(dir, Example()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "{\n\t\"ociVersion\": ") {
		t.Errorf("not tab-indented: %.40q", data)
	}
	err = WriteSpec(dir, Example())
	if err == nil || !strings.Contains(err.Error(), "exists") || !strings.Contains(err.Error(), "remove it first") {
		t.Fatalf("second write: error = %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(after) != string(data) {
		t.Errorf("existing config.json was modified")
	}
}

func TestKnownLists(t *testing.T) {
	fakeHost(t, unix.CAP_PERFMON)
	caps := KnownCapabilities()
	if caps[0] != "CAP_CHOWN" || caps[len(caps)-1] != "CAP_PERFMON" || len(caps) != unix.CAP_PERFMON+1 {
		t.Errorf("capabilities for cap_last_cap %d: %v", unix.CAP_PERFMON, caps)
	}
	if want := []string{"cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"}; !reflect.DeepEqual(KnownNamespaces(), want) {
		t.Errorf("namespaces %v", KnownNamespaces())
	}
	opts := strings.Join(KnownMountOptions(), " ")
	for _, o := range []string{"ro", "rw", "rbind", "rprivate", "nosymfollow", "defaults"} {
		if !strings.Contains(" "+opts+" ", " "+o+" ") {
			t.Errorf("mount options lack %s: %s", o, opts)
		}
	}
	for _, o := range []string{"idmap", "ridmap", "rro", "rnosymfollow", "rnoatime"} {
		if !strings.Contains(" "+opts+" ", " "+o+" ") {
			t.Errorf("mount options lack %s: %s", o, opts)
		}
	}
	if strings.Contains(opts, "idmap=") {
		t.Errorf("mount options list an unsupported option: %s", opts)
	}
	f := Features()
	if f.OCIVersionMax != specs.Version || len(f.Hooks) != 6 || !*f.Linux.Seccomp.Enabled || !*f.Linux.Cgroup.V1 || !*f.Linux.Cgroup.V2 || *f.Linux.Cgroup.Systemd || len(f.Linux.Capabilities) != len(caps) {
		t.Errorf("features %+v", f)
	}
}

// TestStripRootfs: a destination under the rootfs's host path is taken
// relative to the rootfs, as runc's stripRoot does; anything else, and a
// rootfs of "/", is kept. A ".." that climbs out of the rootfs was already
// cleaned away, so it is not under the rootfs and stays a container path.
func TestStripRootfs(t *testing.T) {
	for _, c := range []struct {
		dest, rootfs, want string
	}{
		{"/b/rootfs/final", "/b/rootfs", "/final"},
		{"/b/rootfs", "/b/rootfs", "/"},
		{"/b/rootfsx/final", "/b/rootfs", "/b/rootfsx/final"},
		{"/data", "/", "/data"},
		{filepath.Clean("/b/rootfs/../escape"), "/b/rootfs", "/b/escape"},
	} {
		if got := stripRootfs(c.dest, c.rootfs); got != c.want {
			t.Errorf("stripRootfs(%q, %q) = %q, want %q", c.dest, c.rootfs, got, c.want)
		}
	}
}
