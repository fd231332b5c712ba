package libbox

// Mount sources the runtime opens for init. A bind source is a host path,
// which init resolves in the container's new mount namespace (a copy of the
// runtime's) with its own credentials: in a user namespace those are the
// mapped root's, which may not traverse to a source under a 0700 directory
// that the runtime itself reaches. So the runtime clones each such source
// as a detached mount tree (open_tree(OPEN_TREE_CLONE), its own
// credentials, its own mount namespace) and hands the tree to init, which
// attaches it with move_mount instead of binding the path (runc opens its
// mount sources on init's behalf too).
//
// Only sources outside the rootfs are cloned: one inside it may lie under
// an earlier mount of the same config (a tmpfs, another bind), and must be
// resolved after that mount, in init, in order. A rootless runtime cannot
// clone trees of its own mount namespace (it has no CAP_SYS_ADMIN there),
// and its container's mapped root is the runtime's own user anyway.
//
// An idmapped mount is such a tree too, with MOUNT_ATTR_IDMAP set on it by
// the runtime before init gets it: the attribute can only be set on a
// detached mount, by a process with CAP_SYS_ADMIN over the mount's own
// user namespace (the host's). Its user namespace is the container's when
// the mount names no mappings of its own (or the container's), else one
// made for the purpose (newUserNS).
//
// An idmapped mount whose source lies inside the rootfs is the exception:
// that source may be made by an earlier mount of the config (runc's suite:
// mounts.bats "mount order, container idmap source"), so its tree is made
// when init reaches it (initConfig.LateSources): init asks, and the
// runtime clones the source as init's mount namespace has it then, on a
// thread that joins that namespace, resolving the path inside the rootfs.
//
// The trees cross the sync socket right after the config, in one packet
// (SCM_RIGHTS), in the order of initConfig.MountSources; a late one, in a
// packet of its own, after the parent's mount-source reply.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// mountSources are the trees opened for init, by index in Config.Mounts.
type mountSources struct {
	index []int
	files []*os.File
	// late are the mounts whose trees are made when init asks
	// (lateMountSource).
	late []int
}

func (s *mountSources) close() {
	for _, f := range s.files {
		f.Close()
	}
}

// needsSourceTree reports whether mount m of cfg gets a tree from the
// runtime (see the top of the file).
func needsSourceTree(cfg *Config, m *Mount, rootless bool) bool {
	if m.IDMap != nil {
		return true
	}
	if rootless || !m.IsBind() {
		return false
	}
	if _, userns := cfg.NamespaceOf(NEWUSER); !userns || !cfg.hasMountNS() {
		return false
	}
	_, inside := insideRootfs(cfg, m.Source)
	return !inside && filepath.Clean(m.Source) != filepath.Clean(cfg.Rootfs)
}

// insideRootfs reports whether src lies below cfg.Rootfs (lexically), and
// its path relative to it.
func insideRootfs(cfg *Config, src string) (string, bool) {
	return strings.CutPrefix(filepath.Clean(src), filepath.Clean(cfg.Rootfs)+"/")
}

