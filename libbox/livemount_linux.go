package libbox

// Mounts added to a running container (a persistent sandbox, or any OCI
// container): `nanobox-runc mount`, Sandbox.Mount. With the new mount API:
//
//  1. the source is cloned as a detached mount tree (open_tree
//     OPEN_TREE_CLONE|AT_RECURSIVE) and its attributes set on the whole
//     tree (mount_setattr: nosuid, nodev, and read-only when asked or when
//     the source is on a read-only mount). For a container with a user
//     namespace a helper joins that user namespace and makes a mount
//     namespace of its own, owned by it, and clones the tree there. The
//     kernel then locks what came from the more privileged namespace
//     (MNT_LOCKED, MNT_LOCK_*): the submounts of the source cannot be
//     unmounted to reveal what they cover (which is why the tree is always
//     recursive: a non-recursive clone of a source with locked submounts
//     is refused), and the flags of the mounts it copied (read-only,
//     nosuid, nodev, noexec) can never be cleared, by the container's root
//     (which has CAP_SYS_ADMIN over its own mount namespace) or by a
//     remount. As root, the helper's mount namespace is a copy of a
//     private one the runtime made first, in which the source is covered
//     by a clone of itself with the attributes already set (stageLiveTree):
//     so they are locked too, and a read-only mount stays read-only. A
//     rootless runtime copies the host's mount namespace, where it cannot
//     set anything: the attributes it sets afterwards are not locked, and
//     a container root with CAP_SYS_ADMIN could clear them (a sandbox has
//     no capabilities). Without a user namespace the container's root is
//     the host's, and the tree is cloned in the runtime itself.
//  2. a helper that joined the container's user and mount namespaces (the
//     nsenter stage, before the Go runtime: the one spawn path) gets the
//     tree over its sync socket and resolves the destination inside the
//     container's root: the parent directory with openat2
//     RESOLVE_IN_ROOT (symlinks and ".." stay inside the root), missing
//     directories made one by one (refused with a clear error on a
//     read-only root), the last component never a symlink; then
//     move_mount onto that open file, so a swap of the path while this
//     runs cannot move the mount anywhere else.
//  3. what was added is recorded in the container's state directory
//     (mounts.json, written atomically under the container's lock), with
//     the kernel's id of the mount: umount and remount act only on a
//     mount that was added and is still the one at its destination, never
//     on one the container made itself.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// LiveMount is a mount added to a running container.
type LiveMount struct {
	// Source is the host path mounted.
	Source string `json:"source"`
	// Target is where it is mounted, inside the container (the path as
	// resolved there).
	Target string `json:"target"`
	// ReadOnly is the mount's state: asked for, or forced by a source on
	// a read-only mount.
	ReadOnly bool `json:"readOnly"`
	// SourceReadOnly: the source is on a read-only mount or filesystem,
	// so the mount can never be made writable.
	SourceReadOnly bool `json:"sourceReadOnly,omitempty"`
	// MountID is the kernel's id of the mount in the container (the
	// unique id of statx STATX_MNT_ID_UNIQUE where the kernel has it).
	MountID uint64 `json:"mountId"`
	// SourceDev and SourceIno are the source's device and inode when it
	// was added: a remount that clones it again checks that the path
	// still leads there.
	SourceDev uint64 `json:"sourceDev,omitempty"`
	SourceIno uint64 `json:"sourceIno,omitempty"`
	// Added is when it was added.
	Added time.Time `json:"added"`
}

// liveMountsFile, in the state directory, lists the LiveMounts.
const liveMountsFile = "mounts.json"

// Errors of the live mounts.
var (
	// ErrNotAdded: the destination holds no mount that AddMount added.
	ErrNotAdded = errors.New("has no mount added by nanobox-runc")
)

