package libbox

// The ENOSYS stub: a prefix to the libseccomp program that returns ENOSYS
// for every system call number above the highest one the profile names
// (per architecture), instead of the default action. A profile lists the
// calls of the kernels it was written for; a newer call (clone3,
// faccessat2, openat2...) made by a newer libc would otherwise get the
// default errno (EPERM) or be killed, where ENOSYS makes libc fall back to
// the older call, as on an older kernel. runc does the same (its
// libcontainer/seccomp/patchbpf); this is our own program.
//
// The stub, for the architectures of the filter (the native one and the
// listed ones, grouped by AUDIT_ARCH_*), reads:
//
//	ld  [4]                  seccomp_data.arch
//	jeq AUDIT_ARCH_A, arch_A, 0
//	...                      one jeq per architecture
//	ja  filter               any other architecture: libseccomp decides
//	arch_A:
//	ld  [0]                  seccomp_data.nr
//	jgt MAX_A, enosys, 0
//	ja  filter
//	...
//	enosys:
//	ret ERRNO(ENOSYS)
//	filter:                  libseccomp's program, which loads what it needs
//
// x86_64 carries x32 calls too, told apart by __X32_SYSCALL_BIT in nr:
// each ABI is compared with its own maximum, and the ABI the filter does
// not have goes to libseccomp (which kills it as a bad architecture). On
// s390 and s390x, number 0 (setup) is where the kernel leaves a call it
// does not know in the multiplexed range, so it gets ENOSYS too.
//
// Numbers libseccomp maps to negative pseudo-calls (the socketcall and ipc
// multiplexers of i386 and s390) are left out of the maximum, as in runc.
// A profile's highest number is not a complete answer either: a call
// added out of order (close_range, numbered after clone3 in the same
// release) below the maximum still gets the default action. The runtime
// itself therefore never needs such a call under the filter
// (filters_linux.go).

import (
	"fmt"
	"sync"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// x32SyscallBit is __X32_SYSCALL_BIT: set in nr for x32 system calls.
const x32SyscallBit = 0x40000000

// The stub's instructions (linux/filter.h, linux/bpf_common.h).
const (
	bpfLdAbs   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgt     = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
	bpfJset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfJa      = unix.BPF_JMP | unix.BPF_JA
	bpfRet     = unix.BPF_RET | unix.BPF_K
	seccompNr  = 0 // offsetof(struct seccomp_data, nr)
	seccompArc = 4 // offsetof(struct seccomp_data, arch)
)

// retENOSYS is SECCOMP_RET_ERRNO with ENOSYS.
const retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)

// auditArches maps libseccomp's architectures to the AUDIT_ARCH_* value
// the kernel puts in seccomp_data.arch. x32 shares x86_64's.
// Built on first use, as the other large tables: package initialisation
// runs in every process of the runtime, the container's init included.
var auditArches = sync.OnceValue(func() map[libseccomp.ScmpArch]uint32 {
	return map[libseccomp.ScmpArch]uint32{
		libseccomp.ArchX86:         unix.AUDIT_ARCH_I386,
		libseccomp.ArchAMD64:       unix.AUDIT_ARCH_X86_64,
		libseccomp.ArchX32:         unix.AUDIT_ARCH_X86_64,
		libseccomp.ArchARM:         unix.AUDIT_ARCH_ARM,
		libseccomp.ArchARM64:       unix.AUDIT_ARCH_AARCH64,
		libseccomp.ArchMIPS:        unix.AUDIT_ARCH_MIPS,
		libseccomp.ArchMIPS64:      unix.AUDIT_ARCH_MIPS64,
		libseccomp.ArchMIPS64N32:   unix.AUDIT_ARCH_MIPS64N32,
		libseccomp.ArchMIPSEL:      unix.AUDIT_ARCH_MIPSEL,
		libseccomp.ArchMIPSEL64:    unix.AUDIT_ARCH_MIPSEL64,
		libseccomp.ArchMIPSEL64N32: unix.AUDIT_ARCH_MIPSEL64N32,
		libseccomp.ArchPPC:         unix.AUDIT_ARCH_PPC,
		libseccomp.ArchPPC64:       unix.AUDIT_ARCH_PPC64,
		libseccomp.ArchPPC64LE:     unix.AUDIT_ARCH_PPC64LE,
		libseccomp.ArchS390:        unix.AUDIT_ARCH_S390,
		libseccomp.ArchS390X:       unix.AUDIT_ARCH_S390X,
		libseccomp.ArchPARISC:      unix.AUDIT_ARCH_PARISC,
		libseccomp.ArchPARISC64:    unix.AUDIT_ARCH_PARISC64,
		libseccomp.ArchRISCV64:     unix.AUDIT_ARCH_RISCV64,
		libseccomp.ArchLOONGARCH64: unix.AUDIT_ARCH_LOONGARCH64,
		libseccomp.ArchM68K:        unix.AUDIT_ARCH_M68K,
		libseccomp.ArchSH:          unix.AUDIT_ARCH_SHEL,
		libseccomp.ArchSHEB:        unix.AUDIT_ARCH_SH,
	}
})

