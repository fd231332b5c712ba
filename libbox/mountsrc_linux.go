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
// namespace and with its credentials.
func openMountSources(cfg *Config, rootless bool) (_ *mountSources, retErr error) {
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
		var flags uint
		if m.Flags&unix.MS_REC != 0 {
			flags |= unix.AT_RECURSIVE
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, m.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|flags)
		if err != nil {
			return nil, fmt.Errorf("mounts[%d]: open bind source %s: %w", i, m.Source, err)
		}
		s.index = append(s.index, i)
		s.files = append(s.files, os.NewFile(uintptr(fd), "mount source "+m.Source))
	}
	return s, nil
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
