package specconv

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	"github.com/sirupsen/logrus"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

var seccompActions = map[specs.LinuxSeccompAction]libbox.SeccompAction{
	specs.ActKill:        libbox.SeccompKill,
	specs.ActKillProcess: libbox.SeccompKillProcess,
	specs.ActKillThread:  libbox.SeccompKillThread,
	specs.ActTrap:        libbox.SeccompTrap,
	specs.ActErrno:       libbox.SeccompErrno,
	specs.ActTrace:       libbox.SeccompTrace,
	specs.ActAllow:       libbox.SeccompAllow,
	specs.ActLog:         libbox.SeccompLog,
	specs.ActNotify:      libbox.SeccompNotify,
}

var seccompOps = map[specs.LinuxSeccompOperator]libbox.SeccompOp{
	specs.OpEqualTo:      libbox.SeccompEqual,
	specs.OpNotEqual:     libbox.SeccompNotEqual,
	specs.OpLessThan:     libbox.SeccompLess,
	specs.OpLessEqual:    libbox.SeccompLessOrEqual,
	specs.OpGreaterThan:  libbox.SeccompGreater,
	specs.OpGreaterEqual: libbox.SeccompGreaterOrEqual,
	specs.OpMaskedEqual:  libbox.SeccompMaskedEqual,
}

// seccompArchs maps the OCI architectures to libseccomp's names.
// Built on first use, as the other large tables: package initialisation
// runs in every process of the runtime, the container's init included.
var seccompArchs = sync.OnceValue(func() map[specs.Arch]string {
	return map[specs.Arch]string{
		specs.ArchX86:         "x86",
		specs.ArchX86_64:      "amd64",
		specs.ArchX32:         "x32",
		specs.ArchARM:         "arm",
		specs.ArchAARCH64:     "arm64",
		specs.ArchMIPS:        "mips",
		specs.ArchMIPS64:      "mips64",
		specs.ArchMIPS64N32:   "mips64n32",
		specs.ArchMIPSEL:      "mipsel",
		specs.ArchMIPSEL64:    "mipsel64",
		specs.ArchMIPSEL64N32: "mipsel64n32",
		specs.ArchPPC:         "ppc",
		specs.ArchPPC64:       "ppc64",
		specs.ArchPPC64LE:     "ppc64le",
		specs.ArchS390:        "s390",
		specs.ArchS390X:       "s390x",
		specs.ArchPARISC:      "parisc",
		specs.ArchPARISC64:    "parisc64",
		specs.ArchRISCV64:     "riscv64",
		specs.ArchLOONGARCH64: "loong64",
		specs.ArchM68K:        "m68k",
		specs.ArchSH:          "sh",
		specs.ArchSHEB:        "sheb",
	}
})

// flagTSYNC is known to runc and accepted as a no-op: only the thread that
// executes the user program survives execve, and it is the one filtered.
const flagTSYNC specs.LinuxSeccompFlag = "SECCOMP_FILTER_FLAG_TSYNC"

var seccompFlags = map[specs.LinuxSeccompFlag]libbox.SeccompFlag{
	specs.LinuxSeccompFlagLog:              libbox.SeccompFlagLog,
	specs.LinuxSeccompFlagSpecAllow:        libbox.SeccompFlagSpecAllow,
	specs.LinuxSeccompFlagWaitKillableRecv: libbox.SeccompFlagWaitKillableRecv,
	flagTSYNC:                              "",
}

