package libbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF interprets a seccomp cBPF program on (arch, nr), with the
// arguments all zero: enough of cBPF for libseccomp's programs and the
// stub.
func runBPF(t *testing.T, prog []unix.SockFilter, arch, nr uint32) uint32 {
	t.Helper()
	var data [64]byte // struct seccomp_data
	binary.NativeEndian.PutUint32(data[0:], nr)
	binary.NativeEndian.PutUint32(data[4:], arch)
	var a, x uint32
	var mem [16]uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		jump := func(cond bool) {
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		}
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = binary.NativeEndian.Uint32(data[in.K:])
		case unix.BPF_LD | unix.BPF_IMM:
			a = in.K
		case unix.BPF_LD | unix.BPF_MEM:
			a = mem[in.K]
		case unix.BPF_LDX | unix.BPF_IMM:
			x = in.K
		case unix.BPF_LDX | unix.BPF_MEM:
			x = mem[in.K]
		case unix.BPF_ST:
			mem[in.K] = a
		case unix.BPF_STX:
			mem[in.K] = x
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			a &= in.K
		case unix.BPF_MISC | unix.BPF_TAX:
			x = a
		case unix.BPF_MISC | unix.BPF_TXA:
			a = x
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			jump(a == in.K)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			jump(a > in.K)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			jump(a >= in.K)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			jump(a&in.K != 0)
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("pc %d: opcode %#x not interpreted", pc, in.Code)
		}
	}
	t.Fatal("program ran off its end")
	return 0
}

func retErrno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// TestENOSYSStub runs compiled filters: a call above the highest one the
// profile names gets ENOSYS, one below it the default action, a listed one
// its rule, per architecture and ABI.
func TestENOSYSStub(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the system call numbers below are x86_64's")
	}
	const (
		x86_64 = unix.AUDIT_ARCH_X86_64
		i386   = unix.AUDIT_ARCH_I386
		kill   = unix.SECCOMP_RET_KILL_THREAD
		allow  = unix.SECCOMP_RET_ALLOW
	)
	// read 0, write 1, mkdir 83, clone 56; i386: read 3, mkdir 39.
	profile := func(def SeccompAction, archs ...string) *Seccomp {
		return &Seccomp{DefaultAction: def, Architectures: archs, Syscalls: []SeccompRule{
			{Names: []string{"read", "write", "clone"}, Action: SeccompAllow},
			{Names: []string{"mkdir"}, Action: SeccompErrno, Errno: uintp(uint(unix.EXDEV))},
		}}
	}
	for _, tc := range []struct {
		name       string
		s          *Seccomp
		arch, nr   uint32
		want       uint32
		wantNoStub bool
	}{
		{"listed, allowed", profile(SeccompErrno), x86_64, 0, allow, false},
		{"listed, errno rule", profile(SeccompErrno), x86_64, 83, retErrno(unix.EXDEV), false},
		{"unlisted below the highest", profile(SeccompErrno), x86_64, 2, retErrno(unix.EPERM), false},
		{"the highest itself", profile(SeccompErrno), x86_64, 83, retErrno(unix.EXDEV), false},
		{"above the highest", profile(SeccompErrno), x86_64, 84, retENOSYS, false},
		{"far above (clone3)", profile(SeccompErrno), x86_64, unix.SYS_CLONE3, retENOSYS, false},
		{"kill default: ENOSYS above too", profile(SeccompKill), x86_64, 500, retENOSYS, false},
		{"kill default below", profile(SeccompKill), x86_64, 2, kill, false},
		{"x32 call, no x32 in the filter: libseccomp's bad arch", profile(SeccompErrno), x86_64, x32SyscallBit | 500, kill, false},
		{"x32 in the filter: above its highest", profile(SeccompErrno, "x32"), x86_64, x32SyscallBit | 500, retENOSYS, false},
		{"x32 in the filter: listed", profile(SeccompErrno, "x32"), x86_64, x32SyscallBit | 0, allow, false},
		{"x32 in the filter: native above", profile(SeccompErrno, "x32"), x86_64, 500, retENOSYS, false},
		{"i386 in the filter: above", profile(SeccompErrno, "x86"), i386, 500, retENOSYS, false},
		{"i386 in the filter: listed", profile(SeccompErrno, "x86"), i386, 3, allow, false},
		{"i386 not in the filter", profile(SeccompErrno), i386, 500, kill, false},
		{"allow default: no stub", profile(SeccompAllow), x86_64, 500, allow, true},
		{"log default: no stub", profile(SeccompLog), x86_64, 500, unix.SECCOMP_RET_LOG, true},
	} {
		prog, err := compileSeccomp(tc.s)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := runBPF(t, prog.filter, tc.arch, tc.nr); got != tc.want {
			t.Errorf("%s: arch %#x nr %#x: got %#x, want %#x", tc.name, tc.arch, tc.nr, got, tc.want)
		}
		arches, _ := enosysArches(tc.s)
		if got := !needsENOSYSStub(tc.s) || len(arches) == 0; got != tc.wantNoStub {
			t.Errorf("%s: no stub %v, want %v", tc.name, got, tc.wantNoStub)
		}
	}

	// A profile that names only read (number 0) still has a maximum.
	onlyRead := &Seccomp{DefaultAction: SeccompErrno, Syscalls: []SeccompRule{{Names: []string{"read"}, Action: SeccompAllow}}}
	prog, err := compileSeccomp(onlyRead)
	if err != nil {
		t.Fatal(err)
	}
	if got := runBPF(t, prog.filter, x86_64, 1); got != retENOSYS {
		t.Errorf("only read: write got %#x, want ENOSYS", got)
	}

	// defaultErrnoRet ENOSYS already is the stub's answer.
	s := profile(SeccompErrno)
	s.DefaultErrno = uintp(uint(unix.ENOSYS))
	if needsENOSYSStub(s) {
		t.Error("a default errno of ENOSYS gets a stub")
	}
}

func TestAssembleBPF(t *testing.T) {
	prog, err := assembleBPF([]bpfInsn{
		{code: bpfLdAbs, k: seccompNr},
		{code: bpfJeq, k: 1, jt: "one", jf: "filter"},
		{label: "one", code: bpfRet, k: 7},
	})
	if err != nil {
		t.Fatal(err)
	}
	if prog[1].Jt != 0 || prog[1].Jf != 1 {
		t.Errorf("jumps: %+v", prog[1])
	}
	if _, err := assembleBPF([]bpfInsn{{label: "x", code: bpfLdAbs}, {code: bpfJa, ja: "x"}}); err == nil {
		t.Error("a backward jump was assembled")
	}
	if _, err := assembleBPF([]bpfInsn{{code: bpfJa, ja: "nowhere"}}); err == nil {
		t.Error("a jump to no label was assembled")
	}
	long := []bpfInsn{{code: bpfJeq, jt: "end"}}
	for range 300 {
		long = append(long, bpfInsn{code: bpfRet})
	}
	long = append(long, bpfInsn{label: "end", code: bpfRet})
	if _, err := assembleBPF(long); err == nil {
		t.Error("a conditional jump over 300 instructions was assembled")
	}
}
