package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// stdioPipes is the stdio of a foreground container or exec'd process
// without a terminal: pipes that this process copies to and from its own
// stdio, as runc's setupProcessPipes makes them, never this process's own
// descriptors. With its caller's descriptors, the process could reopen
// them through /proc/self/fd (a log file the caller appends to, opened
// for reading), and /dev/stdout would not open on a socket (systemd's
// journal). The pipes belong to the container's root, so that its
// processes can reopen /dev/stdout as they can in runc.
type stdioPipes struct {
	// child are the process's ends: stdin's read end, stdout's and
	// stderr's write ends.
	child [3]*os.File
	// parent are this process's ends, in the same order.
	parent [3]*os.File
	wg     sync.WaitGroup
}

// newStdioPipes makes the pipes, owned by the host ids of the container's
// root (cfg's mappings; the caller's without a user namespace of the
// container's own). Where this process's stdout and stderr are the same
// file (2>&1, one terminal, one socket), the process's stdout and stderr
// are one pipe too, so that what it writes to them keeps its order.
func newStdioPipes(cfg *libbox.Config) (*stdioPipes, error) {
	s := &stdioPipes{}
	for i := range 3 {
		if i == 2 && sameFile(os.Stdout, os.Stderr) {
			s.child[2] = s.child[1]
			break
		}
		r, w, err := os.Pipe()
		if err != nil {
			s.closeAll()
			return nil, fmt.Errorf("stdio pipe: %w", err)
		}
		if i == 0 {
			s.child[i], s.parent[i] = r, w
		} else {
			s.child[i], s.parent[i] = w, r
		}
	}
	uid, gid := hostRoot(cfg.UIDMappings), hostRoot(cfg.GIDMappings)
	if uid >= 0 || gid >= 0 {
		for _, f := range s.child {
			// An unprivileged caller cannot give them away: its own
			// ids are the container root's then, or the process keeps
			// what it had before (it cannot reopen them).
			if err := f.Chown(uid, gid); err != nil && !errors.Is(err, unix.EPERM) {
				s.closeAll()
				return nil, fmt.Errorf("stdio pipe: chown to the container's root %d:%d: %w", uid, gid, err)
			}
		}
	}
	return s, nil
}

// sameFile: a and b are open on the same file (device and inode).
func sameFile(a, b *os.File) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(int(a.Fd()), &sa) != nil || unix.Fstat(int(b.Fd()), &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// hostRoot is the host id that container id 0 maps to, -1 without one.
func hostRoot(m []libbox.IDMap) int {
	for _, e := range m {
		if e.ContainerID == 0 && e.Size > 0 {
			return int(e.HostID)
		}
	}
	return -1
}

// start closes the process's ends (it has its own copies now) and copies
// this process's stdin into the process's, and the process's stdout and
// stderr out to this process's.
func (s *stdioPipes) start() {
	for i, f := range s.child {
		_ = f.Close()
		s.child[i] = nil
	}
	go func() {
		// Ends with this process's stdin; the process then reads EOF.
		// A stdin that never ends leaves this goroutine behind, as in
		// runc: nothing waits for it.
		_, _ = io.Copy(s.parent[0], os.Stdin)
		_ = s.parent[0].Close()
	}()
	s.wg.Add(1)
	go s.copyOut(os.Stdout, s.parent[1])
	if s.parent[2] != nil {
		s.wg.Add(1)
		go s.copyOut(os.Stderr, s.parent[2])
	}
}

func (s *stdioPipes) copyOut(w io.Writer, r *os.File) {
	defer s.wg.Done()
	_, _ = io.Copy(w, r)
	_ = r.Close()
}

// wait returns once the process's stdout and stderr have ended: when
// every process holding them (the container's, or an exec'd process and
// its children) has closed them.
func (s *stdioPipes) wait() {
	s.wg.Wait()
}

// closeAll closes every end still open, after a failure before start.
func (s *stdioPipes) closeAll() {
	for _, f := range append(s.child[:], s.parent[:]...) {
		if f != nil {
			_ = f.Close()
		}
	}
}
