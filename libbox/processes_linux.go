package libbox

// The processes of a container, for kill --all, delete and ps. How they are
// found depends on what the container has:
//
//   - a cgroup: every process in it (and below). A SIGKILL goes through
//     cgroup.kill, or with the cgroup frozen, so none escapes by forking.
//   - no cgroup, but a pid namespace of its own (init made it): the
//     processes in that namespace. init is its pid 1: once init dies the
//     kernel kills the rest, exec'd processes included (they joined it).
//   - neither (rootless on a cgroup v1 host, or without a cgroup, sharing
//     the host's pid namespace or joining another one): nothing in the
//     kernel tells the container's processes from the host's. They are
//     init, every process exec started (Exec records each, by pid and start
//     time, in the state directory's execs/ before the program runs), and
//     the descendants of these, found through the parent links in /proc.
//     A descendant whose parent has exited was reparented (to a subreaper
//     or the host's init) and cannot be found. For a SIGKILL every process
//     found is first stopped (SIGSTOP), and the tree read again until it no
//     longer grows: a stopped process cannot fork, so none escapes between
//     reading the tree and the kill.
//
// Every process is held by a pidfd once found, and its identity (start time,
// or pid namespace) checked after the pidfd pinned it: a recycled pid is
// never signalled.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// execsDir holds one empty file per process exec started in a container
// whose processes cannot be found otherwise, named "PID.STARTTIME".
const execsDir = "execs"

// killWait bounds how long delete waits for SIGKILLed processes to go.
const killWait = 30 * time.Second

// member is one process of the container, pinned by a pidfd.
type member struct {
	pid int
	fd  int
}

type members []member

func (ms members) close() {
	for _, m := range ms {
		unix.Close(m.fd)
	}
}

func (ms members) pids() []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.pid
	}
	return out
}

func (ms members) has(pid int) bool {
	for _, m := range ms {
		if m.pid == pid {
			return true
		}
	}
	return false
}

// signal sends sig to every member; those that exited meanwhile are skipped.
func (ms members) signal(sig unix.Signal) {
	for _, m := range ms {
		_ = unix.PidfdSendSignal(m.fd, sig, nil, 0)
	}
}

// wait returns once every member has exited (a zombie has).
func (ms members) wait(deadline time.Time) error {
	left := make([]unix.PollFd, 0, len(ms))
	for _, m := range ms {
		left = append(left, unix.PollFd{Fd: int32(m.fd), Events: unix.POLLIN})
	}
	for len(left) > 0 {
		timeout := time.Until(deadline)
		if timeout <= 0 {
			var pids []string
			for _, p := range left {
				for _, m := range ms {
					if int32(m.fd) == p.Fd {
						pids = append(pids, strconv.Itoa(m.pid))
					}
				}
			}
			return fmt.Errorf("process(es) %s still there %s after SIGKILL", strings.Join(pids, ", "), killWait)
		}
		if _, err := unix.Poll(left, int(timeout.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("wait for the processes to exit: %w", err)
		}
		next := left[:0]
		for _, p := range left {
			if p.Revents == 0 {
				next = append(next, p)
			}
		}
		left = next
	}
	return nil
}

// pin opens a pidfd for pid and keeps it if check (run once the pidfd
// pins the process) says it is the one wanted.
func pin(pid int, check func(pid int) bool) (member, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return member{}, false
	}
	if check != nil && !check(pid) {
		unix.Close(fd)
		return member{}, false
	}
	return member{pid: pid, fd: fd}, true
}

// ownPidNS reports whether init made the container's pid namespace.
func (c *Container) ownPidNS() bool {
	ns, ok := c.headConfig().NamespaceOf(NEWPID)
	return ok && ns.Path == ""
}

// tracksExecs reports whether the container's processes are found from
// recorded exec'd processes (see the top of this file).
func (c *Container) tracksExecs(cg *cgroupHandle) bool {
	return cg == nil && !c.ownPidNS()
}

