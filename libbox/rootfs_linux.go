package libbox

// The container's root filesystem, in the order init sets it up:
//
//	prepareRootfs   before pivot_root: propagation of /, a tmpfs root
//	                (rootfs_tmpfs_linux.go), the rootfs bind, cfg.Mounts,
//	                then /dev (devices_linux.go)
//	pivotRootfs     pivot_root(2), or MS_MOVE + chroot with NoPivotRoot
//	finalizeRootfs  after pivot_root: sysctls, read-only and masked paths,
//	                read-only /, propagation of / again
//	mountConsole    the pty slave bound on /dev/console
//
// Every path that comes from the config or from the image is resolved inside
// the rootfs through an open handle (pathrs-lite: openat2 RESOLVE_IN_ROOT or
// an emulation of it), and the mount goes onto that handle, never onto a
// path string that the kernel would resolve a second time (CVE-2021-30465,
// CVE-2026-41579). Before the pivot the handle is named by its
// /proc/self/fd/N magic link (/proc is still the host's, checked to be
// procfs); after the pivot, where /proc belongs to the container, the new
// mount API (open_tree, move_mount, fsmount, mount_setattr: Linux 5.12 or
// later) attaches mounts to the handle directly.

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"github.com/moby/sys/mountinfo"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// mountError is a failed mount step, read as "<op> [<source> to] <target>:
// <cause>", e.g. "mount proc to /proc: permission denied". Target is the
// path inside the container.
type mountError struct {
	op     string
	source string
	target string
	err    error
}

func (e *mountError) Error() string {
	s := e.op + " "
	if e.source != "" {
		s += e.source + " to "
	}
	return s + e.target + ": " + e.err.Error()
}

func (e *mountError) Unwrap() error { return e.err }

const propagationFlags = unix.MS_SHARED | unix.MS_PRIVATE | unix.MS_SLAVE | unix.MS_UNBINDABLE

// lxcfsProcFiles are the only paths inside /proc a mount may cover: the
// files lxcfs emulates (the list runc allows).
var lxcfsProcFiles = []string{
	"/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
	"/proc/swaps", "/proc/uptime", "/proc/loadavg", "/proc/slabinfo",
	"/proc/sys/kernel/ns_last_pid", "/proc/sys/crypto/fips_enabled",
}

// rootfsMounter is the rootfs being prepared, before pivot_root.
type rootfsMounter struct {
	cfg *Config
	// path is the host path of the rootfs, symlinks resolved.
	path string
	// root is an O_PATH handle on the rootfs's own bind mount; every
	// container path is resolved beneath it.
	root *os.File
	// userns is true when init runs in a user namespace of the config's,
	// where mknod is refused and mount flags inherited from the host are
	// locked.
	userns bool
}

// prepareRootfs sets up the mounts of cfg inside cfg.Rootfs, in the
// container's new mount namespace, before pivot_root. It is called by init
// with the host's /proc still visible, and returns the rootfs's host path,
// symlinks resolved.
func prepareRootfs(cfg *Config) (string, error) {
	path, err := resolveRootfs(cfg.Rootfs)
	if err != nil {
		return "", err
	}
	// Mounts onto /proc/self/fd/N magic links need the host's procfs.
	if err := checkFsType("/proc", unix.PROC_SUPER_MAGIC); err != nil {
		return "", fmt.Errorf("host /proc: %w", err)
	}
	prop := unix.MS_SLAVE | unix.MS_REC
	if cfg.RootPropagation != 0 {
		prop = cfg.RootPropagation
	}
	if err := unix.Mount("", "/", "", uintptr(prop), ""); err != nil {
		return "", &mountError{op: "set propagation of", target: "/", err: err}
	}
	if cfg.RootfsTmpfs != nil {
		if err := mountTmpfsRoot(path, cfg.RootfsTmpfs); err != nil {
			return "", err
		}
	}
	if err := makeParentMountPrivate(path); err != nil {
		return "", err
	}
	// pivot_root needs the new root to be a mount point; MS_REC keeps the
	// mounts the caller may have made under the rootfs.
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return "", &mountError{op: "bind-mount", source: "rootfs " + path, target: "itself", err: err}
	}
	// Opened after the bind so that lookups walk the new mount, which is
	// the one that becomes / after pivot_root.
	root, err := os.OpenFile(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open rootfs: %w", err)
	}
	defer root.Close()
	_, userns := cfg.NamespaceOf(NEWUSER)
	r := &rootfsMounter{cfg: cfg, path: path, root: root, userns: userns}
	for _, m := range cfg.Mounts {
		if err := r.mountEntry(m); err != nil {
			return "", err
		}
	}
	if needsSetupDev(cfg) {
		if err := r.setupDev(); err != nil {
			return "", fmt.Errorf("set up /dev: %w", err)
		}
	}
	return path, nil
}

func resolveRootfs(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("rootfs %q is not an absolute path", p)
	}
	path, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("rootfs: %w", err)
	}
	if path == "/" {
		return "", errors.New("rootfs resolves to the host's /: refusing to pivot into it")
	}
	return path, nil
}

