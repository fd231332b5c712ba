package libbox

// linux.personality and linux.memoryPolicy: two settings of the process
// that survive fork and execve, given to init and to every exec'd process
// before their filters (personality(2) and set_mempolicy(2) are calls a
// profile may deny).

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Personality is a personality(2) execution domain.
type Personality uint32

// The domains the runtime spec names (linux/personality.h).
const (
	PerLinux   Personality = 0x0000
	PerLinux32 Personality = 0x0008
)

// MemoryPolicy is a set_mempolicy(2) request: a MPOL_* mode with its
// MPOL_F_* flags, and the NUMA nodes it names.
type MemoryPolicy struct {
	Mode  int    `json:"mode"`
	Flags int    `json:"flags,omitempty"`
	Nodes []uint `json:"nodes,omitempty"`
}

// The set_mempolicy(2) modes and flags (linux/mempolicy.h; x/sys/unix has
// no names for them).
const (
	MPolDefault            = 0
	MPolPreferred          = 1
	MPolBind               = 2
	MPolInterleave         = 3
	MPolLocal              = 4
	MPolPreferredMany      = 5
	MPolWeightedInterleave = 6

	MPolFNumaBalancing = 1 << 13
	MPolFRelativeNodes = 1 << 14
	MPolFStaticNodes   = 1 << 15
)

// MaxNUMANode is the highest NUMA node number a policy may name (the
// kernel's largest MAX_NUMNODES).
const MaxNUMANode = 1023

// Validate checks what the kernel would refuse with a bare EINVAL: which
// modes take nodes, and the flags' combinations. Its errors start with
// "invalid memory policy", as runc's do.
func (m *MemoryPolicy) Validate() error {
	name := mpolModeName(m.Mode)
	switch m.Mode {
	case MPolDefault, MPolLocal:
		if len(m.Nodes) > 0 {
			return fmt.Errorf("invalid memory policy: the %s mode requires 0 nodes but got %d: remove the nodes", name, len(m.Nodes))
		}
		if m.Flags != 0 {
			return fmt.Errorf("invalid memory policy: the %s mode takes no flags: remove the flags", name)
		}
	case MPolPreferred:
	case MPolBind, MPolInterleave, MPolPreferredMany, MPolWeightedInterleave:
		if len(m.Nodes) == 0 {
			return fmt.Errorf("invalid memory policy: the %s mode requires at least 1 node but got 0: name the nodes", name)
		}
	default:
		return fmt.Errorf("invalid memory policy mode %d: use one of MPOL_DEFAULT (0) to MPOL_WEIGHTED_INTERLEAVE (6)", m.Mode)
	}
	if m.Flags&^(MPolFNumaBalancing|MPolFRelativeNodes|MPolFStaticNodes) != 0 {
		return fmt.Errorf("invalid memory policy flags %#x: use only MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES and MPOL_F_STATIC_NODES", m.Flags)
	}
	if m.Flags&MPolFRelativeNodes != 0 && m.Flags&MPolFStaticNodes != 0 {
		return errors.New("invalid memory policy flags: MPOL_F_RELATIVE_NODES and MPOL_F_STATIC_NODES exclude each other: keep one")
	}
	if m.Flags&MPolFNumaBalancing != 0 && m.Mode != MPolBind && m.Mode != MPolPreferredMany {
		return fmt.Errorf("invalid memory policy flags: MPOL_F_NUMA_BALANCING needs the MPOL_BIND or MPOL_PREFERRED_MANY mode, not %s", name)
	}
	for _, n := range m.Nodes {
		if n > MaxNUMANode {
			return fmt.Errorf("invalid memory policy node %d: the highest node number Linux supports is %d", n, MaxNUMANode)
		}
	}
	return nil
}

// mpolModeName names a set_mempolicy(2) mode the way the runtime spec does.
func mpolModeName(mode int) string {
	switch mode {
	case MPolDefault:
		return "MPOL_DEFAULT"
	case MPolPreferred:
		return "MPOL_PREFERRED"
	case MPolBind:
		return "MPOL_BIND"
	case MPolInterleave:
		return "MPOL_INTERLEAVE"
	case MPolLocal:
		return "MPOL_LOCAL"
	case MPolPreferredMany:
		return "MPOL_PREFERRED_MANY"
	case MPolWeightedInterleave:
		return "MPOL_WEIGHTED_INTERLEAVE"
	}
	return fmt.Sprintf("mode %d", mode)
}

// setPersonality sets the calling process's execution domain.
func setPersonality(p Personality) error {
	if _, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, uintptr(p), 0, 0); errno != 0 {
		return fmt.Errorf("set linux.personality: personality %#x: %w", uint32(p), errno)
	}
	return nil
}

// setMemoryPolicy gives the calling thread (the one that executes the
// program, which keeps the policy) the policy m.
func setMemoryPolicy(m *MemoryPolicy) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("set linux.memoryPolicy: %w", err)
	}
	var mask []uint64
	for _, n := range m.Nodes {
		for int(n/64) >= len(mask) {
			mask = append(mask, 0)
		}
		mask[n/64] |= 1 << (n % 64)
	}
	var ptr unsafe.Pointer
	maxnode := uintptr(0)
	if len(mask) > 0 {
		ptr = unsafe.Pointer(&mask[0])
		// The kernel reads maxnode-1 bits (as libnuma knows).
		maxnode = uintptr(len(mask))*64 + 1
	}
	_, _, errno := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(m.Mode|m.Flags), uintptr(ptr), maxnode)
	runtime.KeepAlive(mask)
	if errno != 0 {
		if errno == unix.EINVAL {
			return fmt.Errorf("set linux.memoryPolicy: invalid memory policy: set_mempolicy: %w: a node that is not online, or a mode or flag this kernel lacks (see /sys/devices/system/node/online)", errno)
		}
		return fmt.Errorf("set linux.memoryPolicy: set_mempolicy: %w", errno)
	}
	return nil
}
