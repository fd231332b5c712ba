package libbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/containerd/console"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// Pure logic first; the real thing (in fresh namespaces) further down.

func TestSysctlPath(t *testing.T) {
	for key, want := range map[string]string{
		"kernel.msgmax":                     "kernel/msgmax",
		"net.ipv4.ip_forward":               "net/ipv4/ip_forward",
		"net/ipv4/conf/eth0.100/forwarding": "net/ipv4/conf/eth0.100/forwarding",
		"/kernel/msgmax":                    "kernel/msgmax",
		"..":                                "",
		"kernel/../../etc/passwd":           "",
		"kernel..msgmax":                    "",
		"":                                  "",
	} {
		got, err := sysctlPath(key)
		if want == "" {
			if err == nil {
				t.Errorf("sysctlPath(%q) = %q, want an error", key, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("sysctlPath(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
}

func TestMountErrorFormat(t *testing.T) {
	err := error(&mountError{op: "mount", source: "proc", target: "/proc", err: unix.EPERM})
	if got, want := err.Error(), "mount proc to /proc: operation not permitted"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, unix.EPERM) {
		t.Error("mountError does not unwrap to its cause")
	}
	err = &mountError{op: "remount", target: "/data", err: unix.EROFS}
	if got, want := err.Error(), "remount /data: read-only file system"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStatfsMountFlags(t *testing.T) {
	for _, c := range []struct {
		st    int64
		want  uintptr
		names string
	}{
		{unix.ST_RDONLY | unix.ST_NODEV | unix.ST_RELATIME | unix.ST_NOEXEC, unix.MS_RDONLY | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RELATIME, "ro,nodev,noexec,relatime"},
		// The kernel stores no strictatime: a mount with no atime mode has it.
		{unix.ST_NOSUID, unix.MS_NOSUID | unix.MS_STRICTATIME, "nosuid,strictatime"},
		{unix.ST_NOATIME | unix.ST_NODIRATIME, unix.MS_NOATIME | unix.MS_NODIRATIME, "noatime,nodiratime"},
	} {
		got := statfsMountFlags(c.st)
		if got != c.want {
			t.Errorf("statfsMountFlags(%#x) = %#x, want %#x", c.st, got, c.want)
		}
		if n := mountFlagNames(got); n != c.names {
			t.Errorf("mountFlagNames(%#x) = %q, want %q", got, n, c.names)
		}
	}
}

func TestCgroupMatching(t *testing.T) {
	own := []cgroupLine{
		{id: "9", controllers: []string{"name=systemd"}, path: "/user.slice/c1"},
		{id: "4", controllers: []string{"cpu", "cpuacct"}, path: "/c1"},
		{id: "3", controllers: []string{"memory"}, path: "/outside"},
		{id: "0", path: "/c1"},
	}
	for _, tc := range []struct {
		info   mountinfo.Info
		want   string
		wantOK bool
	}{
		{mountinfo.Info{FSType: "cgroup", VFSOptions: "rw,cpu,cpuacct", Root: "/"}, "/c1", true},
		{mountinfo.Info{FSType: "cgroup", VFSOptions: "rw,xattr,name=systemd", Root: "/user.slice"}, "/c1", true},
		{mountinfo.Info{FSType: "cgroup", VFSOptions: "rw,memory", Root: "/c1"}, "", false},
		{mountinfo.Info{FSType: "cgroup", VFSOptions: "rw,pids", Root: "/"}, "", false},
		{mountinfo.Info{FSType: "cgroup2", VFSOptions: "rw", Root: "/c1"}, "/", true},
		// Seen from a cgroup namespace below the mount's root.
		{mountinfo.Info{FSType: "cgroup", VFSOptions: "rw,cpu,cpuacct", Root: "/.."}, "", false},
	} {
		var got string
		var ok bool
		if l := matchCgroup(own, &tc.info); l != nil {
			got, ok = relCgroupPath(tc.info.Root, l.path)
		}
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%+v: got %q, %v; want %q, %v", tc.info, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestContainerDevices(t *testing.T) {
	cfg := &Config{Devices: []Device{
		{Type: 'c', Path: "/dev/null", Major: 1, Minor: 3, FileMode: 0o600},
		{Type: 'p', Path: "/dev/fifo", FileMode: 0o600},
	}}
	devs := containerDevices(cfg)
	if len(devs) != len(DefaultDevices)+1 {
		t.Fatalf("got %d devices, want %d", len(devs), len(DefaultDevices)+1)
	}
	for _, d := range devs {
		if d.Path == "/dev/null" && d.FileMode != 0o600 {
			t.Errorf("the config's /dev/null did not replace the default one")
		}
	}
	if !needsSetupDev(cfg) {
		t.Error("needsSetupDev without a /dev bind")
	}
	cfg.Mounts = []Mount{{Source: "/dev", Destination: "/dev/", Type: "bind", Flags: unix.MS_BIND | unix.MS_REC}}
	if needsSetupDev(cfg) {
		t.Error("needsSetupDev with the host's /dev bound")
	}
}

// The scenarios below run prepareRootfs, pivotRootfs, finalizeRootfs and
// mountConsole in a re-executed test binary in new namespaces, then check
// from inside what the container would see.

const rootfsHelperEnv = "NANOBOX_TEST_ROOTFS"

type rootfsScenario struct {
	Config Config
	// Console allocates a pty in the container's devpts and calls
	// mountConsole with its slave.
	Console bool
	// HostUnmounted are host paths that must not be mount points, checked
	// in the child's mount namespace between prepareRootfs and pivot_root.
	HostUnmounted []string
	Checks        []rootfsCheck
	// LockedTmpfs, when set, is a host directory on which a first stage
	// (root, private mount namespace) mounts a nosuid,nodev tmpfs holding
	// a file "f"; the second stage then runs in a new user namespace,
	// where that tmpfs's flags are locked.
	LockedTmpfs string
	// CgroupNS adds a new cgroup namespace.
	CgroupNS bool
	// UserNS runs the set-up in a new user namespace (uid and gid 0 mapped
	// to the host's 0) as well as new mount and pid namespaces.
	UserNS bool
}

// rootfsCheck is one assertion made from inside the container.
type rootfsCheck struct {
	Kind  string // see runRootfsCheck
	Path  string
	Want  string
	Major int64
	Minor int64
}

type rootfsResult struct {
	Err      string
	Failures []string
}

func init() {
	spec := os.Getenv(rootfsHelperEnv)
	if spec == "" {
		return
	}
	runtime.LockOSThread()
	var s rootfsScenario
	res := rootfsResult{}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		res.Err = err.Error()
	} else if s.LockedTmpfs != "" && os.Getenv(rootfsHelperEnv+"_STAGE") != "2" {
		os.Exit(rootfsStageOne(&s))
	} else {
		res = runRootfsScenario(&s)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	os.Exit(0)
}

// rootfsStageOne mounts the tmpfs of s.LockedTmpfs in this process's private
// mount namespace and runs the second stage in a user namespace.
func rootfsStageOne(s *rootfsScenario) int {
	fail := func(err error) int {
		_ = json.NewEncoder(os.Stdout).Encode(rootfsResult{Err: "stage one: " + err.Error()})
		return 0
	}
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fail(err)
	}
	if err := unix.Mount("tmpfs", s.LockedTmpfs, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k"); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(s.LockedTmpfs, "f"), []byte("locked"), 0o644); err != nil {
		return fail(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rootfsHelperEnv+"_STAGE=2")
	cmd.Dir = "/"
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = rootfsSysProcAttr(s)
	if err := cmd.Run(); err != nil {
		return fail(err)
	}
	return 0
}

func runRootfsScenario(s *rootfsScenario) rootfsResult {
	var res rootfsResult
	cfg := &s.Config
	if _, err := prepareRootfs(cfg, nil); err != nil {
		res.Err = err.Error()
		return res
	}
	for _, p := range s.HostUnmounted {
		if m, err := mountinfo.Mounted(p); err != nil || m {
			res.Failures = append(res.Failures, fmt.Sprintf("host path %s became a mount point (%v)", p, err))
		}
	}
	if err := pivotRootfs(cfg); err != nil {
		res.Err = err.Error()
		return res
	}
	if err := finalizeRootfs(cfg); err != nil {
		res.Err = err.Error()
		return res
	}
	if s.Console {
		pty, slave, err := console.NewPty()
		if err != nil {
			res.Err = "open pty: " + err.Error()
			return res
		}
		defer pty.Close()
		if err := mountConsole(slave); err != nil {
			res.Err = err.Error()
			return res
		}
	}
	for _, c := range s.Checks {
		if err := runRootfsCheck(c); err != nil {
			res.Failures = append(res.Failures, fmt.Sprintf("%s %s: %v", c.Kind, c.Path, err))
		}
	}
	return res
}

var fsMagics = map[string]int64{
	"proc":    unix.PROC_SUPER_MAGIC,
	"sysfs":   unix.SYSFS_MAGIC,
	"tmpfs":   unix.TMPFS_MAGIC,
	"devpts":  unix.DEVPTS_SUPER_MAGIC,
	"cgroup":  unix.CGROUP_SUPER_MAGIC,
	"cgroup2": unix.CGROUP2_SUPER_MAGIC,
	"mqueue":  0x19800202, // MQUEUE_MAGIC, not in x/sys/unix
}

func runRootfsCheck(c rootfsCheck) error {
	switch c.Kind {
	case "chardev", "fifo":
		var st unix.Stat_t
		if err := unix.Stat(c.Path, &st); err != nil {
			return err
		}
		if c.Kind == "fifo" {
			if st.Mode&unix.S_IFMT != unix.S_IFIFO {
				return fmt.Errorf("is a %s", describeStat(&st))
			}
			return nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || int64(unix.Major(st.Rdev)) != c.Major || int64(unix.Minor(st.Rdev)) != c.Minor {
			return fmt.Errorf("is a %s, want char device %d:%d", describeStat(&st), c.Major, c.Minor)
		}
		if c.Want != "" && fmt.Sprintf("%o", st.Mode&0o7777) != c.Want {
			return fmt.Errorf("mode %o, want %s", st.Mode&0o7777, c.Want)
		}
	case "fstype":
		var st unix.Statfs_t
		if err := unix.Statfs(c.Path, &st); err != nil {
			return err
		}
		if int64(st.Type) != fsMagics[c.Want] {
			return fmt.Errorf("filesystem type %#x, want %s", st.Type, c.Want)
		}
	case "flags": // statfs ST_* flags that must be set, e.g. "ro,nosuid"
		var st unix.Statfs_t
		if err := unix.Statfs(c.Path, &st); err != nil {
			return err
		}
		names := map[string]int64{"ro": unix.ST_RDONLY, "nosuid": unix.ST_NOSUID, "nodev": unix.ST_NODEV, "noexec": unix.ST_NOEXEC}
		for _, n := range strings.Split(c.Want, ",") {
			if st.Flags&names[n] == 0 {
				return fmt.Errorf("not %s (flags %#x)", n, st.Flags)
			}
		}
	case "mountpoint":
		m, err := mountinfo.Mounted(c.Path)
		if err != nil {
			return err
		}
		if !m {
			return errors.New("not a mount point")
		}
	case "symlink":
		got, err := os.Readlink(c.Path)
		if err != nil {
			return err
		}
		if got != c.Want {
			return fmt.Errorf("points to %q, want %q", got, c.Want)
		}
	case "content":
		b, err := os.ReadFile(c.Path)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) != c.Want {
			return fmt.Errorf("reads %q, want %q", b, c.Want)
		}
	case "emptydir":
		entries, err := os.ReadDir(c.Path)
		if err != nil {
			return err
		}
		if len(entries) != 0 {
			return fmt.Errorf("has %d entries", len(entries))
		}
	case "exists":
		_, err := os.Lstat(c.Path)
		return err
	case "erofs", "writable": // for a directory: create a file in it; else open for writing
		var err error
		if fi, serr := os.Stat(c.Path); serr == nil && fi.IsDir() {
			err = os.WriteFile(filepath.Join(c.Path, ".nanobox-test"), nil, 0o644)
		} else {
			var f *os.File
			if f, err = os.OpenFile(c.Path, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
		}
		if c.Kind == "writable" {
			return err
		}
		if !errors.Is(err, unix.EROFS) {
			return fmt.Errorf("got %v, want EROFS", err)
		}
	case "exec": // run a shell command with busybox and compare its output
		out, err := exec.Command("/bin/busybox", "sh", "-c", c.Path).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if strings.TrimSpace(string(out)) != c.Want {
			return fmt.Errorf("printed %q, want %q", out, c.Want)
		}
	default:
		return fmt.Errorf("unknown check %q", c.Kind)
	}
	return nil
}

func rootfsSysProcAttr(s *rootfsScenario) *syscall.SysProcAttr {
	attr := rootfsNamespaces(s)
	if s.CgroupNS {
		attr.Cloneflags |= syscall.CLONE_NEWCGROUP
	}
	return attr
}

func rootfsNamespaces(s *rootfsScenario) *syscall.SysProcAttr {
	if s.UserNS {
		return &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		}
	}
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS,
	}
}

// runRootfsHelper runs s in the child and returns its result.
func runRootfsHelper(t *testing.T, s rootfsScenario) rootfsResult {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rootfsHelperEnv+"="+string(b))
	cmd.Dir = "/"
	if s.LockedTmpfs != "" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	} else {
		cmd.SysProcAttr = rootfsSysProcAttr(&s)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var res rootfsResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("helper output %q: %v\nstderr: %s", out, err, stderr.String())
	}
	return res
}

// wantRootfsOK fails t unless the scenario ran cleanly.
func wantRootfsOK(t *testing.T, res rootfsResult) {
	t.Helper()
	if res.Err != "" {
		t.Fatalf("set-up failed: %s", res.Err)
	}
	for _, f := range res.Failures {
		t.Error(f)
	}
}

func wantRootfsErr(t *testing.T, res rootfsResult, want string) {
	t.Helper()
	if res.Err == "" {
		t.Fatalf("set-up succeeded, want an error containing %q", want)
	}
	if !strings.Contains(res.Err, want) {
		t.Fatalf("error %q does not contain %q", res.Err, want)
	}
}

func requireRootfsTests(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes mount, pid and user namespaces and mounts in them")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("needs /bin/busybox (Debian package busybox-static) for the test rootfs")
	}
}

// newTestRootfs makes a minimal rootfs: busybox and a few directories.
func newTestRootfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "etc", "proc", "sys", "tmp", "mnt"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.Open("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, "bin/busybox"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rtWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rtSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// rtListDir returns the names in dir, for host-side "nothing was created"
// checks.
func rtListDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// The mounts of a typical OCI config (runc spec), minus the cgroup one.
func baseMounts(rootless bool) []Mount {
	devpts := "newinstance,ptmxmode=0666,mode=0620,gid=5"
	if rootless {
		devpts = "newinstance,ptmxmode=0666,mode=0620"
	}
	return []Mount{
		{Source: "proc", Destination: "/proc", Type: "proc"},
		{Source: "tmpfs", Destination: "/dev", Type: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755,size=65536k"},
		{Source: "devpts", Destination: "/dev/pts", Type: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: devpts},
		{Source: "shm", Destination: "/dev/shm", Type: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV, Data: "mode=1777,size=65536k"},
		{Source: "sysfs", Destination: "/sys", Type: "sysfs", Flags: unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV | unix.MS_RDONLY},
		{Source: "cgroup", Destination: "/sys/fs/cgroup", Type: "cgroup", Flags: unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV | unix.MS_RELATIME | unix.MS_RDONLY},
	}
}

func defaultDeviceChecks() []rootfsCheck {
	var checks []rootfsCheck
	for _, d := range DefaultDevices {
		checks = append(checks, rootfsCheck{Kind: "chardev", Path: d.Path, Major: d.Major, Minor: d.Minor})
	}
	return checks
}

func TestRootfsFullSetup(t *testing.T) {
	requireRootfsTests(t)
	rootfs := newTestRootfs(t)
	outside := t.TempDir()
	rtWriteFile(t, filepath.Join(outside, "marker"), "host")
	hostData := t.TempDir()
	rtWriteFile(t, filepath.Join(hostData, "hello"), "hello from the host")
	hostFile := filepath.Join(t.TempDir(), "hostname")
	rtWriteFile(t, hostFile, "nanobox")

	// A symlinked destination pointing at a host directory: the tmpfs must
	// land inside the rootfs.
	rtSymlink(t, outside, filepath.Join(rootfs, "mnt/link"))
	rtWriteFile(t, filepath.Join(rootfs, "secret.txt"), "secret")
	rtWriteFile(t, filepath.Join(rootfs, "secretdir/file"), "secret")
	rtWriteFile(t, filepath.Join(rootfs, "rodir/file"), "ro")
	// An image's dangling /etc/resolv.conf symlink: the bound file is
	// created where it points, inside the rootfs.
	rtSymlink(t, "../run/resolv.conf", filepath.Join(rootfs, "etc/resolv.conf"))

	mounts := append(baseMounts(false),
		Mount{Source: "mqueue", Destination: "/dev/mqueue", Type: "mqueue", Flags: unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV},
		Mount{Source: hostData, Destination: "/data", Type: "bind", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY | unix.MS_NOSUID},
		Mount{Source: hostFile, Destination: "/etc/hostname", Type: "bind", Flags: unix.MS_BIND},
		Mount{Source: hostFile, Destination: "/etc/resolv.conf", Type: "bind", Flags: unix.MS_BIND},
		Mount{Source: "tmpfs", Destination: "/mnt/link", Type: "tmpfs", PropagationFlags: []int{unix.MS_PRIVATE}},
	)
	checks := append(defaultDeviceChecks(),
		rootfsCheck{Kind: "chardev", Path: "/dev/null", Major: 1, Minor: 3, Want: "666"},
		rootfsCheck{Kind: "chardev", Path: "/dev/kmsg2", Major: 1, Minor: 11, Want: "640"},
		rootfsCheck{Kind: "fifo", Path: "/dev/fifo"},
		rootfsCheck{Kind: "symlink", Path: "/dev/ptmx", Want: "pts/ptmx"},
		rootfsCheck{Kind: "symlink", Path: "/dev/fd", Want: "/proc/self/fd"},
		rootfsCheck{Kind: "symlink", Path: "/dev/stdin", Want: "/proc/self/fd/0"},
		rootfsCheck{Kind: "symlink", Path: "/dev/stdout", Want: "/proc/self/fd/1"},
		rootfsCheck{Kind: "symlink", Path: "/dev/stderr", Want: "/proc/self/fd/2"},
		rootfsCheck{Kind: "fstype", Path: "/proc", Want: "proc"},
		rootfsCheck{Kind: "fstype", Path: "/dev", Want: "tmpfs"},
		rootfsCheck{Kind: "fstype", Path: "/dev/pts", Want: "devpts"},
		rootfsCheck{Kind: "fstype", Path: "/dev/mqueue", Want: "mqueue"},
		rootfsCheck{Kind: "fstype", Path: "/sys", Want: "sysfs"},
		rootfsCheck{Kind: "erofs", Path: "/sys/kernel"},
		rootfsCheck{Kind: "exists", Path: "/sys/fs/cgroup"},
		rootfsCheck{Kind: "erofs", Path: "/sys/fs/cgroup"},
		rootfsCheck{Kind: "content", Path: "/data/hello", Want: "hello from the host"},
		rootfsCheck{Kind: "erofs", Path: "/data"},
		rootfsCheck{Kind: "flags", Path: "/data", Want: "ro,nosuid"},
		rootfsCheck{Kind: "content", Path: "/etc/hostname", Want: "nanobox"},
		rootfsCheck{Kind: "content", Path: "/run/resolv.conf", Want: "nanobox"},
		rootfsCheck{Kind: "fstype", Path: "/mnt/link", Want: "tmpfs"},
		rootfsCheck{Kind: "mountpoint", Path: outside},
		rootfsCheck{Kind: "content", Path: "/secret.txt", Want: ""},
		rootfsCheck{Kind: "emptydir", Path: "/secretdir"},
		rootfsCheck{Kind: "erofs", Path: "/secretdir"},
		rootfsCheck{Kind: "erofs", Path: "/rodir"},
		rootfsCheck{Kind: "erofs", Path: "/proc/sys/kernel/msgmax"},
		rootfsCheck{Kind: "content", Path: "/proc/sys/kernel/msgmax", Want: "12345"},
		rootfsCheck{Kind: "content", Path: "/proc/sys/kernel/msgmnb", Want: "23456"},
		rootfsCheck{Kind: "erofs", Path: "/"},
		rootfsCheck{Kind: "writable", Path: "/dev/shm"},
		rootfsCheck{Kind: "chardev", Path: "/dev/console", Major: 136, Minor: 0},
		rootfsCheck{Kind: "exec", Path: "echo ok >/dev/null && busybox cat /dev/null /secret.txt && echo done", Want: "done"},
		// The container's procfs: pid 1 is the helper itself.
		rootfsCheck{Kind: "exec", Path: "busybox cut -d' ' -f1 /proc/1/stat", Want: "1"},
	)

	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == unix.TMPFS_MAGIC {
		// v1 or hybrid: a tmpfs with init's own cgroup of each hierarchy.
		checks = append(checks,
			rootfsCheck{Kind: "fstype", Path: "/sys/fs/cgroup", Want: "tmpfs"},
			rootfsCheck{Kind: "fstype", Path: "/sys/fs/cgroup/memory", Want: "cgroup"},
			rootfsCheck{Kind: "exists", Path: "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
			rootfsCheck{Kind: "erofs", Path: "/sys/fs/cgroup/memory"},
		)
	} else {
		checks = append(checks, rootfsCheck{Kind: "fstype", Path: "/sys/fs/cgroup", Want: "cgroup2"})
	}

	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:     rootfs,
			Readonlyfs: true,
			Mounts:     mounts,
			Devices: []Device{
				{Type: 'c', Path: "/dev/kmsg2", Major: 1, Minor: 11, FileMode: 0o640},
				{Type: 'p', Path: "/dev/fifo", FileMode: 0o600},
			},
			MaskedPaths:   []string{"/secret.txt", "/secretdir", "/proc/kcore", "/does/not/exist"},
			ReadonlyPaths: []string{"/proc/sys", "/rodir", "/nope"},
			Sysctl:        map[string]string{"kernel.msgmax": "12345", "kernel/msgmnb": "23456"},
			Process:       Process{Terminal: true},
		},
		Console:       true,
		HostUnmounted: []string{outside},
		Checks:        checks,
	})
	// Nothing happened to the host, whatever happened inside.
	if names := rtListDir(t, outside); !slices.Equal(names, []string{"marker"}) {
		t.Errorf("host directory behind the symlink now holds %v", names)
	}
	if _, err := os.Stat(filepath.Join(rootfs, outside)); err != nil {
		t.Errorf("the symlinked destination was not created inside the rootfs: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(rootfs, "secret.txt")); string(b) != "secret" {
		t.Errorf("masked file changed on disk: %q", b)
	}
	wantRootfsOK(t, res)
}

// A /dev that is a symlink to a host directory, with no tmpfs on /dev: the
// devices end up inside the rootfs, never in the host directory.
func TestRootfsDevSymlinkToHost(t *testing.T) {
	requireRootfsTests(t)
	for _, userns := range []bool{false, true} {
		t.Run(fmt.Sprintf("userns=%v", userns), func(t *testing.T) {
			rootfs := newTestRootfs(t)
			hostDev := t.TempDir()
			rtSymlink(t, hostDev, filepath.Join(rootfs, "dev"))
			cfg := Config{
				Rootfs:      rootfs,
				Mounts:      []Mount{{Source: "proc", Destination: "/proc", Type: "proc"}},
				Devices:     []Device{{Type: 'p', Path: "/dev/fifo", FileMode: 0o600}},
				MaskedPaths: []string{"/proc/kcore", "/proc/cpuinfo"},
				Process:     Process{Terminal: true},
			}
			if userns {
				cfg.Namespaces = []Namespace{{Type: NEWUSER}, {Type: NEWNS}, {Type: NEWPID}}
			}
			res := runRootfsHelper(t, rootfsScenario{
				Config: cfg,
				UserNS: userns,
				Checks: append(defaultDeviceChecks(),
					rootfsCheck{Kind: "symlink", Path: "/dev", Want: hostDev},
					rootfsCheck{Kind: "symlink", Path: "/dev/ptmx", Want: "pts/ptmx"},
					rootfsCheck{Kind: "fifo", Path: "/dev/fifo"},
					rootfsCheck{Kind: "content", Path: "/proc/cpuinfo", Want: ""},
				),
			})
			if names := rtListDir(t, hostDev); len(names) != 0 {
				t.Errorf("host directory %s now holds %v", hostDev, names)
			}
			wantRootfsOK(t, res)
		})
	}
}

// A rootfs whose /dev/null is a regular file (no tmpfs on /dev): the file is
// covered by the real device, masking binds a verified null device, and the
// image's file is left as it was.
func TestRootfsDevNullRegularFile(t *testing.T) {
	requireRootfsTests(t)
	rootfs := newTestRootfs(t)
	imageNull := filepath.Join(rootfs, "dev/null")
	rtWriteFile(t, imageNull, "HOSTDATA")
	rtWriteFile(t, filepath.Join(rootfs, "secret.txt"), "secret")
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:      rootfs,
			Mounts:      []Mount{{Source: "proc", Destination: "/proc", Type: "proc"}},
			MaskedPaths: []string{"/secret.txt"},
		},
		Checks: []rootfsCheck{
			{Kind: "chardev", Path: "/dev/null", Major: 1, Minor: 3},
			{Kind: "content", Path: "/secret.txt", Want: ""},
			{Kind: "exec", Path: "echo overwritten >/dev/null; busybox cat /dev/null", Want: ""},
		},
	})
	var st unix.Stat_t
	if err := unix.Lstat(imageNull, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("the image's /dev/null is no longer a regular file (%v)", err)
	} else if b, _ := os.ReadFile(imageNull); string(b) != "HOSTDATA" {
		t.Errorf("the image's /dev/null now reads %q", b)
	}
	wantRootfsOK(t, res)
}

