package devcg

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bpf is the bpf(2) system call. A program load that a signal interrupts
// (the verifier returns EAGAIN) is tried again.
func bpf(cmd int, attr unsafe.Pointer, size uintptr) (uintptr, error) {
	for tries := 0; ; tries++ {
		r, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
		if errno == 0 {
			return r, nil
		}
		if errno == unix.EAGAIN && cmd == unix.BPF_PROG_LOAD && tries < 30 {
			continue
		}
		return 0, errno
	}
}

// bpfFD is bpf for a command that returns a descriptor (close-on-exec).
// A descriptor 0 (the caller runs with stdin closed) is moved up, so that
// nothing later mistakes it for stdin.
func bpfFD(cmd int, attr unsafe.Pointer, size uintptr) (int, error) {
	r, err := bpf(cmd, attr, size)
	if err != nil {
		return -1, err
	}
	fd := int(r)
	if fd == 0 {
		moved, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
		unix.Close(0)
		if err != nil {
			return -1, fmt.Errorf("move bpf descriptor from 0: %w", err)
		}
		fd = moved
	}
	return fd, nil
}

// loadProgram loads a device program; the verifier's log is in the error
// if the kernel refuses it.
func loadProgram(code []byte) (int, error) {
	license := []byte("Apache-2.0\x00")
	var attr struct { // union bpf_attr, BPF_PROG_LOAD, up to prog_name
		progType    uint32
		insnCnt     uint32
		insns       uint64
		license     uint64
		logLevel    uint32
		logSize     uint32
		logBuf      uint64
		kernVersion uint32
		progFlags   uint32
		progName    [16]byte
	}
	attr.progType = unix.BPF_PROG_TYPE_CGROUP_DEVICE
	attr.insnCnt = uint32(len(code) / insnSize)
	attr.insns = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(code))))
	attr.license = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(license))))
	copy(attr.progName[:], "nanobox_devices")
	fd, err := bpfFD(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if err == nil {
		runtime.KeepAlive(code)
		runtime.KeepAlive(license)
		return fd, nil
	}
	// Again with the verifier's log, to say why.
	log := make([]byte, 64<<10)
	attr.logLevel = 1
	attr.logSize = uint32(len(log))
	attr.logBuf = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(log))))
	fd, err2 := bpfFD(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(code)
	runtime.KeepAlive(license)
	runtime.KeepAlive(log)
	if err2 == nil {
		return fd, nil
	}
	if n := bytes.IndexByte(log, 0); n > 0 {
		return -1, fmt.Errorf("load device program: %w: %s", err, bytes.TrimSpace(log[:n]))
	}
	return -1, fmt.Errorf("load device program: %w", err)
}

// attachedPrograms opens the device programs attached to the cgroup dir.
// A program this process may not open (an LSM's policy) is left out: it
// stays attached, and only narrows what the new program allows.
func attachedPrograms(dir int) ([]int, error) {
	// The whole BPF_PROG_QUERY part of union bpf_attr, revision included:
	// the kernel writes revision back whatever size it is given.
	var query struct {
		targetFD        uint32
		attachType      uint32
		queryFlags      uint32
		attachFlags     uint32
		progIDs         uint64
		progCnt         uint32
		_               uint32
		progAttachFlags uint64
		linkIDs         uint64
		linkAttachFlags uint64
		revision        uint64
	}
	ids := make([]uint32, 16)
	for tries := 0; ; tries++ {
		query.targetFD = uint32(dir)
		query.attachType = unix.BPF_CGROUP_DEVICE
		query.progIDs = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(ids))))
		query.progCnt = uint32(len(ids))
		_, err := bpf(unix.BPF_PROG_QUERY, unsafe.Pointer(&query), unsafe.Sizeof(query))
		runtime.KeepAlive(ids)
		if errors.Is(err, unix.ENOSPC) && tries < 10 {
			ids = make([]uint32, query.progCnt)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("query the device programs of the cgroup: %w", err)
		}
		ids = ids[:query.progCnt]
		break
	}
	fds := make([]int, 0, len(ids))
	for _, id := range ids {
		attr := struct{ id, nextID, openFlags uint32 }{id: id}
		fd, err := bpfFD(unix.BPF_PROG_GET_FD_BY_ID, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOENT) {
			continue // not ours to open, or detached since the query
		}
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("open device program %d of the cgroup: %w", id, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

func attach(dir, prog, replace int, flags uint32) error {
	attr := struct{ targetFD, attachBPFFD, attachType, attachFlags, replaceBPFFD uint32 }{
		targetFD: uint32(dir), attachBPFFD: uint32(prog), attachType: unix.BPF_CGROUP_DEVICE, attachFlags: flags,
	}
	if replace >= 0 {
		attr.replaceBPFFD = uint32(replace)
	}
	_, err := bpf(unix.BPF_PROG_ATTACH, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

func detach(dir, prog int) error {
	attr := struct{ targetFD, attachBPFFD, attachType uint32 }{
		targetFD: uint32(dir), attachBPFFD: uint32(prog), attachType: unix.BPF_CGROUP_DEVICE,
	}
	_, err := bpf(unix.BPF_PROG_DETACH, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

// install attaches code to the cgroup dir in place of the device programs
// attached there before. The new program is attached before the old ones
// go, so the cgroup is never without one: one old program is replaced in
// a single step (BPF_F_REPLACE, Linux 5.6), several are detached after.
func install(dir int, code []byte) error {
	// Before 5.11 a program's memory counts against RLIMIT_MEMLOCK, which
	// is small by default.
	_ = unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY})
	old, err := attachedPrograms(dir)
	if err != nil {
		return err
	}
	defer closeAll(old)
	prog, err := loadProgram(code)
	if err != nil {
		return err
	}
	defer unix.Close(prog)
	if len(old) == 1 {
		err := attach(dir, prog, old[0], unix.BPF_F_ALLOW_MULTI|unix.BPF_F_REPLACE)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("attach the device program in place of the old one: %w", err)
		}
		// A kernel without BPF_F_REPLACE: attach, then detach.
	}
	if err := attach(dir, prog, -1, unix.BPF_F_ALLOW_MULTI); err != nil {
		return fmt.Errorf("attach the device program: %w", err)
	}
	for _, fd := range old {
		if err := detach(dir, fd); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("detach the cgroup's old device program: %w", err)
		}
	}
	return nil
}
