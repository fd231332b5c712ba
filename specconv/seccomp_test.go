package specconv

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func uintp(v uint) *uint { return &v }

func TestConvertSeccompEveryAction(t *testing.T) {
	want := map[specs.LinuxSeccompAction]libbox.SeccompAction{
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
	for oci, lb := range want {
		s := &specs.LinuxSeccomp{
			DefaultAction: specs.ActAllow,
			ListenerPath:  "/run/agent.sock",
			Syscalls:      []specs.LinuxSyscall{{Names: []string{"mkdir"}, Action: oci}},
		}
		got, err := convertSeccomp(s)
		if err != nil {
			t.Errorf("%s: %v", oci, err)
			continue
		}
		if got.Syscalls[0].Action != lb {
			t.Errorf("%s became %q, want %q", oci, got.Syscalls[0].Action, lb)
		}
		if oci == specs.ActNotify {
			continue
		}
		// The same action as the default one.
		got, err = convertSeccomp(&specs.LinuxSeccomp{DefaultAction: oci})
		if err != nil || got.DefaultAction != lb {
			t.Errorf("default %s: %+v %v", oci, got, err)
		}
	}
	if len(want) != len(seccompActions) {
		t.Errorf("seccompActions has %d entries, the test %d", len(seccompActions), len(want))
	}
}

func TestConvertSeccompEveryOperator(t *testing.T) {
	want := map[specs.LinuxSeccompOperator]libbox.SeccompOp{
		specs.OpEqualTo:      libbox.SeccompEqual,
		specs.OpNotEqual:     libbox.SeccompNotEqual,
		specs.OpLessThan:     libbox.SeccompLess,
		specs.OpLessEqual:    libbox.SeccompLessOrEqual,
		specs.OpGreaterThan:  libbox.SeccompGreater,
		specs.OpGreaterEqual: libbox.SeccompGreaterOrEqual,
		specs.OpMaskedEqual:  libbox.SeccompMaskedEqual,
	}
	for oci, lb := range want {
		s := &specs.LinuxSeccomp{
			DefaultAction: specs.ActAllow,
			Syscalls: []specs.LinuxSyscall{{
				Names:  []string{"kill"},
				Action: specs.ActErrno,
				Args:   []specs.LinuxSeccompArg{{Index: 1, Value: 0xf, ValueTwo: 9, Op: oci}},
			}},
		}
		got, err := convertSeccomp(s)
		if err != nil {
			t.Errorf("%s: %v", oci, err)
			continue
		}
		wantArg := libbox.SeccompArg{Index: 1, Value: 0xf, ValueTwo: 9, Op: lb}
		if a := got.Syscalls[0].Args; len(a) != 1 || a[0] != wantArg {
			t.Errorf("%s: args %+v, want %+v", oci, a, wantArg)
		}
	}
}

func TestConvertSeccompArchitecturesAndFlags(t *testing.T) {
	var all []specs.Arch
	for a := range seccompArchs() {
		all = append(all, a)
	}
	s := &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: uintp(38),
		Architectures:   all,
		Flags: []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagLog, specs.LinuxSeccompFlagSpecAllow,
			flagTSYNC},
	}
	got, err := convertSeccomp(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Architectures) != len(all) {
		t.Errorf("architectures %v", got.Architectures)
	}
	for i, a := range all {
		if got.Architectures[i] != seccompArchs()[a] {
			t.Errorf("%s became %q", a, got.Architectures[i])
		}
	}
	// TSYNC is accepted and dropped.
	if want := []libbox.SeccompFlag{libbox.SeccompFlagLog, libbox.SeccompFlagSpecAllow}; !reflect.DeepEqual(got.Flags, want) {
		t.Errorf("flags %v, want %v", got.Flags, want)
	}
	if got.DefaultErrno == nil || *got.DefaultErrno != 38 {
		t.Errorf("defaultErrno %v", got.DefaultErrno)
	}
	// The pointer is copied, not shared with the spec.
	*s.DefaultErrnoRet = 1
	if *got.DefaultErrno != 38 {
		t.Error("defaultErrno shares the spec's pointer")
	}

	notify := &specs.LinuxSeccomp{
		DefaultAction:    specs.ActAllow,
		Flags:            []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagWaitKillableRecv},
		ListenerPath:     "/run/agent.sock",
		ListenerMetadata: "meta",
		Syscalls:         []specs.LinuxSyscall{{Names: []string{"mkdir"}, Action: specs.ActNotify}},
	}
	got, err = convertSeccomp(notify)
	if err != nil {
		t.Fatal(err)
	}
	if got.ListenerPath != "/run/agent.sock" || got.ListenerMetadata != "meta" ||
		!reflect.DeepEqual(got.Flags, []libbox.SeccompFlag{libbox.SeccompFlagWaitKillableRecv}) {
		t.Errorf("notify %+v", got)
	}
}