// makeParentMountPrivate makes the mount the rootfs lives on private when
// it is shared: pivot_root refuses a new root whose parent mount is shared,
// and the rootfs bind would otherwise propagate to the host (runc does the
// same).
func makeParentMountPrivate(path string) error {
	infos, err := mountinfo.GetMounts(mountinfo.ParentsFilter(path))
	if err != nil {
		return fmt.Errorf("read mountinfo: %w", err)
	}
	var parent *mountinfo.Info
	for _, i := range infos {
		if parent == nil || len(i.Mountpoint) > len(parent.Mountpoint) {
			parent = i
		}
	}
	if parent == nil || !strings.Contains(" "+parent.Optional, " shared:") {
		return nil
	}
	if err := unix.Mount("", parent.Mountpoint, "", unix.MS_PRIVATE, ""); err != nil {
		return &mountError{op: "make private", target: parent.Mountpoint, err: err}
	}
	return nil
}

func checkFsType(path string, magic int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	if int64(st.Type) != magic {
		return fmt.Errorf("%s is not the expected filesystem (type %#x, want %#x)", path, st.Type, magic)
	}
	return nil
}

// procSelfFd names f by its magic link, which mount(2) follows to exactly
// the inode f was opened on.
func procSelfFd(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// mountFd is mount(2) onto the handle target, from src when it is not nil
// (a bind of a verified handle) or from the source string otherwise.
func mountFd(source string, src *os.File, target *os.File, fstype string, flags uintptr, data string) error {
	if src != nil {
		source = procSelfFd(src)
	}
	err := unix.Mount(source, procSelfFd(target), fstype, flags, data)
	runtime.KeepAlive(src)
	runtime.KeepAlive(target)
	return err
}

// openat is openatFile(2) returning an *os.File; O_CLOEXEC is always added.
func openatFile(dir *os.File, name string, flags int, mode uint32) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_CLOEXEC, mode)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
}

func fstatFile(f *os.File) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstat(int(f.Fd()), &st)
	return st, err
}

// mountLabel is how errors name the thing mounted: the type, plus the
// source when it is a path (a block device, say).
func mountLabel(m *Mount) string {
	if strings.HasPrefix(m.Source, "/") {
		return m.Type + " " + m.Source
	}
	return m.Type
}

// mountEntry makes one cfg.Mounts entry.
func (r *rootfsMounter) mountEntry(m Mount) error {
	dest := filepath.Join("/", m.Destination)
	if dest == "/" {
		return fmt.Errorf("mount %s to /: mounting over the container's root is not supported", mountLabel(&m))
	}
	switch m.Type {
	case "bind":
		m.Flags |= unix.MS_BIND
	case "rbind":
		m.Flags |= unix.MS_BIND | unix.MS_REC
	}
	var err error
	switch {
	case m.IsBind():
		err = r.bindMount(&m, dest)
	case m.Type == "proc":
		err = r.mountFS(&m, dest, "proc")
	case m.Type == "sysfs":
		err = r.mountFS(&m, dest, "sysfs")
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EBUSY) {
			// sysfs can only be mounted by the owner of the network
			// namespace: a user namespace without its own netns gets
			// EPERM. Fall back to the host's /sys, as runc does.
			logrus.Debugf("mount sysfs to %s: %v: binding the host's /sys instead", dest, err)
			err = r.bindFallback(&m, dest, "/sys")
		}
	case m.Type == "mqueue":
		err = r.mountFS(&m, dest, "mqueue")
		if errors.Is(err, unix.EPERM) {
			// Likewise mqueue needs the IPC namespace's owner.
			logrus.Debugf("mount mqueue to %s: %v: binding the host's /dev/mqueue instead", dest, err)
			err = r.bindFallback(&m, dest, "/dev/mqueue")
		}
	case m.Type == "cgroup" || m.Type == "cgroup2":
		err = r.mountCgroup(&m, dest)
	default:
		err = r.mountFS(&m, dest, m.Type)
	}
	if err != nil {
		return err
	}
	if m.RecursiveReadonly {
		if err := r.setRecursiveReadonly(dest); err != nil {
			return err
		}
	}
	return r.setPropagation(&m, dest)
}

// setRecursiveReadonly makes the mount at dest and every mount beneath it
// read-only (the "rro" option), leaving their other flags alone.
func (r *rootfsMounter) setRecursiveReadonly(dest string) error {
	dst, err := r.reopen(dest)
	if err != nil {
		return &mountError{op: "remount recursively read-only", target: dest, err: err}
	}
	defer dst.Close()
	if err := setReadonly(dst, true); err != nil {
		return &mountError{op: "remount recursively read-only", target: dest, err: err}
	}
	return nil
}

