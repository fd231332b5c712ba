package libbox

// The container's root filesystem, in the order init sets it up:
//
//	prepareRootfs   before pivot_root (this file): propagation of /, a
//	                tmpfs root (rootfs_tmpfs_linux.go), the rootfs bind,
//	                cfg.Mounts (rootfs_mounts_linux.go), then /dev
//	                (rootfs_dev_linux.go)
//	pivotRootfs     pivot_root(2), or MS_MOVE + chroot with NoPivotRoot
//	                (rootfs_pivot_linux.go)
//	finalizeRootfs  after pivot_root: sysctls, read-only and masked paths,
//	                read-only /, propagation of / again
//	                (rootfs_finalize_linux.go)
//	mountConsole    the pty slave bound on /dev/console (rootfs_dev_linux.go)
//
// This file also holds the helpers every stage uses.
// Every path that comes from the config or from the image is resolved inside
// the rootfs through an open handle (openat2 RESOLVE_IN_ROOT, inroot_linux.go;
// pathrs-lite's user-space emulation where openat2 is refused), and the
// mount goes onto that handle, never onto a
// path string that the kernel would resolve a second time (CVE-2021-30465,
// CVE-2026-41579). Before the pivot the handle is named by its
// /proc/self/fd/N magic link (/proc is still the host's, checked to be
// procfs); after the pivot, where /proc belongs to the container, the new
// mount API (open_tree, move_mount, fsmount, mount_setattr: Linux 5.12 or
// later) attaches mounts to the handle directly.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
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

// entryError is the failure of one entry of Config.Mounts, in runc's words
// (its suite and its users' scripts match them).
type entryError struct {
	source, dest string
	err          error
}

func (e *entryError) Error() string {
	return fmt.Sprintf("error mounting %q to rootfs at %q: %v", e.source, e.dest, e.err)
}

func (e *entryError) Unwrap() error { return e.err }

const propagationFlags = unix.MS_SHARED | unix.MS_PRIVATE | unix.MS_SLAVE | unix.MS_UNBINDABLE

// attrFlags are the MS_* flags of m that are attributes of the mount (ro,
// nosuid, nodev, noexec, the atime mode...): what a mount or a bind
// remount applies, without the bind, recursion, remount and propagation
// bits, which are operations of their own.
func (m *Mount) attrFlags() uintptr {
	return uintptr(m.Flags) &^ (propagationFlags | unix.MS_REC | unix.MS_BIND | unix.MS_REMOUNT)
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
	// devReadonly is a read-only mount on /dev, mounted read-write so that
	// the entries under it can be made, and made read-only once they are.
	devReadonly *Mount
}

// prepareRootfs sets up the mounts of cfg inside cfg.Rootfs, in the
// container's new mount namespace, before pivot_root. It is called by init
// with the host's /proc still visible, and returns the rootfs's host path,
// symlinks resolved. trees are the source trees the runtime opened, by
// index in cfg.Mounts (mountsrc_linux.go).
func prepareRootfs(cfg *Config, trees *mountTrees) (string, error) {
	path, err := resolveRootfs(cfg.Rootfs)
	if err != nil {
		if ns, _ := cfg.NamespaceOf(NEWNS); ns.Path != "" && errors.Is(err, os.ErrNotExist) {
			// As in runc, the rootfs is set up in the joined namespace: one
			// whose root was pivoted (a container's) has no bundle in it.
			return "", fmt.Errorf("%w: the mount namespace %s does not see the bundle (a container's namespace holds only its own files): join one whose root is the host's, or leave out its path for a new one", err, ns.Path)
		}
		return "", err
	}
	// Mounts onto /proc/self/fd/N magic links need the host's procfs.
	if err := checkProcfsPath("/proc"); err != nil {
		return "", fmt.Errorf("host /proc: %w", err)
	}
	// An unbindable / would refuse the rootfs bind and every bind mount
	// from the host (EINVAL): it stays the default rslave until
	// finalizeRootfs applies cfg.RootPropagation to the container's /.
	prop := unix.MS_SLAVE | unix.MS_REC
	if cfg.RootPropagation != 0 && cfg.RootPropagation&unix.MS_UNBINDABLE == 0 {
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
	// After a recursive slave or private, no mount of this namespace is
	// shared (MS_SLAVE takes a mount out of its peer group too), nor is
	// one made since: the parent mount's check, a read of the whole of
	// mountinfo (hundreds of lines on a Kubernetes node), is needed only
	// when the propagation applied above is shared or not recursive (an
	// unbindable one is applied later: rslave here).
	if prop&unix.MS_REC == 0 || prop&(unix.MS_SLAVE|unix.MS_PRIVATE) == 0 {
		if err := makeParentMountPrivate(path); err != nil {
			return "", err
		}
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
	if err := mountAll(cfg, path, root, trees); err != nil {
		return "", err
	}
	return path, nil
}

// mountAll makes cfg.Mounts, in order, and then /dev, under the rootfs at
// path (root is a handle on it).
func mountAll(cfg *Config, path string, root *os.File, trees *mountTrees) error {
	_, userns := cfg.NamespaceOf(NEWUSER)
	r := &rootfsMounter{cfg: cfg, path: path, root: root, userns: userns}
	for i, m := range cfg.Mounts {
		tree, err := trees.get(i)
		if err != nil {
			return err
		}
		if err := r.mountEntry(m, tree); err != nil {
			return &entryError{source: m.Source, dest: m.Destination, err: err}
		}
	}
	if needsSetupDev(cfg) {
		if err := r.setupDev(); err != nil {
			return fmt.Errorf("set up /dev: %w", err)
		}
	}
	if m := r.devReadonly; m != nil {
		dev, err := r.reopen("/dev")
		if err != nil {
			return &mountError{op: "remount read-only", target: "/dev", err: err}
		}
		defer dev.Close()
		if err := remountFd(dev, m.attrFlags(), uintptr(m.ClearedFlags)); err != nil {
			return &mountError{op: "remount read-only", target: "/dev", err: err}
		}
	}
	return nil
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