// openMountSources clones the trees init needs, with the runtime's
// credentials; initPid is init, whose user namespace an idmapped mount
// without mappings of its own uses.
//
// A plain bind source is cloned as init's mount namespace has it (joined
// on a thread of its own), not as the runtime's does: that namespace was
// copied into the container's user namespace, so the kernel locked the
// flags of every mount in it (MNT_LOCK_READONLY, _NOSUID, _NODEV, _NOEXEC,
// _ATIME, and submounts to their parents), and a clone keeps the locks. A
// clone of the runtime's own mount would carry none, and the container's
// root, which has CAP_SYS_ADMIN over its own mount namespace, could then
// remount a bind of a read-only or nodev host mount read-write or with
// devices, or bind it without its submounts and see what they cover. An
// idmapped tree is cloned in the runtime's namespace: MOUNT_ATTR_IDMAP is
// set only on a tree the host's user namespace owns.
func openMountSources(cfg *Config, rootless bool, initPid int) (_ *mountSources, retErr error) {
	s := &mountSources{}
	defer func() {
		if retErr != nil {
			s.close()
		}
	}()
	var inInit []int
	for i := range cfg.Mounts {
		m := &cfg.Mounts[i]
		if !needsSourceTree(cfg, m, rootless) {
			continue
		}
		if err := checkIDMap(cfg, m, rootless); err != nil {
			return nil, fmt.Errorf("mounts[%d] (destination %s): %w", i, m.Destination, err)
		}
		if m.IDMap == nil {
			inInit = append(inInit, i)
			continue
		}
		if _, inside := insideRootfs(cfg, m.Source); inside {
			s.late = append(s.late, i)
			continue
		}
		tree, err := cloneTree(m.Source, m.Flags&unix.MS_REC != 0)
		if err != nil {
			return nil, fmt.Errorf("mounts[%d]: open bind source %s: %w", i, m.Source, err)
		}
		s.index = append(s.index, i)
		s.files = append(s.files, tree)
		if err := idmapTree(tree, cfg, m.IDMap, initPid); err != nil {
			return nil, fmt.Errorf("mounts[%d]: idmap %s: %w", i, m.Source, err)
		}
	}
	if len(inInit) == 0 {
		return s, nil
	}
	err := inMountNS(initPid, func() error {
		for _, i := range inInit {
			m := &cfg.Mounts[i]
			tree, err := cloneTree(m.Source, m.Flags&unix.MS_REC != 0)
			if err != nil {
				if errors.Is(err, unix.EINVAL) && m.Flags&unix.MS_REC == 0 {
					err = fmt.Errorf("%w: in a user namespace a non-recursive bind of a directory with mounts below it is refused, as they would uncover what they hide: use \"rbind\"", err)
				}
				return fmt.Errorf("mounts[%d]: open bind source %s: %w", i, m.Source, err)
			}
			s.index = append(s.index, i)
			s.files = append(s.files, tree)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// cloneTree clones the mount tree at path, with its submounts when
// recursive, as a detached mount.
func cloneTree(path string, recursive bool) (*os.File, error) {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, flags)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "mount source "+path), nil
}

// lateMountSource is the tree of mount i, an idmapped mount of a source
// inside the rootfs, made now that init, which asked for it, has made the
// mounts before it.
func lateMountSource(cfg *Config, late []int, i *int, initPid int) (*os.File, error) {
	if i == nil || !slices.Contains(late, *i) {
		return nil, errors.New("sync: init asked for a mount source the runtime did not defer")
	}
	m := &cfg.Mounts[*i]
	rel, _ := insideRootfs(cfg, m.Source)
	tree, err := openTreeInRootfs(initPid, filepath.Clean(cfg.Rootfs), rel, m.Flags&unix.MS_REC != 0)
	if err != nil {
		return nil, fmt.Errorf("mounts[%d]: open bind source %s: %w", *i, m.Source, err)
	}
	if err := idmapTree(tree, cfg, m.IDMap, initPid); err != nil {
		tree.Close()
		return nil, fmt.Errorf("mounts[%d]: idmap %s: %w", *i, m.Source, err)
	}
	return tree, nil
}

// openTreeInRootfs clones the tree at rel under rootfs as the mount
// namespace of process pid has it. rel is resolved inside the rootfs
// (RESOLVE_IN_ROOT): a symlink among the container's files cannot lead
// the runtime, root on the host, out of it.
func openTreeInRootfs(pid int, rootfs, rel string, recursive bool) (tree *os.File, err error) {
	err = inMountNS(pid, func() error {
		root, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open rootfs %s: %w", rootfs, err)
		}
		defer unix.Close(root)
		fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return err
		}
		src := os.NewFile(uintptr(fd), rel)
		defer src.Close()
		var flags uint
		if recursive {
			flags = unix.AT_RECURSIVE
		}
		tree, err = openTree(src, flags)
		return err
	})
	return tree, err
}

// inMountNS runs fn in the mount namespace of process pid, on a throwaway
// thread that joins it, and returns fn's error.
func inMountNS(pid int, fn func() error) error {
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err != nil {
		return fmt.Errorf("open init's mount namespace: %w", err)
	}
	defer ns.Close()
	return onOwnThread(func() error {
		// setns(CLONE_NEWNS) refuses a thread that shares its
		// filesystem context (root, cwd) with the others.
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("unshare CLONE_FS: %w", err)
		}
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("join init's mount namespace: %w", err)
		}
		return fn()
	})
}

// mountTrees are init's side of the mount sources: the trees received
// with the config, by index in Config.Mounts, and the late ones, asked
// for over sock when their mount is made.
type mountTrees struct {
	files map[int]*os.File
	late  []int
	sock  *syncSocket
}

// get returns the tree of mount i, nil for a mount without one.
func (t *mountTrees) get(i int) (*os.File, error) {
	if t == nil {
		return nil, nil
	}
	if f := t.files[i]; f != nil || !slices.Contains(t.late, i) {
		return f, nil
	}
	if err := t.sock.send(syncMsg{Type: syncMountSource, Source: &i}); err != nil {
		return nil, err
	}
	if _, err := t.sock.expect(syncMountSource); err != nil {
		return nil, err
	}
	got, err := recvMountSources(t.sock, []int{i})
	if err != nil {
		return nil, err
	}
	if t.files == nil {
		t.files = map[int]*os.File{}
	}
	t.files[i] = got[i]
	return got[i], nil
}

func (t *mountTrees) close() {
	if t == nil {
		return
	}
	for _, f := range t.files {
		f.Close()
	}
}