// openDest resolves dest inside the rootfs, creating what is missing: a
// directory, or an empty file when dir is false (a bind of a file).
func (r *rootfsMounter) openDest(dest string, dir bool) (*os.File, error) {
	if dir {
		f, err := r.mkdirAll(dest)
		if err != nil {
			return nil, fmt.Errorf("create destination: %w", err)
		}
		return f, nil
	}
	f, err := pathrs.OpenatInRoot(r.root, dest)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	// Create the file where dest leads, following even a dangling symlink
	// inside the root (an image's /etc/resolv.conf -> ../run/... is the
	// usual case), with O_EXCL|O_NOFOLLOW in a directory handle that was
	// itself resolved inside the root (CVE-2024-45310).
	p, err := r.resolveLexically(dest)
	if err != nil {
		return nil, fmt.Errorf("resolve destination: %w", err)
	}
	parent, err := r.mkdirAll(filepath.Dir(p))
	if err != nil {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	defer parent.Close()
	if err := createEmptyFile(parent, filepath.Base(p), 0o644); err != nil {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	return pathrs.OpenatInRoot(r.root, dest)
}

// mkdirAll resolves the directory p inside the rootfs, creating what is
// missing. pathrs-lite does not create through a dangling symlink; for one
// (an image's /dev -> /some/dir that the image lacks), the symlinks are
// resolved as if the rootfs were / and the directories made there, so the
// result is the one the container will see, and never a host directory.
func (r *rootfsMounter) mkdirAll(p string) (*os.File, error) {
	f, err := pathrs.MkdirAllHandle(r.root, p, 0o755)
	if err == nil || !errors.Is(err, unix.ENOTDIR) {
		return f, err
	}
	resolved, rerr := r.resolveLexically(p)
	if rerr != nil || resolved == filepath.Join("/", p) {
		return nil, err
	}
	return pathrs.MkdirAllHandle(r.root, resolved, 0o755)
}

// resolveLexically follows the symlinks of p inside the rootfs, dangling
// ones included, and returns the path it leads to, as seen from inside.
// The result is only ever used with in-root lookups again, so a race
// that changes the tree in between cannot lead outside.
func (r *rootfsMounter) resolveLexically(p string) (string, error) {
	full, err := securejoin.SecureJoin(r.path, p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r.path, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s resolves outside the rootfs", p)
	}
	return filepath.Join("/", rel), nil
}

// createEmptyFile creates name in dir unless something is already there; it
// never follows a symlink.
func createEmptyFile(dir *os.File, name string, mode uint32) error {
	f, err := openatFile(dir, name, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_RDONLY, mode)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			return nil
		}
		return err
	}
	return f.Close()
}