// A /dev/null symlink (here to a host file) is refused before anything is
// written through it; so is one in /dev/pts/ptmx's place followed out.
func TestRootfsDevNullSymlinkRefused(t *testing.T) {
	requireRootfsTests(t)
	rootfs := newTestRootfs(t)
	hostFile := filepath.Join(t.TempDir(), "file")
	rtWriteFile(t, hostFile, "HOSTDATA")
	if err := os.Mkdir(filepath.Join(rootfs, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	rtSymlink(t, hostFile, filepath.Join(rootfs, "dev/null"))
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{Rootfs: rootfs},
	})
	wantRootfsErr(t, res, "set up /dev: device /dev/null: the rootfs has a symlink there")
	if b, _ := os.ReadFile(hostFile); string(b) != "HOSTDATA" {
		t.Errorf("host file now reads %q", b)
	}

	// /dev/ptmx pointing at a host file is replaced, not written through.
	rootfs = newTestRootfs(t)
	if err := os.Mkdir(filepath.Join(rootfs, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	rtSymlink(t, hostFile, filepath.Join(rootfs, "dev/ptmx"))
	res = runRootfsHelper(t, rootfsScenario{
		Config: Config{Rootfs: rootfs},
		Checks: []rootfsCheck{{Kind: "symlink", Path: "/dev/ptmx", Want: "pts/ptmx"}},
	})
	wantRootfsOK(t, res)
	if b, err := os.ReadFile(hostFile); err != nil || string(b) != "HOSTDATA" {
		t.Errorf("host file now reads %q (%v)", b, err)
	}
}

func TestRootfsProcDestinations(t *testing.T) {
	requireRootfsTests(t)
	outside := t.TempDir()
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, rootfs string)
		mounts  []Mount
		want    string
	}{
		{
			name: "proc is a symlink out of the rootfs",
			prepare: func(t *testing.T, rootfs string) {
				os.Remove(filepath.Join(rootfs, "proc"))
				rtSymlink(t, outside, filepath.Join(rootfs, "proc"))
			},
			mounts: []Mount{{Source: "proc", Destination: "/proc", Type: "proc"}},
			want:   `mount proc to /proc: filesystem "proc" must be mounted on ordinary directory: the destination is a symlink or not a directory`,
		},
		{
			name: "proc is a file",
			prepare: func(t *testing.T, rootfs string) {
				os.Remove(filepath.Join(rootfs, "proc"))
				rtWriteFile(t, filepath.Join(rootfs, "proc"), "")
			},
			mounts: []Mount{{Source: "proc", Destination: "/proc", Type: "proc"}},
			want:   `mount proc to /proc: filesystem "proc" must be mounted on ordinary directory: the destination is a symlink or not a directory`,
		},
		{
			name: "sys is a symlink",
			prepare: func(t *testing.T, rootfs string) {
				os.Remove(filepath.Join(rootfs, "sys"))
				rtSymlink(t, outside, filepath.Join(rootfs, "sys"))
			},
			mounts: []Mount{{Source: "sysfs", Destination: "/sys", Type: "sysfs"}},
			want:   `mount sysfs to /sys: filesystem "sysfs" must be mounted on ordinary directory`,
		},
		{
			name: "tmpfs over /proc",
			mounts: []Mount{
				{Source: "tmpfs", Destination: "/proc", Type: "tmpfs"},
			},
			want: "mount tmpfs to /proc: only a proc filesystem can be mounted on /proc",
		},
		{
			name: "bind inside /proc through a symlink",
			prepare: func(t *testing.T, rootfs string) {
				rtSymlink(t, "../proc/sys", filepath.Join(rootfs, "mnt/sys"))
			},
			mounts: []Mount{
				{Source: "proc", Destination: "/proc", Type: "proc"},
				{Source: outside, Destination: "/mnt/sys/kernel", Type: "bind", Flags: unix.MS_BIND},
			},
			want: "bind-mount " + outside + " to /mnt/sys/kernel: /proc/sys/kernel is inside /proc",
		},
		{
			name:   "unknown filesystem",
			mounts: []Mount{{Source: "x", Destination: "/x", Type: "nanoboxfs"}},
			want:   "mount nanoboxfs to /x: no such device",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rootfs := newTestRootfs(t)
			if tc.prepare != nil {
				tc.prepare(t, rootfs)
			}
			res := runRootfsHelper(t, rootfsScenario{Config: Config{Rootfs: rootfs, Mounts: tc.mounts}})
			if names := rtListDir(t, outside); len(names) != 0 {
				t.Errorf("host directory %s now holds %v", outside, names)
			}
			wantRootfsErr(t, res, tc.want)
		})
	}
	// The lxcfs files may be covered.
	rootfs := newTestRootfs(t)
	fake := filepath.Join(t.TempDir(), "meminfo")
	rtWriteFile(t, fake, "MemTotal: 1 kB")
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{Rootfs: rootfs, Mounts: []Mount{
			{Source: "proc", Destination: "/proc", Type: "proc"},
			{Source: fake, Destination: "/proc/meminfo", Type: "bind", Flags: unix.MS_BIND},
		}},
		Checks: []rootfsCheck{{Kind: "content", Path: "/proc/meminfo", Want: "MemTotal: 1 kB"}},
	})
	wantRootfsOK(t, res)
}