// checkIDMap refuses what the kernel would, with the reason.
func checkIDMap(cfg *Config, m *Mount, rootless bool) error {
	im := m.IDMap
	if im == nil {
		return nil
	}
	switch {
	case !m.IsBind():
		return errors.New("idmapped mounts are bind mounts only: add \"bind\" or \"rbind\" to the options")
	case rootless:
		return errors.New("an idmapped mount of a host directory needs root on the host (MOUNT_ATTR_IDMAP)")
	case len(im.UIDMappings) == 0 != (len(im.GIDMappings) == 0):
		return errors.New("an idmapped mount needs both uidMappings and gidMappings, or neither")
	}
	if len(im.UIDMappings) == 0 {
		if _, ok := cfg.NamespaceOf(NEWUSER); !ok {
			return errors.New("an idmapped mount without uidMappings and gidMappings takes the container's user namespace, and it has none: add {\"type\": \"user\"} to linux.namespaces, or give the mount its own mappings")
		}
	}
	return nil
}

// idmapTree makes the detached tree an idmapped mount.
func idmapTree(tree *os.File, cfg *Config, im *MountIDMap, initPid int) error {
	var userns *os.File
	var err error
	if len(im.UIDMappings) == 0 || (sameMaps(im.UIDMappings, cfg.UIDMappings) && sameMaps(im.GIDMappings, cfg.GIDMappings)) {
		userns, err = os.Open(fmt.Sprintf("/proc/%d/ns/user", initPid))
	} else {
		userns, err = newUserNS(im.UIDMappings, im.GIDMappings)
	}
	if err != nil {
		return err
	}
	defer userns.Close()
	var flags uint = unix.AT_EMPTY_PATH
	if im.Recursive {
		flags |= unix.AT_RECURSIVE
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns.Fd())}
	err = unix.MountSetattr(int(tree.Fd()), "", flags, &attr)
	runtime.KeepAlive(tree)
	runtime.KeepAlive(userns)
	if err != nil {
		err = fmt.Errorf("mount_setattr MOUNT_ATTR_IDMAP: %w", err)
		if errors.Is(err, unix.EINVAL) {
			err = fmt.Errorf("%w: the source's filesystem may not support idmapped mounts", err)
		}
		return err
	}
	return nil
}

func sameMaps(a, b []IDMap) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// errUserNSOpen ends newUserNS's stage once its namespace is open.
var errUserNSOpen = errors.New("user namespace open")

// newUserNS returns a new user namespace with the mappings uid and gid:
// the runtime's nsenter stage makes it and waits for the maps, which are
// written; its namespace is opened, and the stage killed.
func newUserNS(uid, gid []IDMap) (*os.File, error) {
	maps := &Config{UIDMappings: uid, GIDMappings: gid}
	exe, err := sealedSelfExe(maps)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	sp := newSpawnSpec(nil, nil, nil, nil)
	sp.exe = exe
	sp.clone = unix.CLONE_NEWUSER
	var ns *os.File
	sp.usermap = func(stagePid int) error {
		if err := writeIDMaps(stagePid, maps, false); err != nil {
			return err
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", stagePid))
		if err != nil {
			return err
		}
		ns = f
		return errUserNSOpen
	}
	_, err = sp.start()
	if errors.Is(err, errUserNSOpen) {
		return ns, nil
	}
	if err == nil {
		err = errors.New("the stage did not ask for its user map")
	}
	return nil, fmt.Errorf("make a user namespace for the mount's mappings: %w", err)
}

// sendMountSources passes the trees to init, after the config.
func sendMountSources(sock *syncSocket, s *mountSources) error {
	if len(s.files) == 0 {
		return nil
	}
	fds := make([]int, len(s.files))
	for i, f := range s.files {
		fds[i] = int(f.Fd())
	}
	err := unix.Sendmsg(int(sock.f.Fd()), []byte{0}, unix.UnixRights(fds...), nil, 0)
	runtime.KeepAlive(s.files)
	if err != nil {
		return fmt.Errorf("send mount sources to init: %w", err)
	}
	return nil
}

// recvMountSources receives the trees for the mounts at index, in init.
func recvMountSources(sock *syncSocket, index []int) (map[int]*os.File, error) {
	if len(index) == 0 {
		return nil, nil
	}
	oob := make([]byte, unix.CmsgSpace(4*len(index)))
	buf := make([]byte, 1)
	var oobn int
	for {
		var err error
		_, oobn, _, _, err = unix.Recvmsg(int(sock.f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("receive mount sources: %w", err)
		}
		break
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("receive mount sources: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	if len(fds) != len(index) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("receive mount sources: got %d, want %d", len(fds), len(index))
	}
	out := make(map[int]*os.File, len(fds))
	for i, fd := range fds {
		out[index[i]] = os.NewFile(uintptr(fd), "mount source")
	}
	return out, nil
}