// openDirNoFollow opens (creating it if needed) the directory dest without
// following a symlink in its last component: proc and sysfs go on a real
// directory or nowhere (CVE-2019-19921).
func (r *rootfsMounter) openDirNoFollow(dest string) (*os.File, error) {
	parent, err := r.mkdirAll(filepath.Dir(dest))
	if err != nil {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	defer parent.Close()
	base := filepath.Base(dest)
	if err := unix.Mkdirat(int(parent.Fd()), base, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	f, err := openatFile(parent, base, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return nil, errors.New("destination is a symlink or not a directory")
	}
	return f, err
}

// reopen resolves dest again after a mount, so the handle is on the new
// mount rather than on the directory underneath it.
func (r *rootfsMounter) reopen(dest string) (*os.File, error) {
	return pathrs.OpenatInRoot(r.root, dest)
}

// checkProcDest refuses mounts that would cover procfs files: only a proc
// mount may go on /proc, and inside /proc only the files lxcfs emulates
// (runc's checkProcMount; mounts over /proc/self/attr and the like would
// undo the LSM or masking set-up). dst is the resolved destination, so a
// symlink elsewhere in the image that leads into /proc is caught too.
func (r *rootfsMounter) checkProcDest(m *Mount, dst *os.File) error {
	host, err := os.Readlink(procSelfFd(dst))
	if err != nil {
		return fmt.Errorf("resolve destination: %w", err)
	}
	rel, err := filepath.Rel(r.path, host)
	if err != nil {
		return fmt.Errorf("resolve destination: %w", err)
	}
	switch {
	case rel == "proc":
		if m.Type == "proc" && !m.IsBind() {
			return nil
		}
		if m.IsBind() && isProcRoot(m.Source) {
			return nil
		}
		return errors.New("only a proc filesystem can be mounted on /proc")
	case strings.HasPrefix(rel, "proc/"):
		if slices.Contains(lxcfsProcFiles, "/"+rel) {
			return nil
		}
		return fmt.Errorf("/%s is inside /proc, where only %s may be mounted over", rel, strings.Join(lxcfsProcFiles, ", "))
	}
	return nil
}

func isProcRoot(p string) bool {
	var sfs unix.Statfs_t
	var st unix.Stat_t
	return unix.Statfs(p, &sfs) == nil && sfs.Type == unix.PROC_SUPER_MAGIC &&
		unix.Stat(p, &st) == nil && st.Ino == 1
}

// mountFS mounts a new filesystem of type fstype on dest.
func (r *rootfsMounter) mountFS(m *Mount, dest, fstype string) error {
	fail := func(err error) error {
		return &mountError{op: "mount", source: mountLabel(m), target: dest, err: err}
	}
	var dst *os.File
	var err error
	if fstype == "proc" || fstype == "sysfs" {
		dst, err = r.openDirNoFollow(dest)
	} else {
		dst, err = r.openDest(dest, true)
	}
	if err != nil {
		return fail(err)
	}
	defer dst.Close()
	if err := r.checkProcDest(m, dst); err != nil {
		return fail(err)
	}
	flags := uintptr(m.Flags) &^ (propagationFlags | unix.MS_REC | unix.MS_BIND | unix.MS_REMOUNT)
	copyUp := m.CopyUp && fstype == "tmpfs"
	if copyUp {
		// Filled first, made read-only after.
		flags &^= unix.MS_RDONLY
	}
	if err := mountFd(m.Source, nil, dst, fstype, flags, m.Data); err != nil {
		return fail(err)
	}
	if copyUp {
		// dst still names the directory the tmpfs now covers.
		tmpfs, err := r.reopen(dest)
		if err != nil {
			return fail(err)
		}
		defer tmpfs.Close()
		if err := copyTree(dst, tmpfs); err != nil {
			return fail(fmt.Errorf("tmpcopyup: %w", err))
		}
		if m.Flags&unix.MS_RDONLY != 0 {
			if err := remountFd(tmpfs, uintptr(m.Flags)|unix.MS_RDONLY, 0); err != nil {
				return fail(err)
			}
		}
	}
	if fstype == "proc" {
		// Make sure procfs is what landed there before anything trusts it.
		dst, err := r.openDirNoFollow(dest)
		if err != nil {
			return fail(err)
		}
		defer dst.Close()
		var st unix.Statfs_t
		if err := unix.Fstatfs(int(dst.Fd()), &st); err != nil {
			return fail(err)
		}
		if st.Type != unix.PROC_SUPER_MAGIC {
			return fail(fmt.Errorf("not procfs after mounting (type %#x)", st.Type))
		}
	}
	return nil
}

// bindMount bind-mounts m.Source (a host path) on dest, then applies the
// other flags of m by a remount.
func (r *rootfsMounter) bindMount(m *Mount, dest string) error {
	fail := func(err error) error {
		return &mountError{op: "bind-mount", source: m.Source, target: dest, err: err}
	}
	st, err := os.Stat(m.Source)
	if err != nil {
		return fail(err)
	}
	dst, err := r.openDest(dest, st.IsDir())
	if err != nil {
		return fail(err)
	}
	defer dst.Close()
	if err := r.checkProcDest(m, dst); err != nil {
		return fail(err)
	}
	if err := mountFd(m.Source, nil, dst, "", unix.MS_BIND|uintptr(m.Flags&unix.MS_REC), ""); err != nil {
		return fail(err)
	}
	return r.remountBind(m, dest)
}

// remountBind applies m's flags (ro, nosuid, nodev, noexec, atime...) to the
// bind mount at dest.
func (r *rootfsMounter) remountBind(m *Mount, dest string) error {
	flags := uintptr(m.Flags) &^ (propagationFlags | unix.MS_REC | unix.MS_BIND | unix.MS_REMOUNT)
	if flags == 0 {
		return nil
	}
	dst, err := r.reopen(dest)
	if err != nil {
		return &mountError{op: "remount", target: dest, err: err}
	}
	defer dst.Close()
	if err := remountFd(dst, flags, uintptr(m.ClearedFlags)); err != nil {
		return &mountError{op: "remount", target: dest, err: err}
	}
	return nil
}

// remountFd remounts the bind mount whose root dst is on with flags. In a
// user namespace the ro, nosuid, nodev and noexec flags of a mount that came
// from the host are locked and a remount that would clear them fails with
// EPERM; then the remount is retried keeping those flags, unless the config
// explicitly asked to clear them (runc's getUnprivilegedMountFlags). The
// atime mode is kept by the kernel when flags name none.
func remountFd(dst *os.File, flags, cleared uintptr) error {
	err := mountFd("", nil, dst, "", flags|unix.MS_BIND|unix.MS_REMOUNT, "")
	if !errors.Is(err, unix.EPERM) {
		return err
	}
	var st unix.Statfs_t
	if serr := unix.Fstatfs(int(dst.Fd()), &st); serr != nil {
		return err
	}
	locked := statfsMountFlags(st.Flags) &^ cleared
	if locked&^flags == 0 {
		return err
	}
	return mountFd("", nil, dst, "", flags|locked|unix.MS_BIND|unix.MS_REMOUNT, "")
}

// statfsMountFlags maps the lockable ST_* flags of statfs(2) to MS_* flags.
func statfsMountFlags(st int64) uintptr {
	var f uintptr
	for _, p := range []struct {
		st int64
		ms uintptr
	}{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
	} {
		if st&p.st != 0 {
			f |= p.ms
		}
	}
	return f
}

// bindFallback replaces a filesystem mount that the kernel refused in a
// user namespace with a recursive bind of the host's mount of it. A
// read-only request is applied to every mount of the bound tree: the host's
// submounts (of /sys, say) must not stay writable under a "ro" sysfs.
func (r *rootfsMounter) bindFallback(m *Mount, dest, source string) error {
	bm := *m
	bm.Source = source
	bm.Flags |= unix.MS_BIND | unix.MS_REC
	if err := r.bindMount(&bm, dest); err != nil {
		return err
	}
	if m.Flags&unix.MS_RDONLY == 0 {
		return nil
	}
	dst, err := r.reopen(dest)
	if err != nil {
		return &mountError{op: "remount", target: dest, err: err}
	}
	defer dst.Close()
	if err := setReadonly(dst, true); err != nil {
		return &mountError{op: "remount read-only", target: dest, err: err}
	}
	return nil
}

// setReadonly makes the mount whose root f is on read-only, and its
// submounts with recursive, leaving all other flags as they are (so locked
// flags are never an issue).
func setReadonly(f *os.File, recursive bool) error {
	flags := uint(unix.AT_EMPTY_PATH)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	err := unix.MountSetattr(int(f.Fd()), "", flags, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	runtime.KeepAlive(f)
	return err
}

func (r *rootfsMounter) setPropagation(m *Mount, dest string) error {
	if len(m.PropagationFlags) == 0 {
		return nil
	}
	dst, err := r.reopen(dest)
	if err != nil {
		return &mountError{op: "set propagation of", target: dest, err: err}
	}
	defer dst.Close()
	for _, p := range m.PropagationFlags {
		if err := mountFd("", nil, dst, "", uintptr(p), ""); err != nil {
			return &mountError{op: "set propagation of", target: dest, err: err}
		}
	}
	return nil
}

// mountCgroup mounts the cgroup filesystem the host uses. On a cgroup v2
// host that is cgroup2 (the whole hierarchy unless the container has a
// cgroup namespace; a user namespace without one cannot mount it, and gets
// a bind of the host's /sys/fs/cgroup instead, as in runc). On v1 and
// hybrid hosts see mountCgroupV1.
func (r *rootfsMounter) mountCgroup(m *Mount, dest string) error {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return &mountError{op: "mount", source: "cgroup", target: dest, err: fmt.Errorf("host /sys/fs/cgroup: %w", err)}
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return r.mountCgroupV1(m, dest)
	}
	cm := *m
	cm.Type = "cgroup2"
	err := r.mountFS(&cm, dest, "cgroup2")
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EBUSY) {
		logrus.Debugf("mount cgroup2 to %s: %v: binding the host's /sys/fs/cgroup instead", dest, err)
		err = r.bindFallback(m, dest, "/sys/fs/cgroup")
	}
	return err
}

// mountCgroupV1 builds /sys/fs/cgroup for a v1 or hybrid host much as runc
// does: a tmpfs, and in it, for each hierarchy mounted on the host's
// /sys/fs/cgroup (the hybrid "unified" cgroup2 one included), a bind of
// init's own cgroup directory in that hierarchy, read from
// /proc/self/cgroup, with the flags of m (ro in the default spec). The
// host's comount symlinks (cpu -> cpu,cpuacct) are copied. Nothing of the
// hierarchy above init's cgroup is visible. Works in a user namespace too:
// tmpfs and binds are allowed there.
func (r *rootfsMounter) mountCgroupV1(m *Mount, dest string) error {
	fail := func(err error) error {
		return &mountError{op: "mount", source: "cgroup", target: dest, err: err}
	}
	own, err := readOwnCgroups()
	if err != nil {
		return fail(err)
	}
	infos, err := mountinfo.GetMounts(func(i *mountinfo.Info) (skip, stop bool) {
		return (i.FSType != "cgroup" && i.FSType != "cgroup2") || filepath.Dir(i.Mountpoint) != "/sys/fs/cgroup", false
	})
	if err != nil {
		return fail(fmt.Errorf("read mountinfo: %w", err))
	}
	tm := Mount{
		Source:      "tmpfs",
		Destination: dest,
		Type:        "tmpfs",
		Flags:       (m.Flags &^ unix.MS_RDONLY) | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC,
		Data:        "mode=755",
	}
	if err := r.mountFS(&tm, dest, "tmpfs"); err != nil {
		return err
	}
	dir, err := r.reopen(dest)
	if err != nil {
		return fail(err)
	}
	defer dir.Close()
	bound := map[string]bool{}
	for _, info := range infos {
		l := matchCgroup(own, info)
		if l == nil {
			continue
		}
		name := filepath.Base(info.Mountpoint)
		if err := unix.Mkdirat(int(dir.Fd()), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return fail(fmt.Errorf("mkdir %s: %w", name, err))
		}
		if rel, ok := relCgroupPath(info.Root, l.path); ok {
			src := filepath.Join(info.Mountpoint, rel)
			if err := bindCgroupDir(dir, name, src, m); err != nil {
				return fail(fmt.Errorf("bind %s on %s: %w", src, name, err))
			}
		} else {
			// In a cgroup namespace rooted below the host's mount of the
			// hierarchy, mountinfo shows that mount's root as "/.."
			// and init's own directory cannot be named from here. A
			// fresh mount of the same hierarchy is rooted at the
			// namespace's root, i.e. init's cgroup. Only root can do
			// that on v1: in a user namespace the hierarchy is left out.
			if err := mountCgroupDir(dir, name, info.FSType, l, m); err != nil {
				if r.userns && errors.Is(err, unix.EPERM) {
					logrus.Warnf("cgroup mount %s: %s hierarchy left out: %v", dest, name, err)
					continue
				}
				return fail(fmt.Errorf("mount the %s hierarchy: %w", name, err))
			}
		}
		bound[name] = true
	}
	if entries, err := os.ReadDir("/sys/fs/cgroup"); err == nil {
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			target, err := os.Readlink(filepath.Join("/sys/fs/cgroup", e.Name()))
			if err != nil || strings.Contains(target, "/") || !bound[target] {
				continue
			}
			if err := unix.Symlinkat(target, int(dir.Fd()), e.Name()); err != nil && !errors.Is(err, unix.EEXIST) {
				return fail(fmt.Errorf("symlink %s: %w", e.Name(), err))
			}
		}
	}
	if m.Flags&unix.MS_RDONLY != 0 {
		if err := setReadonly(dir, false); err != nil {
			return fail(fmt.Errorf("make read-only: %w", err))
		}
	}
	return nil
}