// isInit reports whether pid is still this container's init.
func (c *Container) isInit(pid int) bool {
	ps, err := readProcStat(pid)
	return err == nil && pid == c.st.InitPid && ps.StartTime == c.st.InitStartTime
}

// members finds the container's processes (see the top of this file) and
// pins them. With stop, the processes of a container without cgroup or
// pid namespace are stopped as they are found (for a SIGKILL to follow).
func (c *Container) members(cg *cgroupHandle, stop bool) (members, error) {
	switch {
	case cg != nil:
		pids, err := cg.pids()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("container %s: list processes: %w", c.st.ID, err)
		}
		var ms members
		for _, pid := range pids {
			if m, ok := pin(pid, nil); ok {
				ms = append(ms, m)
			}
		}
		return ms, nil
	case c.ownPidNS():
		initFd, ok := pin(c.st.InitPid, c.isInit)
		if !ok {
			return nil, nil // init is gone, and the namespace with it
		}
		ns, err := pidNSOf(c.st.InitPid)
		if err != nil {
			unix.Close(initFd.fd)
			return nil, nil
		}
		ms := members{initFd}
		pids, err := allPids()
		if err != nil {
			ms.close()
			return nil, err
		}
		inNS := func(pid int) bool { other, err := pidNSOf(pid); return err == nil && other == ns }
		for _, pid := range pids {
			// Checked before and, once pinned, again after pidfd_open.
			if pid == c.st.InitPid || !inNS(pid) {
				continue
			}
			if m, ok := pin(pid, inNS); ok {
				ms = append(ms, m)
			}
		}
		return ms, nil
	}
	return c.processTree(stop)
}

// processTree is init, the recorded exec'd processes and their descendants.
func (c *Container) processTree(stop bool) (members, error) {
	var ms members
	if m, ok := pin(c.st.InitPid, c.isInit); ok {
		ms = append(ms, m)
	}
	for _, e := range c.execRecords() {
		if m, ok := pin(e.pid, func(pid int) bool {
			ps, err := readProcStat(pid)
			return err == nil && ps.StartTime == e.startTime
		}); ok && !ms.has(m.pid) {
			ms = append(ms, m)
		}
	}
	if stop {
		ms.signal(unix.SIGSTOP)
	}
	// Add children until a pass finds none: each one is pinned, and its
	// parent checked again once it is, so that a pid recycled between the
	// scan of /proc and the pidfd_open is not taken for a child.
	for {
		parents, err := allParents()
		if err != nil {
			ms.close()
			return nil, err
		}
		grew := false
		for pid, ppid := range parents {
			if ms.has(pid) || !ms.has(ppid) {
				continue
			}
			m, ok := pin(pid, func(pid int) bool {
				ps, err := readProcStat(pid)
				return err == nil && ps.Ppid == ppid
			})
			if !ok {
				continue
			}
			if stop {
				_ = unix.PidfdSendSignal(m.fd, unix.SIGSTOP, nil, 0)
			}
			ms = append(ms, m)
			grew = true
		}
		if !grew {
			return ms, nil
		}
	}
}

// pidNSOf identifies pid's pid namespace.
func pidNSOf(pid int) ([2]uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/pid", pid), &st); err != nil {
		return [2]uint64{}, err
	}
	return [2]uint64{st.Dev, st.Ino}, nil
}

// allPids lists the processes in /proc.
func allPids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// allParents maps every process to its parent.
func allParents() (map[int]int, error) {
	pids, err := allPids()
	if err != nil {
		return nil, err
	}
	out := make(map[int]int, len(pids))
	for _, pid := range pids {
		if ps, err := readProcStat(pid); err == nil {
			out[pid] = ps.Ppid
		}
	}
	return out, nil
}

type execRecord struct {
	pid       int
	startTime uint64
}