// Rootless: a user namespace where mknod is refused and the host's mounts
// are locked. Devices are binds of the host's nodes, sysfs falls back to a
// bind of /sys, and a read-only bind of a nosuid,nodev mount keeps those
// locked flags.
func TestRootfsUserNamespace(t *testing.T) {
	requireRootfsTests(t)
	if err := exec.Command("/bin/busybox", "true").Run(); err != nil {
		t.Skip(err)
	}
	rootfs := newTestRootfs(t)
	locked := t.TempDir()
	rtWriteFile(t, filepath.Join(rootfs, "secret.txt"), "secret")
	mounts := append(baseMounts(true),
		Mount{Source: locked, Destination: "/locked", Type: "bind", Flags: unix.MS_BIND | unix.MS_RDONLY},
	)
	checks := append(defaultDeviceChecks(),
		rootfsCheck{Kind: "mountpoint", Path: "/dev/null"},
		rootfsCheck{Kind: "mountpoint", Path: "/dev/tty"},
		rootfsCheck{Kind: "fstype", Path: "/proc", Want: "proc"},
		rootfsCheck{Kind: "fstype", Path: "/sys", Want: "sysfs"},
		rootfsCheck{Kind: "erofs", Path: "/sys/kernel"},
		// sysfs fell back to an rbind of the host's /sys: the host's
		// /sys/fs/cgroup came along, under the container's own.
		rootfsCheck{Kind: "exec", Path: `busybox awk '$5 == "/sys/fs/cgroup" { n++ } END { print n }' /proc/self/mountinfo`, Want: "2"},
		rootfsCheck{Kind: "content", Path: "/locked/f", Want: "locked"},
		rootfsCheck{Kind: "flags", Path: "/locked", Want: "ro,nosuid,nodev"},
		rootfsCheck{Kind: "content", Path: "/secret.txt", Want: ""},
		rootfsCheck{Kind: "erofs", Path: "/proc/sys/kernel/msgmax"},
		rootfsCheck{Kind: "exec", Path: "echo ok >/dev/null && busybox cat /dev/null && busybox cat /locked/f", Want: "locked"},
	)
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:        rootfs,
			Namespaces:    []Namespace{{Type: NEWUSER}, {Type: NEWNS}, {Type: NEWPID}},
			Mounts:        mounts,
			MaskedPaths:   []string{"/secret.txt"},
			ReadonlyPaths: []string{"/proc/sys"},
			Readonlyfs:    true,
		},
		UserNS:      true,
		LockedTmpfs: locked,
		Checks:      checks,
	})
	wantRootfsOK(t, res)
}