func bindCgroupDir(dir *os.File, name, src string, m *Mount) error {
	sub, err := openatFile(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	err = mountFd(src, nil, sub, "", unix.MS_BIND, "")
	sub.Close()
	if err != nil {
		return err
	}
	flags := uintptr(m.Flags) &^ (propagationFlags | unix.MS_REC | unix.MS_BIND | unix.MS_REMOUNT)
	if flags == 0 {
		return nil
	}
	if sub, err = openatFile(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0); err != nil {
		return err
	}
	defer sub.Close()
	return remountFd(sub, flags, uintptr(m.ClearedFlags))
}

func mountCgroupDir(dir *os.File, name, fstype string, l *cgroupLine, m *Mount) error {
	sub, err := openatFile(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer sub.Close()
	flags := uintptr(m.Flags) &^ (propagationFlags | unix.MS_REC | unix.MS_BIND | unix.MS_REMOUNT)
	// The controllers (or name=) select the existing hierarchy.
	return mountFd(fstype, nil, sub, fstype, flags, strings.Join(l.controllers, ","))
}

// cgroupLine is one line of /proc/self/cgroup.
type cgroupLine struct {
	id          string
	controllers []string
	path        string
}

func readOwnCgroups() ([]cgroupLine, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	var lines []cgroupLine
	for l := range strings.Lines(string(b)) {
		f := strings.SplitN(strings.TrimSuffix(l, "\n"), ":", 3)
		if len(f) != 3 {
			continue
		}
		var ctrls []string
		if f[1] != "" {
			ctrls = strings.Split(f[1], ",")
		}
		lines = append(lines, cgroupLine{id: f[0], controllers: ctrls, path: f[2]})
	}
	return lines, nil
}

// matchCgroup finds the line of /proc/self/cgroup for the hierarchy
// mounted by info.
func matchCgroup(own []cgroupLine, info *mountinfo.Info) *cgroupLine {
	opts := strings.Split(info.VFSOptions, ",")
	for i := range own {
		l := &own[i]
		switch {
		case info.FSType == "cgroup2":
			if l.id != "0" {
				continue
			}
		case len(l.controllers) == 0:
			continue
		default:
			if !allIn(l.controllers, opts) {
				continue
			}
		}
		return l
	}
	return nil
}

func allIn(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// relCgroupPath is path (from /proc/self/cgroup) relative to root (the
// mount's root in mountinfo), when the one is below the other.
func relCgroupPath(root, path string) (string, bool) {
	if strings.Contains(path, "..") {
		return "", false
	}
	switch {
	case root == "/":
		return path, true
	case path == root:
		return "/", true
	case strings.HasPrefix(path, root+"/"):
		return strings.TrimPrefix(path, root), true
	}
	return "", false
}

// pivotRootfs makes cfg.Rootfs the root of the mount namespace and leaves
// init in its /. The host's tree is detached, with its propagation made
// slave first so that the detach does not reach the host.
func pivotRootfs(cfg *Config) error {
	path, err := resolveRootfs(cfg.Rootfs)
	if err != nil {
		return err
	}
	if cfg.NoPivotRoot {
		if err := unix.Chdir(path); err != nil {
			return fmt.Errorf("chdir to rootfs: %w", err)
		}
		return msMoveRoot(path)
	}
	oldroot, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open old root: %w", err)
	}
	defer unix.Close(oldroot)
	newroot, err := unix.Open(path, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open new root: %w", err)
	}
	defer unix.Close(newroot)
	if err := unix.Fchdir(newroot); err != nil {
		return fmt.Errorf("chdir to rootfs: %w", err)
	}
	// pivot_root(".", ".") stacks the old root on top of the new one, with
	// no directory needed for it inside the rootfs; it is then unmounted
	// from under our cwd (runc's trick, see pivot_root(2)).
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root %s: %w", path, err)
	}
	if err := unix.Fchdir(oldroot); err != nil {
		return fmt.Errorf("chdir to old root: %w", err)
	}
	if err := unix.Mount("", ".", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return &mountError{op: "make slave", target: "the old root", err: err}
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return &mountError{op: "unmount", target: "the old root", err: err}
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir to /: %w", err)
	}
	return nil
}

// msMoveRoot is the NoPivotRoot path: the rootfs is moved over / and init
// chroots into it. The host's old tree stays in the namespace, so first the
// host's full procfs and sysfs mounts are detached (or, when that is
// refused, covered by a tmpfs): the kernel lets a namespace mount a fresh
// procfs or sysfs only if it can already see an unmasked one, and chroot
// does not hide them (runc's msMoveRoot).
func msMoveRoot(path string) error {
	infos, err := mountinfo.GetMounts(func(i *mountinfo.Info) (skip, stop bool) {
		return i.Root != "/" || (i.FSType != "proc" && i.FSType != "sysfs") ||
			i.Mountpoint == path || strings.HasPrefix(i.Mountpoint, path+"/"), false
	})
	if err != nil {
		return fmt.Errorf("read mountinfo: %w", err)
	}
	// Deepest first, so that a mount is never detached before one on it.
	slices.SortFunc(infos, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	for _, i := range infos {
		p := i.Mountpoint
		if err := unix.Mount("", p, "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return &mountError{op: "make slave", target: p, err: err}
		}
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
				return &mountError{op: "unmount", target: p, err: err}
			}
			if err := unix.Mount("tmpfs", p, "tmpfs", 0, ""); err != nil {
				return &mountError{op: "cover", target: p, err: err}
			}
		}
	}
	if err := unix.Mount(path, "/", "", unix.MS_MOVE, ""); err != nil {
		return &mountError{op: "move", source: path, target: "/", err: err}
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir to /: %w", err)
	}
	return nil
}

