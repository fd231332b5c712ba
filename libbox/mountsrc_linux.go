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
// The trees cross the sync socket right after the config, in one packet
// (SCM_RIGHTS), in the order of initConfig.MountSources.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// mountSources are the trees opened for init, by index in Config.Mounts.
type mountSources struct {
	index []int
	files []*os.File
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
	rootfs := filepath.Clean(cfg.Rootfs)
	src := filepath.Clean(m.Source)
	return src != rootfs && !strings.HasPrefix(src, rootfs+"/")
}

// openMountSources clones the trees init needs, in the runtime's mount
// namespace and with its credentials; initPid is init, whose user
// namespace an idmapped mount without mappings of its own uses.
func openMountSources(cfg *Config, rootless bool, initPid int) (_ *mountSources, retErr error) {
	s := &mountSources{}
	defer func() {
		if retErr != nil {
			s.close()
		}
	}()
	for i := range cfg.Mounts {
		m := &cfg.Mounts[i]
		if !needsSourceTree(cfg, m, rootless) {
			continue
		}
		if err := checkIDMap(cfg, m, rootless); err != nil {
			return nil, fmt.Errorf("mounts[%d] (destination %s): %w", i, m.Destination, err)
		}
		var flags uint
		if m.Flags&unix.MS_REC != 0 {
			flags |= unix.AT_RECURSIVE
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, m.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|flags)
		if err != nil {
			return nil, fmt.Errorf("mounts[%d]: open bind source %s: %w", i, m.Source, err)
		}
		tree := os.NewFile(uintptr(fd), "mount source "+m.Source)
		s.index = append(s.index, i)
		s.files = append(s.files, tree)
		if m.IDMap != nil {
			if err := idmapTree(tree, cfg, m.IDMap, initPid); err != nil {
				return nil, fmt.Errorf("mounts[%d]: idmap %s: %w", i, m.Source, err)
			}
		}
	}
	return s, nil
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
