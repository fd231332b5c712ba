package libbox

// The entries of Config.Mounts, made one by one in prepareRootfs: a bind of
// a host path, a new filesystem, proc, sysfs and mqueue (with the host's
// bound instead where a user namespace may not mount them), cgroup.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/moby/sys/mountinfo"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// lxcfsProcFiles are the only paths inside /proc a mount may cover: the
// files lxcfs emulates (the list runc allows).
var lxcfsProcFiles = []string{
	"/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
	"/proc/swaps", "/proc/uptime", "/proc/loadavg", "/proc/slabinfo",
	"/proc/sys/kernel/ns_last_pid", "/proc/sys/crypto/fips_enabled",
}

// mountLabel is how errors name the thing mounted: the type, plus the
// source when it is a path (a block device, say).
func mountLabel(m *Mount) string {
	if strings.HasPrefix(m.Source, "/") {
		return m.Type + " " + m.Source
	}
	return m.Type
}

// mountEntry makes one cfg.Mounts entry, with a source tree the runtime
// opened for it (tree, or nil: mountsrc_linux.go).
func (r *rootfsMounter) mountEntry(m Mount, tree *os.File) error {
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
		err = r.bindMount(&m, dest, tree)
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
	if err := r.setRecursiveAttrs(&m, dest); err != nil {
		return err
	}
	return r.setPropagation(&m, dest)
}