// finalizeRootfs runs after pivot_root: it writes cfg.Sysctl, makes
// cfg.ReadonlyPaths read-only, masks cfg.MaskedPaths, makes / read-only
// when cfg.Readonlyfs and applies cfg.RootPropagation to / again. Paths
// that do not exist are skipped.
func finalizeRootfs(cfg *Config) error {
	root, err := os.OpenFile("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /: %w", err)
	}
	defer root.Close()
	for _, key := range slices.Sorted(maps.Keys(cfg.Sysctl)) {
		if err := writeSysctl(key, cfg.Sysctl[key]); err != nil {
			return err
		}
	}
	for _, p := range cfg.ReadonlyPaths {
		if err := readonlyPath(root, p); err != nil {
			return err
		}
	}
	if err := maskPaths(root, cfg.MaskedPaths); err != nil {
		return err
	}
	if cfg.Readonlyfs {
		// mount_setattr changes only the rdonly bit, so the flags a user
		// namespace inherits locked (nosuid, nodev...) stay as they are.
		if err := setReadonly(root, false); err != nil {
			return &mountError{op: "remount read-only", target: "/", err: err}
		}
	}
	if cfg.RootPropagation != 0 {
		if err := unix.Mount("", "/", "", uintptr(cfg.RootPropagation), ""); err != nil {
			return &mountError{op: "set propagation of", target: "/", err: err}
		}
	}
	return nil
}