// stubArch is one AUDIT_ARCH_* of the filter with the highest number the
// profile names for each of its ABIs.
type stubArch struct {
	audit uint32
	// max is the highest number; on x86_64 the native ABI's.
	max uint32
	// maxX32 is x86_64's x32 ABI (numbers with x32SyscallBit set).
	maxX32 uint32
	// hasNative, hasX32 say which ABIs have a maximum: the filter has
	// the ABI and the profile names a call of it.
	hasNative, hasX32 bool
	s390              bool
}

// needsENOSYSStub reports whether calls the profile does not know would
// get anything but success or ENOSYS: the default action allows nothing
// by itself (runc's rule: allow, log and trace are left alone; a tracer
// handles new calls on its own).
func needsENOSYSStub(s *Seccomp) bool {
	switch s.DefaultAction {
	case SeccompAllow, SeccompLog, SeccompTrace:
		return false
	case SeccompErrno:
		return s.DefaultErrno == nil || *s.DefaultErrno != uint(unix.ENOSYS)
	}
	return true
}

// enosysArches finds, for each architecture of the filter (the native one
// and s.Architectures), the highest system call number of s's rules.
// Architectures for which no name resolves get no stub section.
func enosysArches(s *Seccomp) ([]stubArch, error) {
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		return nil, fmt.Errorf("seccomp: native architecture: %w", err)
	}
	arches := []libseccomp.ScmpArch{native}
	for _, name := range s.Architectures {
		a, err := libseccomp.GetArchFromString(name)
		if err != nil {
			return nil, fmt.Errorf("seccomp: architecture %q: %w", name, err)
		}
		arches = append(arches, a)
	}
	var out []stubArch
	index := map[uint32]int{}
	for _, a := range arches {
		audit, ok := auditArches()[a]
		if !ok {
			// An architecture the stub cannot name goes straight to
			// libseccomp's program, as without a stub.
			continue
		}
		var max uint32
		found := false
		for _, r := range s.Syscalls {
			for _, name := range r.Names {
				nr, err := libseccomp.GetSyscallFromNameByArch(name, a)
				if err != nil || nr < 0 {
					continue
				}
				max = maxU32(max, uint32(nr))
				found = true
			}
		}
		i, seen := index[audit]
		if !seen {
			i = len(out)
			index[audit] = i
			out = append(out, stubArch{audit: audit, s390: a == libseccomp.ArchS390 || a == libseccomp.ArchS390X})
		}
		sa := &out[i]
		if !found {
			// No known call for this ABI: libseccomp's answer stands.
			continue
		}
		if a == libseccomp.ArchX32 {
			sa.hasX32 = true
			sa.maxX32 = maxU32(sa.maxX32, max)
		} else {
			sa.hasNative = true
			sa.max = maxU32(sa.max, max)
		}
	}
	// An architecture with no known call at all needs no section.
	kept := out[:0]
	for _, sa := range out {
		if sa.hasNative || sa.hasX32 {
			kept = append(kept, sa)
		}
	}
	return kept, nil
}