// mountOp is what the parent asks a mount helper to do.
type mountOp struct {
	// Op is "open-tree" (clone Source), "attach" (the tree sent after
	// this message, at Target), "replace" (the mount MountID at Target by
	// the tree sent after this message), "remount" or "umount" (the mount
	// MountID at Target).
	Op       string `json:"op"`
	Source   string `json:"source,omitempty"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	// Dir: the source is a directory (the target must be one).
	Dir     bool   `json:"dir,omitempty"`
	MountID uint64 `json:"mountId,omitempty"`
	// Dev and Ino: what Source must still be, for "open-tree".
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

// mountReply is the helper's answer.
type mountReply struct {
	MountID uint64 `json:"mountId,omitempty"`
	Target  string `json:"target,omitempty"`
}

// Mounts lists the mounts added to the container, in the order added.
func (c *Container) Mounts() ([]LiveMount, error) {
	lock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	return readLiveMounts(c.dir)
}

func readLiveMounts(dir string) ([]LiveMount, error) {
	b, err := os.ReadFile(filepath.Join(dir, liveMountsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return []LiveMount{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", liveMountsFile, err)
	}
	var ms []LiveMount
	if err := json.Unmarshal(b, &ms); err != nil {
		return nil, fmt.Errorf("read %s: %w", liveMountsFile, err)
	}
	return ms, nil
}

// writeLiveMounts stores the list atomically (see writeFileAtomic).
func writeLiveMounts(dir string, ms []LiveMount) error {
	b, err := json.Marshal(ms)
	if err != nil {
		return fmt.Errorf("encode %s: %w", liveMountsFile, err)
	}
	if err := writeFileAtomic(dir, liveMountsFile, b, true); err != nil {
		return fmt.Errorf("write %s: %w", liveMountsFile, err)
	}
	return nil
}

// checkLiveTarget checks a destination's form.
func checkLiveTarget(target string) (string, error) {
	if target == "" || !filepath.IsAbs(target) || strings.IndexByte(target, 0) >= 0 {
		return "", fmt.Errorf("destination %q must be an absolute path inside the container", target)
	}
	// Lexically: "/a/../../etc" is "/etc", inside the root.
	clean := filepath.Clean(target)
	if clean == "/" {
		return "", errors.New("destination / : a mount cannot replace the container's root")
	}
	return clean, nil
}

// AddMount mounts b.Source (a host path) at b.Target inside the running
// container, read-only when b.ReadOnly is set or the source is on a
// read-only mount, always nosuid and nodev; see the top of the file.
func (c *Container) AddMount(b Bind) (*LiveMount, error) {
	target, err := checkLiveTarget(b.Target)
	if err != nil {
		return nil, fmt.Errorf("mount: %w", err)
	}
	if b.Source == "" {
		return nil, errors.New("mount: no source given")
	}
	if _, ok := c.st.Config.NamespaceOf(NEWNS); !ok {
		return nil, fmt.Errorf("mount: container %s shares the host's mount namespace: a mount added to it would land on the host (mounts can be added to containers with a mount namespace of their own)", c.st.ID)
	}
	src, err := filepath.Abs(b.Source)
	if err != nil {
		return nil, fmt.Errorf("mount: source: %w", err)
	}
	// The source is opened once, and what is checked is what is cloned.
	srcFile, st, err := openLiveSource(src)
	if err != nil {
		return nil, fmt.Errorf("mount: source: %w", err)
	}
	defer srcFile.Close()
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(srcFile.Fd()), &sfs); err != nil {
		return nil, fmt.Errorf("mount: source %s: %w", src, err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	lock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if st := c.Status(); st == Stopped {
		return nil, fmt.Errorf("mount: container %s %w", c.st.ID, ErrNotRunning)
	}
	list, err := readLiveMounts(c.dir)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(list, func(m LiveMount) bool { return m.Target == target }) {
		return nil, fmt.Errorf("mount: %s %w: a mount was added there already: umount it first", target, ErrExist)
	}
	m := LiveMount{Source: src, Target: target, SourceReadOnly: sfs.Flags&unix.ST_RDONLY != 0,
		SourceDev: st.Dev, SourceIno: st.Ino}
	m.ReadOnly = b.ReadOnly || m.SourceReadOnly

	tree, err := c.openLive(srcFile, &st, m.ReadOnly)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", src, err)
	}
	defer tree.Close()
	reply, err := c.mountHelper(mountOp{Op: "attach", Target: target, Dir: isDir}, tree)
	if err != nil {
		return nil, fmt.Errorf("mount %s at %s: %w", src, target, err)
	}
	if slices.ContainsFunc(list, func(l LiveMount) bool { return l.Target == reply.Target }) {
		// The target named another added mount's place through a
		// symlink: one mount stacked on another could be removed by
		// neither name.
		_, _ = c.mountHelper(mountOp{Op: "umount", Target: reply.Target, MountID: reply.MountID}, nil)
		return nil, fmt.Errorf("mount: %s is %s, %w: a mount was added there already: umount it first", target, reply.Target, ErrExist)
	}
	m.Target, m.MountID, m.Added = reply.Target, reply.MountID, time.Now().UTC()
	if err := writeLiveMounts(c.dir, append(list, m)); err != nil {
		// The mount is there but not recorded: take it away again.
		_, _ = c.mountHelper(mountOp{Op: "umount", Target: m.Target, MountID: m.MountID}, nil)
		return nil, err
	}
	return &m, nil
}

// findLiveMount finds the mount added at target.
func findLiveMount(list []LiveMount, id, target string) (int, error) {
	t, err := checkLiveTarget(target)
	if err != nil {
		return -1, err
	}
	i := slices.IndexFunc(list, func(m LiveMount) bool { return m.Target == t })
	if i < 0 {
		return -1, fmt.Errorf("%s %w (it is the container's own, or nothing is mounted there; nanobox-runc mounts %s lists what was added)", t, ErrNotAdded, id)
	}
	return i, nil
}

// RemountMount makes the mount added at target read-only or writable. A
// mount whose source is on a read-only mount cannot be made writable.
func (c *Container) RemountMount(target string, readOnly bool) error {
	lock, err := c.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	list, err := readLiveMounts(c.dir)
	if err != nil {
		return err
	}
	i, err := findLiveMount(list, c.st.ID, target)
	if err != nil {
		return fmt.Errorf("remount: %w", err)
	}
	m := &list[i]
	if !readOnly && m.SourceReadOnly {
		return fmt.Errorf("remount %s read-write: its source %s is on a read-only mount, which a mount of it cannot leave", m.Target, m.Source)
	}
	if m.ReadOnly == readOnly {
		return nil
	}
	if readOnly && !c.locksLive() {
		if _, err := c.mountHelper(mountOp{Op: "remount", Target: m.Target, MountID: m.MountID, ReadOnly: readOnly}, nil); err != nil {
			return fmt.Errorf("remount %s: %w", m.Target, err)
		}
		m.ReadOnly = readOnly
		return writeLiveMounts(c.dir, list)
	}
	// A mount with the new attributes takes the old one's place (a
	// process with a file open in the old one keeps it): where the
	// attributes are locked, and to make a mount writable, which a
	// recursive remount would do to the source's own read-only submounts
	// too. The source is cloned again, so it must still be what was
	// mounted: a program that can write on its path may have swapped it.
	srcFile, st, err := openLiveSource(m.Source)
	if err != nil {
		return fmt.Errorf("remount %s: source: %w", m.Target, err)
	}
	defer srcFile.Close()
	if m.SourceIno != 0 && (st.Dev != m.SourceDev || st.Ino != m.SourceIno) {
		return fmt.Errorf("remount %s: its source %s is no longer what was mounted (it was moved or replaced): umount it and mount the source again", m.Target, m.Source)
	}
	tree, err := c.openLive(srcFile, &st, readOnly)
	if err != nil {
		return fmt.Errorf("remount %s: %w", m.Target, err)
	}
	defer tree.Close()
	reply, err := c.mountHelper(mountOp{Op: "replace", Target: m.Target, MountID: m.MountID, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, tree)
	if err != nil {
		return fmt.Errorf("remount %s: %w", m.Target, err)
	}
	m.ReadOnly, m.MountID = readOnly, reply.MountID
	return writeLiveMounts(c.dir, list)
}

// locksLive reports whether the attributes of the mounts added to c are
// locked against its root: as root, into a container with a user
// namespace (see the top of the file).
func (c *Container) locksLive() bool {
	_, userns := c.st.Config.NamespaceOf(NEWUSER)
	return userns && !c.rt.Rootless
}

// openLive clones src (opened by openLiveSource; st its stat) as the tree
// of a mount added to c, with the live mount attributes (see the top of
// the file). Where the clone is made in another mount namespace, the path
// is opened again there and must lead to the same file.
func (c *Container) openLive(src *os.File, st *unix.Stat_t, readOnly bool) (*os.File, error) {
	switch {
	case c.rt.Rootless:
		return c.openTreeInUserNS(src.Name(), st, readOnly, nil)
	case !c.locksLive():
		return openLiveTreeFd(int(src.Fd()), src.Name(), readOnly)
	}
	staged, err := stageLiveTree(src.Name(), st, readOnly)
	if err != nil {
		return nil, err
	}
	defer staged.Close()
	return c.openTreeInUserNS(src.Name(), st, readOnly, staged)
}

// openLiveSource opens src, an absolute host path, as the source of a
// mount added to a running container: O_PATH, with no symbolic link
// anywhere in the path. A program that can write to a directory on the
// way (its own workspace, bound from the host) could otherwise swap a
// component for a symlink to / between the checks and the clone.
func openLiveSource(src string) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := openAt2(unix.AT_FDCWD, src, unix.O_PATH, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if errors.Is(err, unix.ELOOP) {
		return nil, st, fmt.Errorf("%s has a symbolic link in its path, which whoever can write where it is could point elsewhere: give the path it resolves to (realpath %s)", src, src)
	}
	if err != nil {
		return nil, st, &fs.PathError{Op: "open", Path: src, Err: err}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, st, &fs.PathError{Op: "stat", Path: src, Err: err}
	}
	return os.NewFile(uintptr(fd), src), st, nil
}

// reopenLiveSource opens src again (in another mount namespace) and
// checks that it is still the file st describes.
func reopenLiveSource(src string, st *unix.Stat_t) (*os.File, error) {
	f, now, err := openLiveSource(src)
	if err != nil {
		return nil, err
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was being mounted (it was moved or replaced)", src)
	}
	return f, nil
}

// stageLiveTree returns a new mount namespace, owned by the host's user
// namespace and private (nothing done in it reaches the host's mounts), in
// which src is covered by a clone of itself with the live mount attributes,
// set with the runtime's privilege. A copy of it made in the container's
// user namespace has them locked.
func stageLiveTree(src string, st *unix.Stat_t, readOnly bool) (*os.File, error) {
	var ns *os.File
	err := onOwnThread(func() error {
		if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare a mount namespace: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make the staging mount namespace private: %w", err)
		}
		dst, err := reopenLiveSource(src, st)
		if err != nil {
			return err
		}
		defer dst.Close()
		fd, err := unix.OpenTree(int(dst.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
		if err != nil {
			return fmt.Errorf("open_tree: %w", err)
		}
		defer unix.Close(fd)
		if err := setTreeAttrs(fd, readOnly); err != nil {
			return err
		}
		if err := unix.MoveMount(fd, "", int(dst.Fd()), "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return fmt.Errorf("move_mount: %w", err)
		}
		ns, err = os.Open("/proc/thread-self/ns/mnt")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("stage the mount: %w", err)
	}
	return ns, nil
}

// RemoveMount unmounts the mount added at target. Only a mount AddMount
// added, and still the one at its destination, can be removed.
func (c *Container) RemoveMount(target string) error {
	lock, err := c.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	list, err := readLiveMounts(c.dir)
	if err != nil {
		return err
	}
	i, err := findLiveMount(list, c.st.ID, target)
	if err != nil {
		return fmt.Errorf("umount: %w", err)
	}
	m := list[i]
	if _, err := c.mountHelper(mountOp{Op: "umount", Target: m.Target, MountID: m.MountID}, nil); err != nil {
		return fmt.Errorf("umount %s: %w", m.Target, err)
	}
	return writeLiveMounts(c.dir, slices.Delete(list, i, i+1))
}

// openLiveTreeFd clones the source open at srcFd (named src) as a detached
// tree with the live mount attributes, in this process's mount namespace.
func openLiveTreeFd(srcFd int, src string, readOnly bool) (*os.File, error) {
	fd, err := unix.OpenTree(srcFd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return nil, fmt.Errorf("open_tree: %w", err)
	}
	tree := os.NewFile(uintptr(fd), "mount tree "+src)
	if err := setTreeAttrs(fd, readOnly); err != nil {
		tree.Close()
		return nil, err
	}
	return tree, nil
}

// setTreeAttrs sets nosuid, nodev and, when asked, read-only on a whole
// detached tree, and makes it private: a clone of a shared mount would
// stay in the host's peer group, so that a mount the host makes under the
// source later would appear in the container, with none of these
// attributes, and one the container makes would appear on the host.
func setTreeAttrs(fd int, readOnly bool) error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, Propagation: unix.MS_PRIVATE}
	if readOnly {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return nil
}

// openTreeInUserNS clones src in a helper that joins the container's user
// namespace and makes a mount namespace of its own there, a copy of from
// (nil: of the runtime's own; see the top of the file).
func (c *Container) openTreeInUserNS(src string, st *unix.Stat_t, readOnly bool, from *os.File) (*os.File, error) {
	if _, ok := c.st.Config.NamespaceOf(NEWUSER); !ok {
		return nil, errors.New("a rootless runtime can add mounts only to a container with a user namespace")
	}
	var tree *os.File
	_, err := c.runMountHelper([]string{"user"}, from, unix.CLONE_NEWNS, mountOp{Op: "open-tree", Source: src, ReadOnly: readOnly, Dev: st.Dev, Ino: st.Ino}, nil, func(sock *syncSocket) error {
		fd, err := recvFd(sock.f)
		if err != nil {
			return fmt.Errorf("receive the mount tree: %w", err)
		}
		tree = os.NewFile(uintptr(fd), "mount tree "+src)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tree, nil
}

// mountHelper runs op in a helper that joined the container's user (when
// it has one) and mount namespaces; tree, when set, is passed to it.
func (c *Container) mountHelper(op mountOp, tree *os.File) (*mountReply, error) {
	kinds := []string{"mnt"}
	if _, ok := c.st.Config.NamespaceOf(NEWUSER); ok {
		kinds = []string{"user", "mnt"}
	}
	return c.runMountHelper(kinds, nil, 0, op, tree, nil)
}

// runMountHelper starts a helper (the runtime's init stage) that joins the
// container's namespaces of the given kinds (and the mount namespace mntns,
// when set: it is joined first, with the runtime's credentials) and
// creates those of clone, sends it op (and tree), and returns its reply;
// after collects what follows the reply.
func (c *Container) runMountHelper(kinds []string, mntns *os.File, clone uintptr, op mountOp, tree *os.File, after func(*syncSocket) error) (_ *mountReply, retErr error) {
	// The namespaces are opened while a pidfd pins init (see Exec).
	pidfd, err := c.pidfd()
	if err != nil {
		return nil, err
	}
	defer unix.Close(pidfd)
	all, err := c.openNamespaces()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range all {
			f.file.Close()
		}
	}()
	if ps, err := readProcStat(c.st.InitPid); err != nil || ps.StartTime != c.st.InitStartTime {
		return nil, fmt.Errorf("container %s %w", c.st.ID, ErrNotRunning)
	}
	exe, err := sealedSelfExe(c.st.Config)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	sp := newSpawnSpec(devnull, devnull, devnull, nil)
	for _, f := range all {
		if slices.Contains(kinds, f.kind) {
			sp.joins = append(sp.joins, nsenter.Join{Kind: f.kind, Path: "/proc/self/fd/" + strconv.Itoa(sp.add(f.file))})
		}
	}
	if mntns != nil {
		sp.joins = append(sp.joins, nsenter.Join{Kind: "mnt", Path: "/proc/self/fd/" + strconv.Itoa(sp.add(mntns))})
	}
	sp.exe = exe
	sp.clone = clone
	child, err := sp.start()
	if err != nil {
		return nil, fmt.Errorf("mount helper: %w", err)
	}
	defer func() {
		if retErr != nil {
			child.abort()
			return
		}
		child.reap()
		var ws unix.WaitStatus
		_, _ = unix.Wait4(child.pid, &ws, 0, nil)
		child.pid = 0
	}()
	if err := child.sock.send(syncMsg{Type: syncMountOp, MountOp: &op}); err != nil {
		return nil, err
	}
	if tree != nil {
		if err := sendFd(child.sock, int(tree.Fd())); err != nil {
			return nil, err
		}
		runtime.KeepAlive(tree)
	}
	var reply *mountReply
	err = child.serve(func(m syncMsg) (bool, error) {
		if m.Type != syncMountDone {
			return false, fmt.Errorf("mount helper: unexpected message %q", m.Type)
		}
		reply = m.MountDone
		if reply == nil {
			reply = &mountReply{}
		}
		return true, nil
	})
	if errors.Is(err, errSyncEOF) {
		return nil, errors.New("the mount helper exited without an answer")
	}
	if err != nil {
		return nil, err
	}
	if after != nil {
		if err := after(child.sock); err != nil {
			return nil, err
		}
	}
	return reply, nil
}

// sendFd passes fd in a 1-byte packet.
func sendFd(sock *syncSocket, fd int) error {
	if err := unix.Sendmsg(int(sock.f.Fd()), []byte{0}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("send descriptor: %w", err)
	}
	return nil
}

// initMountOp is the helper's side: it runs op and exits.
func initMountOp(sock *syncSocket, op *mountOp) error {
	if op == nil {
		return errors.New("mount helper: no operation received")
	}
	var reply mountReply
	tree := -1
	var err error
	switch op.Op {
	case "open-tree":
		var src, f *os.File
		if src, err = reopenLiveSource(op.Source, &unix.Stat_t{Dev: op.Dev, Ino: op.Ino}); err == nil {
			f, err = openLiveTreeFd(int(src.Fd()), op.Source, op.ReadOnly)
			src.Close()
		}
		if err == nil {
			tree = int(f.Fd())
		}
	case "attach":
		var fd int
		if fd, err = recvFd(sock.f); err != nil {
			return fmt.Errorf("receive the mount tree: %w", err)
		}
		reply, err = attachTree(fd, op)
	case "replace":
		var fd int
		if fd, err = recvFd(sock.f); err != nil {
			return fmt.Errorf("receive the mount tree: %w", err)
		}
		reply, err = replaceLive(fd, op)
	case "remount":
		err = remountLive(op)
	case "umount":
		err = umountLive(op)
	default:
		err = fmt.Errorf("mount helper: unknown operation %q", op.Op)
	}
	if err != nil {
		return err
	}
	if err := sock.send(syncMsg{Type: syncMountDone, MountDone: &reply}); err != nil {
		return err
	}
	if tree >= 0 {
		if err := sendFd(sock, tree); err != nil {
			return err
		}
	}
	os.Exit(0)
	return nil
}

// openAt2 is openat2 with O_CLOEXEC.
func openAt2(dirfd int, path string, flags uint64, resolve uint64) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, path, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolve})
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			// EAGAIN: a rename raced with RESOLVE_IN_ROOT; try again.
			continue
		}
		return fd, err
	}
}

const inRoot = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS

// liveTarget is a destination resolved inside the container's root.
type liveTarget struct {
	parent int    // the directory holding it
	base   string // its name there
	path   string // the parent's path, as the kernel sees it from the root
}

func (t *liveTarget) close() { unix.Close(t.parent) }

// resolveParent opens the parent directory of target inside the helper's
// root (the container's, since it joined the mount namespace), making the
// missing directories when create is set.
func resolveParent(target string, create bool) (*liveTarget, error) {
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the container's root: %w", err)
	}
	defer unix.Close(root)
	dir, base := filepath.Split(target)
	dir = filepath.Clean(dir)
	comps := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	if dir == "/" {
		comps = nil
	}
	parent := -1
	for i := 0; i <= len(comps); i++ {
		p := "/" + strings.Join(comps[:i], "/")
		fd, err := openAt2(root, p, unix.O_PATH|unix.O_DIRECTORY, inRoot)
		if errors.Is(err, unix.ENOENT) && create && i > 0 {
			up, uerr := openAt2(root, "/"+strings.Join(comps[:i-1], "/"), unix.O_PATH|unix.O_DIRECTORY, inRoot)
			if uerr != nil {
				return nil, fmt.Errorf("open %s: %w", filepath.Dir(p), uerr)
			}
			merr := unix.Mkdirat(up, comps[i-1], 0o755)
			unix.Close(up)
			switch {
			case errors.Is(merr, unix.EROFS):
				return nil, fmt.Errorf("the directory %s does not exist, and the container's root is read-only: mount onto an existing directory (such as one under /tmp)", p)
			case merr != nil && !errors.Is(merr, unix.EEXIST):
				return nil, fmt.Errorf("create %s: %w", p, merr)
			}
			fd, err = openAt2(root, p, unix.O_PATH|unix.O_DIRECTORY, inRoot)
		}
		if err != nil {
			if parent >= 0 {
				unix.Close(parent)
			}
			return nil, fmt.Errorf("open %s: %w", p, err)
		}
		if parent >= 0 {
			unix.Close(parent)
		}
		parent = fd
	}
	// Where the parent really is, symlinks resolved (inside the root).
	if err := unix.Fchdir(parent); err != nil {
		unix.Close(parent)
		return nil, fmt.Errorf("enter %s: %w", dir, err)
	}
	wd, err := unix.Getwd()
	if err != nil || !strings.HasPrefix(wd, "/") {
		unix.Close(parent)
		return nil, fmt.Errorf("%s resolves outside the container's root", dir)
	}
	return &liveTarget{parent: parent, base: base, path: wd}, nil
}

func (t *liveTarget) fullPath() string { return filepath.Join(t.path, t.base) }

// openLast opens the target itself, which must not be a symlink.
func (t *liveTarget) openLast() (int, error) {
	// O_PATH|O_NOFOLLOW opens a symlink itself, even with
	// RESOLVE_NO_SYMLINKS: it is told apart by its type.
	fd, err := openAt2(t.parent, t.base, unix.O_PATH|unix.O_NOFOLLOW, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_BENEATH)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is a symbolic link: give the path it points to", t.fullPath())
	}
	return fd, nil
}

// attachTree mounts the tree at op.Target (the helper's side of AddMount).
func attachTree(tree int, op *mountOp) (mountReply, error) {
	defer unix.Close(tree)
	t, err := resolveParent(op.Target, true)
	if err != nil {
		return mountReply{}, err
	}
	defer t.close()
	fd, err := t.openLast()
	if errors.Is(err, unix.ENOENT) {
		var cerr error
		if op.Dir {
			cerr = unix.Mkdirat(t.parent, t.base, 0o755)
		} else {
			var f int
			if f, cerr = unix.Openat(t.parent, t.base, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_WRONLY|unix.O_CLOEXEC, 0o644); cerr == nil {
				unix.Close(f)
			}
		}
		switch {
		case errors.Is(cerr, unix.EROFS):
			return mountReply{}, fmt.Errorf("%s does not exist, and the directory it would be in is read-only: mount onto an existing path (such as one under /tmp)", t.fullPath())
		case cerr != nil && !errors.Is(cerr, unix.EEXIST):
			return mountReply{}, fmt.Errorf("create %s: %w", t.fullPath(), cerr)
		}
		fd, err = t.openLast()
	}
	if err != nil {
		return mountReply{}, fmt.Errorf("open %s: %w", t.fullPath(), err)
	}
	defer unix.Close(fd)
	if err := checkLiveDest(t, fd); err != nil {
		return mountReply{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return mountReply{}, fmt.Errorf("stat %s: %w", t.fullPath(), err)
	}
	if isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR; isDir != op.Dir {
		kind := map[bool]string{true: "a directory", false: "a file"}
		return mountReply{}, fmt.Errorf("%s is %s, the source %s", t.fullPath(), kind[isDir], kind[op.Dir])
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return mountReply{}, fmt.Errorf("move_mount onto %s: %w", t.fullPath(), err)
	}
	id, err := mountID(tree, "")
	if err != nil {
		return mountReply{}, err
	}
	return mountReply{MountID: id, Target: t.fullPath()}, nil
}

// checkLiveDest refuses a destination in or on procfs or sysfs (as
// create refuses such mounts: see checkProcDest): a mount there could
// cover what the container's masked and read-only paths hide, or what
// the runtime writes through /proc. fd is the destination, open; the
// parent's filesystem counts too (a symlink may have led the path there).
func checkLiveDest(t *liveTarget, fd int) error {
	for _, f := range []int{t.parent, fd} {
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(f, &sfs); err != nil {
			return fmt.Errorf("statfs %s: %w", t.fullPath(), err)
		}
		if sfs.Type == unix.PROC_SUPER_MAGIC || sfs.Type == unix.SYSFS_MAGIC {
			return fmt.Errorf("%s is in /proc or /sys (or a symlink leads there): a mount there could undo the container's masked and read-only paths; mount somewhere else", t.fullPath())
		}
	}
	return nil
}

// mountID is the id of the mount at dirfd/path (the empty path: dirfd).
func mountID(dirfd int, path string) (uint64, error) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if path == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var stx unix.Statx_t
	if err := unix.Statx(dirfd, path, flags, unix.STATX_MNT_ID_UNIQUE, &stx); err == nil && stx.Mask&unix.STATX_MNT_ID_UNIQUE != 0 {
		return stx.Mnt_id, nil
	}
	// Before Linux 6.8: the (reusable) mount id.
	if err := unix.Statx(dirfd, path, flags, unix.STATX_MNT_ID, &stx); err != nil {
		return 0, fmt.Errorf("statx: %w", err)
	}
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, errors.New("statx: this kernel gives no mount ids (Linux 5.8 or later is needed)")
	}
	return stx.Mnt_id, nil
}

// openAdded opens the mount added at op.Target, checking that it is still
// the one (op.MountID): the container may have mounted over it, or removed
// it.
func openAdded(op *mountOp) (*liveTarget, int, error) {
	t, err := resolveParent(op.Target, false)
	if err != nil {
		return nil, -1, err
	}
	fd, err := t.openLast()
	if err != nil {
		t.close()
		return nil, -1, fmt.Errorf("open %s: %w", op.Target, err)
	}
	id, err := mountID(fd, "")
	if err == nil && (id != op.MountID || t.fullPath() != op.Target) {
		err = fmt.Errorf("the mount at %s is no longer the one nanobox-runc added (the container mounted over it, moved it, or removed it)", op.Target)
	}
	if err != nil {
		unix.Close(fd)
		t.close()
		return nil, -1, err
	}
	return t, fd, nil
}

func remountLive(op *mountOp) error {
	t, fd, err := openAdded(op)
	if err != nil {
		return err
	}
	defer t.close()
	defer unix.Close(fd)
	attr := unix.MountAttr{}
	if op.ReadOnly {
		attr.Attr_set = unix.MOUNT_ATTR_RDONLY
	} else {
		attr.Attr_clr = unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		if errors.Is(err, unix.EPERM) && !op.ReadOnly {
			return fmt.Errorf("mount_setattr: %w: part of the mount is read-only where it comes from, and stays so", err)
		}
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return nil
}

// moveMountBeneath is MOVE_MOUNT_BENEATH (Linux 6.5, <linux/mount.h>).
const moveMountBeneath = 0x200

// replaceLive puts tree in the place of the mount added at op.Target
// (op.MountID): beneath it (MOVE_MOUNT_BENEATH), and then the old one is
// unmounted, so that the target is never empty and a failure leaves the
// old mount as it was. A kernel without MOVE_MOUNT_BENEATH (EINVAL)
// unmounts the old one first.
func replaceLive(tree int, op *mountOp) (mountReply, error) {
	t, fd, err := openAdded(op)
	if err != nil {
		unix.Close(tree)
		return mountReply{}, err
	}
	err = unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH|moveMountBeneath)
	unix.Close(fd)
	t.close()
	if errors.Is(err, unix.EINVAL) {
		if err := umountLive(op); err != nil {
			unix.Close(tree)
			return mountReply{}, err
		}
		return attachTree(tree, op)
	}
	defer unix.Close(tree)
	if err != nil {
		return mountReply{}, fmt.Errorf("move_mount beneath %s: %w", op.Target, err)
	}
	id, err := mountID(tree, "")
	if err != nil {
		return mountReply{}, err
	}
	if err := umountLive(op); err != nil {
		return mountReply{}, err
	}
	return mountReply{MountID: id, Target: op.Target}, nil
}

func umountLive(op *mountOp) error {
	t, fd, err := openAdded(op)
	if err != nil {
		return err
	}
	defer t.close()
	unix.Close(fd)
	// One name in a directory that is open and entered: nothing in the
	// path can be swapped any more.
	if id, err := mountID(unix.AT_FDCWD, t.base); err != nil || id != op.MountID {
		return fmt.Errorf("the mount at %s is no longer the one nanobox-runc added", op.Target)
	}
	if err := unix.Unmount(t.base, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
		return fmt.Errorf("umount: %w", err)
	}
	return nil
}

// MountHandle is a mount added to a running persistent sandbox.
type MountHandle struct {
	ctr *Container
	m   LiveMount
}

// Mount adds b to the running persistent sandbox (see Container.AddMount):
// b.Source, a host path, at b.Target inside it, read-only when b.ReadOnly
// is set or the source is on a read-only mount; always nosuid and nodev. A
// missing target is created (a directory, or an empty file for a file),
// inside the sandbox's writable mounts only: its root is read-only.
func (s *Sandbox) Mount(b Bind) (*MountHandle, error) {
	ses, err := s.session()
	if err != nil {
		return nil, fmt.Errorf("mount: %w", err)
	}
	m, err := ses.in.ctr.AddMount(b)
	if err != nil {
		return nil, err
	}
	return &MountHandle{ctr: ses.in.ctr, m: *m}, nil
}

// Mounts lists the mounts added to the running persistent sandbox.
func (s *Sandbox) Mounts() ([]LiveMount, error) {
	ses, err := s.session()
	if err != nil {
		return nil, fmt.Errorf("mounts: %w", err)
	}
	return ses.in.ctr.Mounts()
}

// Target is where the mount is, inside the sandbox.
func (h *MountHandle) Target() string { return h.m.Target }

// Info is the mount as added.
func (h *MountHandle) Info() LiveMount { return h.m }

// Remount makes the mount read-only or writable; a mount whose source is
// on a read-only mount cannot be made writable.
func (h *MountHandle) Remount(readOnly bool) error {
	if err := h.ctr.RemountMount(h.m.Target, readOnly); err != nil {
		return err
	}
	h.m.ReadOnly = readOnly
	return nil
}

// Unmount removes the mount (lazily: a program that has a file open in it
// keeps it until it closes the file).
func (h *MountHandle) Unmount() error { return h.ctr.RemoveMount(h.m.Target) }