// sysctlPath turns a sysctl key into its path under /proc/sys: dots become
// slashes unless the key already has slashes (so "net/ipv4/conf/eth0.100/
// forwarding" can name a VLAN interface).
func sysctlPath(key string) (string, error) {
	p := key
	if !strings.Contains(p, "/") {
		p = strings.ReplaceAll(p, ".", "/")
	}
	p = strings.Trim(p, "/")
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return "", fmt.Errorf("invalid sysctl key %q", key)
		}
	}
	return p, nil
}

// writeSysctl writes a sysctl through a procfs handle that pathrs-lite made
// or checked (a private procfs instance where possible, never something the
// container mounted over /proc/sys), and checks with fstatfs that the file
// written really is on procfs (CVE-2019-19921, CVE-2025-52881). The lookup
// follows no symlinks; the re-open goes through the handle's own magic link.
func writeSysctl(key, value string) error {
	p, err := sysctlPath(key)
	if err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("write sysctl %s: %w", key, err) }
	proc, err := procfs.OpenProcRoot()
	if err != nil {
		return fail(fmt.Errorf("open procfs: %w", err))
	}
	defer proc.Close()
	h, err := proc.OpenRoot("sys/" + p)
	if err != nil {
		return fail(err)
	}
	defer h.Close()
	f, err := pathrs.Reopen(h, unix.O_WRONLY|unix.O_TRUNC)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return fail(err)
	}
	if st.Type != unix.PROC_SUPER_MAGIC {
		return fail(fmt.Errorf("/proc/sys/%s is not on procfs", p))
	}
	if _, err := f.WriteString(value); err != nil {
		return fail(err)
	}
	return nil
}