func TestRootfsNoPivotRoot(t *testing.T) {
	requireRootfsTests(t)
	rootfs := newTestRootfs(t)
	rtWriteFile(t, filepath.Join(rootfs, "marker"), "inside")
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:      rootfs,
			NoPivotRoot: true,
			Mounts:      baseMounts(false),
		},
		Checks: append(defaultDeviceChecks(),
			rootfsCheck{Kind: "content", Path: "/marker", Want: "inside"},
			rootfsCheck{Kind: "fstype", Path: "/proc", Want: "proc"},
			rootfsCheck{Kind: "exec", Path: "busybox ls /marker", Want: "/marker"},
		),
	})
	wantRootfsOK(t, res)
}

// A shared root propagation: the rootfs's parent mount is made private so
// that pivot_root accepts it, and / is shared again afterwards.
func TestRootfsSharedPropagation(t *testing.T) {
	requireRootfsTests(t)
	rootfs := newTestRootfs(t)
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:          rootfs,
			RootPropagation: unix.MS_SHARED | unix.MS_REC,
			Mounts:          baseMounts(false),
		},
		Checks: []rootfsCheck{
			{Kind: "fstype", Path: "/proc", Want: "proc"},
			{Kind: "exec", Path: `busybox awk '$5 == "/" && / shared:/ { n++ } END { print n }' /proc/self/mountinfo`, Want: "1"},
		},
	})
	wantRootfsOK(t, res)
}