// convertSeccomp converts linux.seccomp. An unknown action, operator,
// architecture or flag is an error naming the field; a syscall name that
// libseccomp does not know is kept (the filter skips it) and logged at
// debug level, as runc does: profiles list the syscalls of every kernel.
func convertSeccomp(s *specs.LinuxSeccomp) (*libbox.Seccomp, error) {
	out := &libbox.Seccomp{
		ListenerPath:     s.ListenerPath,
		ListenerMetadata: s.ListenerMetadata,
	}
	var ok bool
	if out.DefaultAction, ok = seccompActions[s.DefaultAction]; !ok {
		return nil, fmt.Errorf("linux.seccomp.defaultAction: unknown action %q", s.DefaultAction)
	}
	out.DefaultErrno = copyErrno(s.DefaultErrnoRet)
	for i, a := range s.Architectures {
		name, ok := seccompArchs()[a]
		if !ok {
			return nil, fmt.Errorf("linux.seccomp.architectures[%d]: unknown architecture %q", i, a)
		}
		out.Architectures = append(out.Architectures, name)
	}
	for i, f := range s.Flags {
		flag, ok := seccompFlags[f]
		if !ok {
			return nil, fmt.Errorf("linux.seccomp.flags[%d]: unknown flag %q", i, f)
		}
		if flag != "" {
			out.Flags = append(out.Flags, flag)
		}
	}
	for i, sc := range s.Syscalls {
		act, ok := seccompActions[sc.Action]
		if !ok {
			return nil, fmt.Errorf("linux.seccomp.syscalls[%d].action: unknown action %q", i, sc.Action)
		}
		r := libbox.SeccompRule{
			Names:  append([]string(nil), sc.Names...),
			Action: act,
			Errno:  copyErrno(sc.ErrnoRet),
		}
		for j, a := range sc.Args {
			op, ok := seccompOps[a.Op]
			if !ok {
				return nil, fmt.Errorf("linux.seccomp.syscalls[%d].args[%d].op: unknown operator %q", i, j, a.Op)
			}
			r.Args = append(r.Args, libbox.SeccompArg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: op})
		}
		for _, name := range sc.Names {
			if !libbox.SeccompSyscallKnown(name) {
				logrus.Debugf("linux.seccomp.syscalls[%d]: unknown syscall %q skipped", i, name)
			}
		}
		out.Syscalls = append(out.Syscalls, r)
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("linux.%w", err)
	}
	return out, nil
}

// specAllowSupported reports whether the kernel takes
// SECCOMP_FILTER_FLAG_SPEC_ALLOW (a variable for the tests).
var specAllowSupported = func() bool { return libbox.SeccompFlagSupported(libbox.SeccompFlagSpecAllow) }

// defaultSeccompFlags gives a config's filter with no flags field at all
// (not even an empty list) SECCOMP_FILTER_FLAG_SPEC_ALLOW when the kernel
// has it, as runc does: seccomp then leaves the speculative store bypass
// mitigation to the process (prctl) instead of forcing it on, which costs
// the program speed on kernels that force it.
func defaultSeccompFlags(out *libbox.Seccomp, s *specs.LinuxSeccomp) {
	if s.Flags == nil && specAllowSupported() {
		out.Flags = []libbox.SeccompFlag{libbox.SeccompFlagSpecAllow}
	}
}

func copyErrno(e *uint) *uint {
	if e == nil {
		return nil
	}
	v := *e
	return &v
}

// DefaultSeccompSpec returns Docker's default seccomp profile
// (github.com/moby/profiles/seccomp) as linux.seccomp for spec: the rules
// that depend on capabilities follow spec's bounding set, and those for
// newer kernels the running kernel.
func DefaultSeccompSpec(spec *specs.Spec) (*specs.LinuxSeccomp, error) {
	s, err := seccomp.GetDefaultProfile(spec)
	if err != nil {
		return nil, fmt.Errorf("default seccomp profile: %w", err)
	}
	return s, nil
}

// DefaultSeccomp returns Docker's default seccomp profile for the default
// spec's capabilities (those of `nanobox-runc spec`), as a libbox filter.
func DefaultSeccomp() (*libbox.Seccomp, error) {
	s, err := DefaultSeccompSpec(Example())
	if err != nil {
		return nil, err
	}
	return convertSeccomp(s)
}

// seccompFeatures reports, by OCI names, what FromSpec accepts and the
// running kernel and libseccomp can enforce; and libseccomp's version.
func seccompFeatures() (*features.Seccomp, string) {
	sup := libbox.ProbeSeccomp()
	f := &features.Seccomp{}
	for oci, a := range seccompActions {
		if slices.Contains(sup.Actions, a) {
			f.Actions = append(f.Actions, string(oci))
		}
	}
	for oci := range seccompOps {
		f.Operators = append(f.Operators, string(oci))
	}
	for oci, name := range seccompArchs() {
		if slices.Contains(sup.Archs, name) {
			f.Archs = append(f.Archs, string(oci))
		}
	}
	for oci, flag := range seccompFlags {
		f.KnownFlags = append(f.KnownFlags, string(oci))
		// TSYNC is a no-op here, so it works on every kernel.
		if flag == "" || slices.Contains(sup.Flags, flag) {
			f.SupportedFlags = append(f.SupportedFlags, string(oci))
		}
	}
	for _, l := range [][]string{f.Actions, f.Operators, f.Archs, f.KnownFlags, f.SupportedFlags} {
		sort.Strings(l)
	}
	enabled := len(f.Actions) > 0
	f.Enabled = &enabled
	return f, sup.LibseccompVersion
}