func TestConvertSeccompErrors(t *testing.T) {
	rule := func(r specs.LinuxSyscall) *specs.LinuxSeccomp {
		return &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"getpid"}, Action: specs.ActAllow}, r}}
	}
	for _, tc := range []struct {
		name string
		s    *specs.LinuxSeccomp
		want string
	}{
		{"default action", &specs.LinuxSeccomp{DefaultAction: "SCMP_ACT_NOPE"}, `linux.seccomp.defaultAction: unknown action "SCMP_ACT_NOPE"`},
		{"empty default action", &specs.LinuxSeccomp{}, `linux.seccomp.defaultAction: unknown action ""`},
		{"rule action", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: "SCMP_ACT_KILL_ALL"}), `linux.seccomp.syscalls[1].action: unknown action "SCMP_ACT_KILL_ALL"`},
		{"operator", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: specs.ActErrno, Args: []specs.LinuxSeccompArg{{Op: "SCMP_CMP_EQ"}, {Op: "SCMP_CMP_APPROX"}}}), `linux.seccomp.syscalls[1].args[1].op: unknown operator "SCMP_CMP_APPROX"`},
		{"architecture", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Architectures: []specs.Arch{specs.ArchX86, "SCMP_ARCH_Z80"}}, `linux.seccomp.architectures[1]: unknown architecture "SCMP_ARCH_Z80"`},
		{"flag", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Flags: []specs.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_FAST"}}, `linux.seccomp.flags[0]: unknown flag "SECCOMP_FILTER_FLAG_FAST"`},
		{"errno on allow", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: specs.ActKill, ErrnoRet: uintp(1)}), `linux.seccomp: syscalls[1]: action "kill" takes no errno`},
		{"default errno on kill", &specs.LinuxSeccomp{DefaultAction: specs.ActKill, DefaultErrnoRet: uintp(1)}, `linux.seccomp: default action: action "kill" takes no errno`},
		{"errno too large", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: specs.ActErrno, ErrnoRet: uintp(4096)}), "larger than the kernel's MAX_ERRNO"},
		{"trace data too large", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: specs.ActTrace, ErrnoRet: uintp(1 << 16)}), "does not fit in 16 bits"},
		{"arg index", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: specs.ActErrno, Args: []specs.LinuxSeccompArg{{Index: 6, Op: specs.OpEqualTo}}}), "index 6 is not an argument number"},
		{"no names", rule(specs.LinuxSyscall{Action: specs.ActErrno}), "syscalls[1]: no syscall names"},
		{"notify default", &specs.LinuxSeccomp{DefaultAction: specs.ActNotify, ListenerPath: "/a"}, "notify cannot be the default action"},
		{"notify without listener", rule(specs.LinuxSyscall{Names: []string{"mkdir"}, Action: specs.ActNotify}), "listenerPath is not set"},
		{"notify relative listener", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "agent.sock", Syscalls: []specs.LinuxSyscall{{Names: []string{"mkdir"}, Action: specs.ActNotify}}}, `listenerPath "agent.sock" must be an absolute path`},
		{"notify write", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "/a", Syscalls: []specs.LinuxSyscall{{Names: []string{"read", "write"}, Action: specs.ActNotify}}}, "SCMP_ACT_NOTIFY cannot be used for the write syscall"},
		{"notify sendmsg", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "/a", Syscalls: []specs.LinuxSyscall{{Names: []string{"sendmsg"}, Action: specs.ActNotify}}}, "SCMP_ACT_NOTIFY cannot be used for the sendmsg syscall"},
		{"wait killable without notify", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Flags: []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagWaitKillableRecv}}, "needs a rule with the notify action"},
	} {
		_, err := convertSeccomp(tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestConvertSeccompKeepsUnknownSyscalls(t *testing.T) {
	got, err := convertSeccomp(&specs.LinuxSeccomp{
		DefaultAction: specs.ActAllow,
		Syscalls:      []specs.LinuxSyscall{{Names: []string{"mkdir", "no_such_syscall_ever"}, Action: specs.ActErrno}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Kept in the config; the filter skips it (see libbox).
	if !reflect.DeepEqual(got.Syscalls[0].Names, []string{"mkdir", "no_such_syscall_ever"}) {
		t.Errorf("names %v", got.Syscalls[0].Names)
	}
}

func TestDefaultSeccomp(t *testing.T) {
	s, err := DefaultSeccomp()
	if err != nil {
		t.Fatal(err)
	}
	if s.DefaultAction != libbox.SeccompErrno || s.DefaultErrno == nil || *s.DefaultErrno != uint(unix.EPERM) {
		t.Errorf("default action %q errno %v, want errno EPERM", s.DefaultAction, s.DefaultErrno)
	}
	allowed := map[string]bool{}
	for _, r := range s.Syscalls {
		if r.Action == libbox.SeccompAllow && len(r.Args) == 0 {
			for _, n := range r.Names {
				allowed[n] = true
			}
		}
	}
	for _, n := range []string{"read", "execve", "mkdir"} {
		if !allowed[n] {
			t.Errorf("the default profile does not allow %s", n)
		}
	}
	// Denied for the default capabilities (no CAP_SYS_ADMIN).
	for _, n := range []string{"mount", "unshare", "keyctl"} {
		if allowed[n] {
			t.Errorf("the default profile allows %s", n)
		}
	}
	if len(s.Architectures) == 0 {
		t.Error("the default profile lists no architecture")
	}
	// With CAP_SYS_ADMIN in the bounding set, mount is allowed.
	spec := Example()
	spec.Process.Capabilities.Bounding = append(spec.Process.Capabilities.Bounding, "CAP_SYS_ADMIN")
	ls, err := DefaultSeccompSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range ls.Syscalls {
		found = found || (r.Action == specs.ActAllow && slices.Contains(r.Names, "mount"))
	}
	if !found {
		t.Error("the default profile for CAP_SYS_ADMIN does not allow mount")
	}
	// `spec` itself stays runc's: no seccomp section.
	if Example().Linux.Seccomp != nil {
		t.Error("Example() has a seccomp section")
	}
}

func TestSeccompFeatures(t *testing.T) {
	f, version := seccompFeatures()
	if f.Enabled == nil || !*f.Enabled {
		t.Fatal("seccomp not enabled")
	}
	if version == "" || !strings.HasPrefix(version, "2.") {
		t.Errorf("libseccomp version %q", version)
	}
	if len(f.Operators) != 7 || len(f.KnownFlags) != 4 {
		t.Errorf("operators %v known flags %v", f.Operators, f.KnownFlags)
	}
	for _, a := range []string{"SCMP_ACT_ERRNO", "SCMP_ACT_ALLOW", "SCMP_ACT_KILL"} {
		if !slices.Contains(f.Actions, a) {
			t.Errorf("actions %v lack %s", f.Actions, a)
		}
	}
	if !slices.Contains(f.Archs, "SCMP_ARCH_X86_64") && !slices.Contains(f.Archs, "SCMP_ARCH_AARCH64") {
		t.Errorf("archs %v lack the native one", f.Archs)
	}
	if !slices.Contains(f.SupportedFlags, string(flagTSYNC)) {
		t.Errorf("supported flags %v lack TSYNC", f.SupportedFlags)
	}
	for _, fl := range f.SupportedFlags {
		if !slices.Contains(f.KnownFlags, fl) {
			t.Errorf("supported flag %s is not known", fl)
		}
	}
}

// A config whose linux.seccomp has no flags field gets SPEC_ALLOW when the
// kernel has it, as under runc; an empty list, or any list, is kept as is.
// A config read from JSON tells the two apart.
func TestSeccompDefaultFlags(t *testing.T) {
	supported := true
	old := specAllowSupported
	specAllowSupported = func() bool { return supported }
	t.Cleanup(func() { specAllowSupported = old })
	for _, tc := range []struct {
		name      string
		flags     string // the JSON of linux.seccomp.flags, "" for none
		supported bool
		want      []libbox.SeccompFlag
	}{
		{"no field", "", true, []libbox.SeccompFlag{libbox.SeccompFlagSpecAllow}},
		{"no field, kernel without it", "", false, nil},
		{"empty list", `[]`, true, nil},
		{"log", `["SECCOMP_FILTER_FLAG_LOG"]`, true, []libbox.SeccompFlag{libbox.SeccompFlagLog}},
		{"tsync alone", `["SECCOMP_FILTER_FLAG_TSYNC"]`, true, nil},
	} {
		supported = tc.supported
		js := `{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"}]`
		if tc.flags != "" {
			js += `, "flags": ` + tc.flags
		}
		spec := Example()
		if err := json.Unmarshal([]byte(js+"}"), &spec.Linux.Seccomp); err != nil {
			t.Fatal(err)
		}
		c, _ := mustConvert(t, spec, Options{Bundle: newBundle(t)})
		if !reflect.DeepEqual(c.Seccomp.Flags, tc.want) {
			t.Errorf("%s: flags %v, want %v", tc.name, c.Seccomp.Flags, tc.want)
		}
	}
}