// An unbindable root propagation (runtime-spec "unbindable", "runbindable";
// runtime-tools' linux_rootfs_propagation): applied to / before the rootfs
// bind it would make that bind, and every bind mount from the host, fail
// with EINVAL. The container's / must end up unbindable, with the host's
// bind mounts in place.
func TestRootfsUnbindablePropagation(t *testing.T) {
	requireRootfsTests(t)
	for _, prop := range []int{unix.MS_UNBINDABLE, unix.MS_UNBINDABLE | unix.MS_REC} {
		rootfs := newTestRootfs(t)
		src := t.TempDir()
		if err := os.WriteFile(filepath.Join(src, "f"), []byte("host"), 0o644); err != nil {
			t.Fatal(err)
		}
		mounts := append(baseMounts(false), Mount{Source: src, Destination: "/mnt", Type: "bind", Flags: unix.MS_BIND | unix.MS_REC})
		res := runRootfsHelper(t, rootfsScenario{
			Config: Config{
				Rootfs:          rootfs,
				RootPropagation: prop,
				Mounts:          mounts,
			},
			Checks: []rootfsCheck{
				{Kind: "content", Path: "/mnt/f", Want: "host"},
				{Kind: "exec", Path: `busybox awk '$5 == "/" && / unbindable/ { n++ } END { print n }' /proc/self/mountinfo`, Want: "1"},
			},
		})
		wantRootfsOK(t, res)
	}
}