// setRecursiveAttrs applies m's recursive attributes to the mount at dest
// and every mount below it.
func (r *rootfsMounter) setRecursiveAttrs(m *Mount, dest string) error {
	set, clr := m.RecAttrSet, m.RecAttrClr
	if m.RecursiveReadonly {
		set |= unix.MOUNT_ATTR_RDONLY
		clr &^= unix.MOUNT_ATTR_RDONLY
	}
	if set|clr == 0 {
		return nil
	}
	dst, err := r.reopen(dest)
	if err != nil {
		return &mountError{op: "set recursive attributes of", target: dest, err: err}
	}
	defer dst.Close()
	attr := unix.MountAttr{Attr_set: set, Attr_clr: clr}
	err = unix.MountSetattr(int(dst.Fd()), "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
	runtime.KeepAlive(dst)
	if err != nil {
		return &mountError{op: "set recursive attributes of", target: dest, err: fmt.Errorf("mount_setattr: %w", err)}
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
	f, err := openInRoot(r.root, dest)
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
	return openInRoot(r.root, dest)
}

// mkdirAll resolves the directory p inside the rootfs, creating what is
// missing. mkdirAllInRoot does not create through a dangling symlink; for one
// (an image's /dev -> /some/dir that the image lacks), the symlinks are
// resolved as if the rootfs were / and the directories made there, so the
// result is the one the container will see, and never a host directory.
func (r *rootfsMounter) mkdirAll(p string) (*os.File, error) {
	f, err := mkdirAllInRoot(r.root, p, 0o755)
	if err == nil || !errors.Is(err, unix.ENOTDIR) {
		return f, err
	}
	resolved, rerr := r.resolveLexically(p)
	if rerr != nil || resolved == filepath.Join("/", p) {
		return nil, err
	}
	return mkdirAllInRoot(r.root, resolved, 0o755)
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

// openDirNoFollow opens (creating it if needed) the directory dest without
// following a symlink in its last component: proc and sysfs (fstype) go on
// a real directory or nowhere (CVE-2019-19921). The error carries runc's
// wording, which callers and tests match.
func (r *rootfsMounter) openDirNoFollow(dest, fstype string) (*os.File, error) {
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
		return nil, fmt.Errorf("filesystem %q must be mounted on ordinary directory: the destination is a symlink or not a directory", fstype)
	}
	return f, err
}

// reopen resolves dest again after a mount, so the handle is on the new
// mount rather than on the directory underneath it.
func (r *rootfsMounter) reopen(dest string) (*os.File, error) {
	return openInRoot(r.root, dest)
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

// mountFS mounts a new filesystem of type fstype on dest.
func (r *rootfsMounter) mountFS(m *Mount, dest, fstype string) error {
	fail := func(err error) error {
		return &mountError{op: "mount", source: mountLabel(m), target: dest, err: err}
	}
	var dst *os.File
	var err error
	covers := false
	if fstype == "tmpfs" {
		f, err := r.reopen(dest)
		if err == nil {
			f.Close()
			covers = true
		} else if !errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("resolve destination: %w", err))
		}
	}
	if fstype == "proc" || fstype == "sysfs" {
		dst, err = r.openDirNoFollow(dest, fstype)
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
	data := m.Data
	if covers {
		if data, err = tmpfsModeData(dst, data); err != nil {
			return fail(err)
		}
	}
	flags := m.attrFlags()
	copyUp := m.CopyUp && fstype == "tmpfs"
	if copyUp {
		// Filled first, made read-only after.
		flags &^= unix.MS_RDONLY
	}
	if dest == "/dev" && flags&unix.MS_RDONLY != 0 {
		// The devices, devpts, shm... still have to go in: read-only once
		// they have (mountAll), as runc does.
		flags &^= unix.MS_RDONLY
		r.devReadonly = m
	}
	if err := mountFd(m.Source, nil, dst, fstype, flags, data); err != nil {
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
		dst, err := r.openDirNoFollow(dest, fstype)
		if err != nil {
			return fail(err)
		}
		defer dst.Close()
		if err := checkProcfs(int(dst.Fd()), dest); err != nil {
			return fail(fmt.Errorf("after mounting: %w", err))
		}
	}
	return nil
}

// tmpfsModeData is the data of a tmpfs mount on dst, a directory that was
// there before (in the image or made by an earlier mount), with the mode of
// dst put first, as runc does: the tmpfs keeps the mode of the directory it
// covers instead of tmpfs's 1777, unless data has a mode= of its own, which
// comes later and so wins. The mode is read from the handle the mount goes
// on, not from a path the rootfs could swap.
func tmpfsModeData(dst *os.File, data string) (string, error) {
	st, err := fstatFile(dst)
	if err != nil {
		return "", fmt.Errorf("stat destination: %w", err)
	}
	mode := fmt.Sprintf("mode=%04o", st.Mode&0o7777)
	if data == "" {
		return mode, nil
	}
	return mode + "," + data, nil
}

// bindMount bind-mounts m.Source (a host path) on dest, or attaches tree,
// the clone of it the runtime made, when there is one; then applies the
// other flags of m by a remount.
func (r *rootfsMounter) bindMount(m *Mount, dest string, tree *os.File) error {
	fail := func(err error) error {
		return &mountError{op: "bind-mount", source: m.Source, target: dest, err: err}
	}
	var isDir bool
	if tree != nil {
		st, err := fstatFile(tree)
		if err != nil {
			return fail(err)
		}
		isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
	} else {
		st, err := os.Stat(m.Source)
		if err != nil {
			return fail(err)
		}
		isDir = st.IsDir()
	}
	dst, err := r.openDest(dest, isDir)
	if err != nil {
		return fail(err)
	}
	defer dst.Close()
	if err := r.checkProcDest(m, dst); err != nil {
		return fail(err)
	}
	if tree != nil {
		err = moveMount(tree, dst)
	} else {
		err = mountFd(m.Source, nil, dst, "", unix.MS_BIND|uintptr(m.Flags&unix.MS_REC), "")
	}
	if err != nil {
		return fail(err)
	}
	return r.remountBind(m, dest)
}

// remountBind applies m's flags (ro, nosuid, nodev, noexec, atime...) to the
// bind mount at dest. As runc does (and mount(8) does not), a mount that
// only clears flags ("rw", "dev") is remounted too; one that names none
// keeps the flags of its source.
func (r *rootfsMounter) remountBind(m *Mount, dest string) error {
	flags := m.attrFlags()
	if flags == 0 && m.ClearedFlags == 0 {
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

const (
	// atimeEnumFlags are the mutually exclusive atime modes.
	atimeEnumFlags = unix.MS_NOATIME | unix.MS_RELATIME | unix.MS_STRICTATIME
	atimeFlags     = atimeEnumFlags | unix.MS_NODIRATIME
	// lockableFlags are the flags the kernel locks (MNT_LOCK_*) on the
	// mounts of a mount namespace copied into a new user namespace.
	lockableFlags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | atimeFlags
)

// remountFd remounts the bind mount whose root dst is on with flags. In a
// user namespace the ro, nosuid, nodev, noexec and atime flags of a mount
// that came from the host are locked, and a remount that would clear them
// fails with EPERM; then, as runc does, the remount is retried keeping
// those flags, unless the config explicitly asked to clear one of them
// (cleared) or for an atime mode other than the locked one: that is an
// error, not a mount other than the one asked for.
func remountFd(dst *os.File, flags, cleared uintptr) error {
	err := mountFd("", nil, dst, "", flags|unix.MS_BIND|unix.MS_REMOUNT, "")
	if !errors.Is(err, unix.EPERM) {
		return err
	}
	var st unix.Statfs_t
	if serr := unix.Fstatfs(int(dst.Fd()), &st); serr != nil {
		return err
	}
	src := statfsMountFlags(st.Flags)
	if c := src & cleared & lockableFlags; c != 0 {
		return fmt.Errorf("cannot clear locked flags %s: %w", mountFlagNames(c), err)
	}
	if flags&atimeFlags != 0 && flags&atimeFlags != src&atimeFlags {
		return fmt.Errorf("cannot change locked atime flags %s: %w", mountFlagNames(src&atimeFlags), err)
	}
	locked := src & lockableFlags
	if err := mountFd("", nil, dst, "", flags|locked|unix.MS_BIND|unix.MS_REMOUNT, ""); err != nil {
		return fmt.Errorf("remount with locked flags %s re-applied: %w", mountFlagNames(locked), err)
	}
	return nil
}

// statfsMountFlags maps the ST_* flags of statfs(2) to the MS_* flags of
// the mount. The kernel stores no strictatime: a mount with no other
// atime mode has it.
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
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st&p.st != 0 {
			f |= p.ms
		}
	}
	if f&atimeEnumFlags == 0 {
		f |= unix.MS_STRICTATIME
	}
	return f
}

// mountFlagNames names the lockable flags in f, as mount(8) options.
func mountFlagNames(f uintptr) string {
	var names []string
	for _, n := range []struct {
		ms   uintptr
		name string
	}{
		{unix.MS_RDONLY, "ro"},
		{unix.MS_NOSUID, "nosuid"},
		{unix.MS_NODEV, "nodev"},
		{unix.MS_NOEXEC, "noexec"},
		{unix.MS_NOATIME, "noatime"},
		{unix.MS_NODIRATIME, "nodiratime"},
		{unix.MS_RELATIME, "relatime"},
		{unix.MS_STRICTATIME, "strictatime"},
	} {
		if f&n.ms != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// bindFallback replaces a filesystem mount that the kernel refused in a
// user namespace with a recursive bind of the host's mount of it. A
// read-only request is applied to every mount of the bound tree: the host's
// submounts (of /sys, say) must not stay writable under a "ro" sysfs.
func (r *rootfsMounter) bindFallback(m *Mount, dest, source string) error {
	bm := *m
	bm.Source = source
	bm.Flags |= unix.MS_BIND | unix.MS_REC
	if err := r.bindMount(&bm, dest, nil); err != nil {
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
	if errors.Is(err, unix.EBUSY) {
		// mount(2) refuses the same filesystem on the same mount point:
		// under a /sys bound from the host (`spec --rootless`), dest is
		// the host's cgroup2 mount already, and a cgroup2 mount made in
		// the container's cgroup namespace has the same superblock.
		// move_mount of a detached fsmount has no such rule, and gives
		// the namespace's view (runc binds the container's own cgroup
		// directory there instead). Without a cgroup namespace of the
		// user namespace's, fsopen fails with EPERM: the bind below.
		logrus.Debugf("mount cgroup2 to %s: %v: mounting it with fsmount instead", dest, err)
		err = r.moveNewCgroup2(&cm, dest)
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EBUSY) {
		logrus.Debugf("mount cgroup2 to %s: %v: binding the host's /sys/fs/cgroup instead", dest, err)
		err = r.bindFallback(m, dest, "/sys/fs/cgroup")
	}
	return err
}

// moveNewCgroup2 mounts a new cgroup2 filesystem (fsopen, fsmount) with
// m's attributes and moves it onto dest.
func (r *rootfsMounter) moveNewCgroup2(m *Mount, dest string) error {
	fail := func(err error) error {
		return &mountError{op: "mount", source: "cgroup2", target: dest, err: err}
	}
	dst, err := r.reopen(dest)
	if err != nil {
		return fail(err)
	}
	defer dst.Close()
	fsfd, err := unix.Fsopen("cgroup2", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fail(fmt.Errorf("fsopen: %w", err))
	}
	defer unix.Close(fsfd)
	_ = unix.FsconfigSetString(fsfd, "source", "cgroup2") // cosmetic, as mount(2)'s
	for _, opt := range strings.Split(m.Data, ",") {
		if opt == "" {
			continue
		}
		if k, v, ok := strings.Cut(opt, "="); ok {
			err = unix.FsconfigSetString(fsfd, k, v)
		} else {
			err = unix.FsconfigSetFlag(fsfd, opt)
		}
		if err != nil {
			return fail(fmt.Errorf("fsconfig %s: %w", opt, err))
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fail(fmt.Errorf("fsconfig create: %w", err))
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, mountAttrs(m.attrFlags()))
	if err != nil {
		return fail(fmt.Errorf("fsmount: %w", err))
	}
	tree := os.NewFile(uintptr(mfd), "cgroup2")
	defer tree.Close()
	if err := moveMount(tree, dst); err != nil {
		return fail(err)
	}
	return nil
}

// mountAttrs are the MOUNT_ATTR_* of the MS_* attribute flags (see
// Mount.attrFlags), for fsmount and mount_setattr.
func mountAttrs(flags uintptr) int {
	var a int
	for _, f := range []struct {
		ms   uintptr
		attr int
	}{
		{unix.MS_RDONLY, unix.MOUNT_ATTR_RDONLY},
		{unix.MS_NOSUID, unix.MOUNT_ATTR_NOSUID},
		{unix.MS_NODEV, unix.MOUNT_ATTR_NODEV},
		{unix.MS_NOEXEC, unix.MOUNT_ATTR_NOEXEC},
		{unix.MS_NODIRATIME, unix.MOUNT_ATTR_NODIRATIME},
		{unix.MS_NOSYMFOLLOW, unix.MOUNT_ATTR_NOSYMFOLLOW},
	} {
		if flags&f.ms != 0 {
			a |= f.attr
		}
	}
	switch {
	case flags&unix.MS_NOATIME != 0:
		a |= unix.MOUNT_ATTR_NOATIME
	case flags&unix.MS_STRICTATIME != 0:
		a |= unix.MOUNT_ATTR_STRICTATIME
	}
	return a
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
	flags := m.attrFlags()
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
	flags := m.attrFlags()
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