func maxU32(a, b uint32) uint32 {
	if a > b {
		return a
	}
	return b
}

// bpfInsn is one instruction with symbolic jump targets: jt and jf for
// conditional jumps ("" is the next instruction), ja for BPF_JA. label
// names the instruction.
type bpfInsn struct {
	label  string
	code   uint16
	k      uint32
	jt, jf string
	ja     string
}

// enosysStub assembles the stub for arches; the label "filter" is the
// instruction right after it, where libseccomp's program starts.
func enosysStub(arches []stubArch) ([]unix.SockFilter, error) {
	if len(arches) == 0 {
		return nil, nil
	}
	prog := []bpfInsn{{code: bpfLdAbs, k: seccompArc}}
	for i, a := range arches {
		prog = append(prog, bpfInsn{code: bpfJeq, k: a.audit, jt: fmt.Sprintf("arch%d", i)})
	}
	prog = append(prog, bpfInsn{code: bpfJa, ja: "filter"})
	for i, a := range arches {
		label := fmt.Sprintf("arch%d", i)
		prog = append(prog, bpfInsn{label: label, code: bpfLdAbs, k: seccompNr})
		if a.s390 {
			prog = append(prog, bpfInsn{code: bpfJeq, k: 0, jt: "enosys"})
		}
		switch {
		case a.audit == unix.AUDIT_ARCH_X86_64 && a.hasX32 && a.hasNative:
			x32 := label + "x32"
			prog = append(prog,
				bpfInsn{code: bpfJset, k: x32SyscallBit, jt: x32},
				bpfInsn{code: bpfJgt, k: a.max, jt: "enosys"},
				bpfInsn{code: bpfJa, ja: "filter"},
				bpfInsn{label: x32, code: bpfJgt, k: a.maxX32, jt: "enosys"},
			)
		case a.audit == unix.AUDIT_ARCH_X86_64 && a.hasX32:
			prog = append(prog,
				bpfInsn{code: bpfJset, k: x32SyscallBit, jf: "filter"},
				bpfInsn{code: bpfJgt, k: a.maxX32, jt: "enosys"},
			)
		case a.audit == unix.AUDIT_ARCH_X86_64:
			prog = append(prog,
				bpfInsn{code: bpfJset, k: x32SyscallBit, jt: "filter"},
				bpfInsn{code: bpfJgt, k: a.max, jt: "enosys"},
			)
		default:
			prog = append(prog, bpfInsn{code: bpfJgt, k: a.max, jt: "enosys"})
		}
		prog = append(prog, bpfInsn{code: bpfJa, ja: "filter"})
	}
	prog = append(prog, bpfInsn{label: "enosys", code: bpfRet, k: retENOSYS})
	return assembleBPF(prog)
}

// assembleBPF resolves the labels of prog; jumps go forward only, as cBPF
// requires.
func assembleBPF(prog []bpfInsn) ([]unix.SockFilter, error) {
	pos := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			pos[in.label] = i
		}
	}
	pos["filter"] = len(prog)
	target := func(from int, label string) (int, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := pos[label]
		if !ok {
			return 0, fmt.Errorf("bpf: no label %q", label)
		}
		if to <= from {
			return 0, fmt.Errorf("bpf: jump backwards to %q", label)
		}
		return to - from - 1, nil
	}
	out := make([]unix.SockFilter, 0, len(prog))
	for i, in := range prog {
		f := unix.SockFilter{Code: in.code, K: in.k}
		if in.code == bpfJa {
			off, err := target(i, in.ja)
			if err != nil {
				return nil, err
			}
			f.K = uint32(off)
		} else {
			for _, j := range []struct {
				label string
				dst   *uint8
			}{{in.jt, &f.Jt}, {in.jf, &f.Jf}} {
				off, err := target(i, j.label)
				if err != nil {
					return nil, err
				}
				if off > 255 {
					return nil, fmt.Errorf("bpf: conditional jump to %q is %d instructions long", j.label, off)
				}
				*j.dst = uint8(off)
			}
		}
		out = append(out, f)
	}
	return out, nil
}