// On a v1 or hybrid host, in a cgroup namespace whose root is below the
// host's mount of a hierarchy, that hierarchy is mounted afresh, rooted at
// init's own cgroup.
func TestRootfsCgroupNamespaceV1(t *testing.T) {
	requireRootfsTests(t)
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("needs a cgroup v1 or hybrid host")
	}
	own, err := readOwnCgroups()
	if err != nil {
		t.Fatal(err)
	}
	// A hierarchy where this test runs below the root shows the fresh
	// mount; one where it runs at the root shows the plain bind.
	var below, atRoot string
	for _, l := range own {
		if len(l.controllers) == 1 && !strings.HasPrefix(l.controllers[0], "name=") {
			if l.path != "/" && below == "" {
				below = l.controllers[0]
			} else if l.path == "/" && atRoot == "" {
				atRoot = l.controllers[0]
			}
		}
	}
	if below == "" {
		t.Skip("needs to run in a non-root cgroup of some v1 hierarchy")
	}
	rootfs := newTestRootfs(t)
	// The host's view above our cgroup must not be visible: the first
	// component of our path, a directory at the hierarchy's root, must not
	// be there.
	top := strings.Split(strings.TrimPrefix(ownPath(own, below), "/"), "/")[0]
	checks := []rootfsCheck{
		{Kind: "fstype", Path: "/sys/fs/cgroup", Want: "tmpfs"},
		{Kind: "fstype", Path: "/sys/fs/cgroup/" + below, Want: "cgroup"},
		{Kind: "erofs", Path: "/sys/fs/cgroup/" + below},
		{Kind: "exists", Path: "/sys/fs/cgroup/" + below + "/cgroup.procs"},
		{Kind: "exec", Path: "test -e /sys/fs/cgroup/" + below + "/" + top + " && echo visible || echo hidden", Want: "hidden"},
	}
	if atRoot != "" {
		checks = append(checks, rootfsCheck{Kind: "fstype", Path: "/sys/fs/cgroup/" + atRoot, Want: "cgroup"})
	}
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:     rootfs,
			Namespaces: []Namespace{{Type: NEWNS}, {Type: NEWPID}, {Type: NEWCGROUP}},
			Mounts:     baseMounts(false),
		},
		CgroupNS: true,
		Checks:   checks,
	})
	wantRootfsOK(t, res)
}