// execRecords reads execs/, dropping the records of processes that exited.
func (c *Container) execRecords() []execRecord {
	dir := filepath.Join(c.dir, execsDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []execRecord
	for _, e := range ents {
		p, s, ok := strings.Cut(e.Name(), ".")
		pid, err1 := strconv.Atoi(p)
		start, err2 := strconv.ParseUint(s, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		if ps, err := readProcStat(pid); err != nil || ps.StartTime != start {
			_ = os.Remove(filepath.Join(dir, e.Name()))
			continue
		}
		out = append(out, execRecord{pid: pid, startTime: start})
	}
	return out
}

// recordExec notes a process exec started, before it runs the program.
func (c *Container) recordExec(pid int, startTime uint64) error {
	dir := filepath.Join(c.dir, execsDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("record exec'd process: %w", err)
	}
	c.execRecords() // prunes the records of processes gone
	name := filepath.Join(dir, strconv.Itoa(pid)+"."+strconv.FormatUint(startTime, 10))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("record exec'd process: %w", err)
	}
	return f.Close()
}

// signalAll sends sig to every process of a container without a cgroup
// but init, which the caller signals.
func (c *Container) signalAll(sig unix.Signal) error {
	ms, err := c.members(nil, sig == unix.SIGKILL)
	if err != nil {
		return fmt.Errorf("kill --all: %w", err)
	}
	defer ms.close()
	for _, m := range ms {
		if m.pid != c.st.InitPid {
			_ = unix.PidfdSendSignal(m.fd, sig, nil, 0)
		}
	}
	return nil
}

// killAndWait SIGKILLs every process of the container and returns once
// they are all gone (init may be another process's child: it is waited for
// through its pidfd, and reaped only when it is ours).
func (c *Container) killAndWait() error {
	deadline := time.Now().Add(killWait)
	cg := c.cgroup()
	if cg != nil && !cg.anyExists() {
		cg = nil
	}
	seen := map[int]bool{}
	for {
		ms, err := c.members(cg, true)
		if err != nil {
			return err
		}
		if m, ok := pin(c.st.InitPid, c.isInit); ok {
			if ms.has(m.pid) {
				unix.Close(m.fd)
			} else {
				ms = append(ms, m)
			}
		}
		fresh := false
		for _, pid := range ms.pids() {
			if !seen[pid] {
				seen[pid], fresh = true, true
			}
		}
		if !fresh {
			// Nothing, or only processes already waited for (zombies
			// a cgroup may still list).
			ms.close()
			return nil
		}
		if cg != nil {
			// Thaws a paused container too, so the kill takes effect.
			_ = cg.signal(unix.SIGKILL)
		}
		ms.signal(unix.SIGKILL)
		err = ms.wait(deadline)
		ms.close()
		// Our own child (run): reap it so no zombie stays behind.
		_, _ = unix.Wait4(c.st.InitPid, nil, unix.WNOHANG, nil)
		if err != nil {
			return fmt.Errorf("kill container %s: %w", c.st.ID, err)
		}
		if cg == nil {
			return nil
		}
		// The cgroup may have gained a process forked between the listing
		// and the kill (without cgroup.kill or a freezer): list it again.
	}
}

// Processes returns the host pids of the container's processes (see the
// top of this file).
func (c *Container) Processes() ([]int, error) {
	cg := c.cgroup()
	if cg == nil && c.Status() == Stopped && !c.tracksExecs(nil) {
		return nil, nil
	}
	ms, err := c.members(cg, false)
	if err != nil {
		return nil, err
	}
	defer ms.close()
	if len(ms) == 0 && cg == nil && c.ownPidNS() && c.isInit(c.st.InitPid) {
		// A created container's init is not dumpable yet, so its
		// namespace cannot be read by the unprivileged caller: it is
		// alone in it anyway.
		return []int{c.st.InitPid}, nil
	}
	return ms.pids(), nil
}