// readonlyPath binds p onto itself, recursively, and makes that tree
// read-only: stricter than runc, whose remount covers only the top mount.
func readonlyPath(root *os.File, p string) error {
	target, err := pathrs.OpenatInRoot(root, p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	defer target.Close()
	tree, err := openTree(target, unix.AT_RECURSIVE)
	if err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	defer tree.Close()
	if err := setReadonly(tree, true); err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	if err := moveMount(tree, target); err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	return nil
}

// openTree is open_tree(OPEN_TREE_CLONE): a detached copy of the mount at
// f (a bind of f, for a file or a subdirectory).
func openTree(f *os.File, flags uint) (*os.File, error) {
	fd, err := unix.OpenTree(int(f.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|flags)
	runtime.KeepAlive(f)
	if err != nil {
		return nil, fmt.Errorf("open_tree: %w", err)
	}
	return os.NewFile(uintptr(fd), "open_tree:"+f.Name()), nil
}

// moveMount attaches the detached mount tree on the handle target.
func moveMount(tree, target *os.File) error {
	err := unix.MoveMount(int(tree.Fd()), "", int(target.Fd()), "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	runtime.KeepAlive(tree)
	runtime.KeepAlive(target)
	if err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// bindFd bind-mounts the handle src on the handle target.
func bindFd(src, target *os.File) error {
	tree, err := openTree(src, 0)
	if err != nil {
		return err
	}
	defer tree.Close()
	return moveMount(tree, target)
}

// maskPaths hides each path: a directory under one shared read-only empty
// tmpfs (one superblock for all, as runc 1.3.6 does), anything else under
// the container's /dev/null, after checking that it really is char 1:3 so
// that a replaced /dev/null cannot turn the mask into a writable bind of
// something else (CVE-2025-31133).
func maskPaths(root *os.File, paths []string) error {
	var null, tmpfs *os.File
	defer func() {
		if null != nil {
			null.Close()
		}
		if tmpfs != nil {
			tmpfs.Close()
		}
	}()
	for _, p := range paths {
		target, err := pathrs.OpenatInRoot(root, p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return &mountError{op: "mask", target: p, err: err}
		}
		err = func() error {
			defer target.Close()
			st, err := fstatFile(target)
			if err != nil {
				return err
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				if tmpfs == nil {
					if tmpfs, err = newMaskTmpfs(); err != nil {
						return err
					}
					// The first attach uses the fsmount handle itself; after
					// it the handle is on an attached mount, which
					// open_tree can clone for the others.
					return moveMount(tmpfs, target)
				}
				return bindFd(tmpfs, target)
			}
			if null == nil {
				if null, err = openDevNull(root); err != nil {
					return err
				}
			}
			return bindFd(null, target)
		}()
		if err != nil {
			return &mountError{op: "mask", target: p, err: err}
		}
	}
	return nil
}

// newMaskTmpfs makes a detached empty tmpfs, read-only, nosuid, nodev and
// noexec.
func newMaskTmpfs() (*os.File, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fsopen tmpfs: %w", err)
	}
	defer unix.Close(fsfd)
	// Named like runc's masks in /proc/self/mountinfo; cosmetic.
	_ = unix.FsconfigSetString(fsfd, "source", "tmpfs")
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return nil, fmt.Errorf("fsconfig tmpfs: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC,
		unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fsmount tmpfs: %w", err)
	}
	return os.NewFile(uintptr(mfd), "masking tmpfs"), nil
}

// openDevNull opens the container's /dev/null and checks that it is the
// null device.
func openDevNull(root *os.File) (*os.File, error) {
	f, err := pathrs.OpenatInRoot(root, "/dev/null")
	if err != nil {
		return nil, fmt.Errorf("open /dev/null: %w", err)
	}
	if err := checkDevice(f, unix.S_IFCHR, 1, 3); err != nil {
		f.Close()
		return nil, fmt.Errorf("/dev/null: %w: refusing to bind it over masked paths", err)
	}
	return f, nil
}

// checkDevice checks that f is a device node of type ifmt with the given
// numbers.
func checkDevice(f *os.File, ifmt uint32, major, minor int64) error {
	st, err := fstatFile(f)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != ifmt || int64(unix.Major(st.Rdev)) != major || int64(unix.Minor(st.Rdev)) != minor {
		return fmt.Errorf("not %s %d:%d (found %s)", fileTypeName(ifmt), major, minor, describeStat(&st))
	}
	return nil
}

// mountConsole binds the pty slave at slavePath (inside the container,
// after pivot_root) on /dev/console, creating /dev/console as an empty file
// (mode 0600) if it is missing and replacing a symlink there.
func mountConsole(slavePath string) error {
	fail := func(err error) error {
		return &mountError{op: "bind-mount", source: slavePath, target: "/dev/console", err: err}
	}
	root, err := os.OpenFile("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	slave, err := pathrs.OpenatInRoot(root, slavePath)
	if err != nil {
		return fail(err)
	}
	defer slave.Close()
	if st, err := fstatFile(slave); err != nil {
		return fail(err)
	} else if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return fail(fmt.Errorf("%s is not a character device (found %s)", slavePath, describeStat(&st)))
	}
	dev, err := pathrs.MkdirAllHandle(root, "/dev", 0o755)
	if err != nil {
		return fail(err)
	}
	defer dev.Close()
	console, err := openPlaceholder(dev, "console", 0o600)
	if err != nil {
		return fail(err)
	}
	defer console.Close()
	if err := bindFd(slave, console); err != nil {
		return fail(err)
	}
	return nil
}

// openPlaceholder returns an O_PATH handle on dir/name, a file something
// can be bind-mounted on: created empty if missing, a symlink there is
// removed first (it is never followed), a directory is refused.
func openPlaceholder(dir *os.File, name string, mode uint32) (*os.File, error) {
	for range 2 {
		if err := createEmptyFile(dir, name, mode); err != nil {
			return nil, err
		}
		f, err := openatFile(dir, name, unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, err
		}
		st, err := fstatFile(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			f.Close()
			return nil, fmt.Errorf("%s is a directory", f.Name())
		case unix.S_IFLNK:
			f.Close()
			if err := unix.Unlinkat(int(dir.Fd()), name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return nil, fmt.Errorf("remove symlink %s: %w", name, err)
			}
			continue
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s keeps changing", name)
}

func fileTypeName(ifmt uint32) string {
	switch ifmt {
	case unix.S_IFCHR:
		return "char device"
	case unix.S_IFBLK:
		return "block device"
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFLNK:
		return "symlink"
	case unix.S_IFREG:
		return "regular file"
	case unix.S_IFSOCK:
		return "socket"
	}
	return "unknown file type"
}

func describeStat(st *unix.Stat_t) string {
	ifmt := st.Mode & unix.S_IFMT
	if ifmt == unix.S_IFCHR || ifmt == unix.S_IFBLK {
		return fmt.Sprintf("%s %d:%d", fileTypeName(ifmt), unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	return fileTypeName(ifmt)
}