func ownPath(own []cgroupLine, controller string) string {
	for _, l := range own {
		if slices.Contains(l.controllers, controller) {
			return l.path
		}
	}
	return "/"
}

func TestMountAttrFlags(t *testing.T) {
	m := &Mount{Flags: unix.MS_BIND | unix.MS_REC | unix.MS_REMOUNT | unix.MS_SHARED | unix.MS_SLAVE |
		unix.MS_PRIVATE | unix.MS_UNBINDABLE | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV |
		unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_RELATIME}
	want := uintptr(unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_RELATIME)
	if got := m.attrFlags(); got != want {
		t.Errorf("attrFlags() = %#x, want %#x", got, want)
	}
	if got := (&Mount{Flags: unix.MS_BIND | unix.MS_REC}).attrFlags(); got != 0 {
		t.Errorf("a plain rbind: attrFlags() = %#x, want 0", got)
	}
}

func TestUniquePaths(t *testing.T) {
	got := uniquePaths([]string{"/proc/kcore", "/proc/acpi", "/proc/kcore", "/proc/acpi/", "/proc//acpi/.", "proc/acpi", "/tmp", "/proc/x/../acpi", "/tmp/sub"})
	want := []string{"/proc/kcore", "/proc/acpi", "/tmp", "/tmp/sub"}
	if !slices.Equal(got, want) {
		t.Errorf("uniquePaths = %q, want %q", got, want)
	}
	if got := uniquePaths(nil); len(got) != 0 {
		t.Errorf("uniquePaths(nil) = %q", got)
	}
}
