package libbox

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// TestSeccompCache: what the cache returns is exactly what compileSeccomp
// makes (the instructions, the flags, the listener), the second time
// without compiling; a changed profile is another entry; a torn or altered
// file, another profile's file under its name or a program for another
// architecture is compiled again and rewritten; instructions survive the trip to
// init (encode, decode); a profile init would refuse is refused on a hit.
func TestSeccompCache(t *testing.T) {
	def, err := parseSeccompDefault()
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*Seccomp{"default": def, "deny-pgid": denyPgid()}
	if sb, err := SandboxSeccomp("default"); err == nil && !reflect.DeepEqual(sb, def) {
		profiles["sandbox"] = sb
	}
	notify := denyPgid()
	notify.Syscalls[0].Action, notify.Syscalls[0].Errno = SeccompNotify, nil
	notify.ListenerPath = "/run/agent.sock"
	profiles["notify"] = notify
	root := t.TempDir()
	for name, s := range profiles {
		want, err := compileSeccomp(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := seccompCompiles
		first, err := compileSeccompCached(root, s)
		if err != nil {
			t.Fatalf("%s: first: %v", name, err)
		}
		second, err := compileSeccompCached(root, s)
		if err != nil {
			t.Fatalf("%s: second: %v", name, err)
		}
		if seccompCompiles != n+1 {
			t.Errorf("%s: %d compiles for two lookups, want 1", name, seccompCompiles-n)
		}
		for what, got := range map[string]*seccompProgram{"compiled": first, "cached": second} {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the %s program differs from compileSeccomp's", name, what)
			}
		}
		back, err := decodeSeccompFilter(encodeSeccompFilter(want.filter))
		if err != nil || !reflect.DeepEqual(back, want.filter) {
			t.Errorf("%s: the instructions do not survive encode and decode (%v)", name, err)
		}
	}
	ents, _ := filepath.Glob(filepath.Join(root, seccompCachePrefix+"*"))
	if len(ents) != len(profiles) {
		t.Fatalf("%d cache files for %d profiles: %q", len(ents), len(profiles), ents)
	}

	// An altered file (one instruction flipped, checksum kept) is not used.
	s := denyPgid()
	key, err := seccompCacheKey(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, seccompCachePrefix+key)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	n := seccompCompiles
	got, err := compileSeccompCached(root, s)
	want, _ := compileSeccomp(s)
	if err != nil || !reflect.DeepEqual(got, want) || seccompCompiles != n+1 {
		t.Fatalf("altered cache file: err %v, equal %v, compiles %d; want it compiled again", err, reflect.DeepEqual(got, want), seccompCompiles-n)
	}
	if b2, _ := os.ReadFile(path); len(b2) != len(b) || b2[len(b2)-1] == b[len(b)-1] {
		t.Error("the altered cache file was not rewritten")
	}
	// A torn one (cut short).
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := compileSeccompCached(root, s); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("torn cache file: err %v, equal %v", err, reflect.DeepEqual(got, want))
	}

	// A good file of another profile moved under this profile's name is
	// not used: the checksum covers the key.
	defKey, err := seccompCacheKey(def)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := os.ReadFile(filepath.Join(root, seccompCachePrefix+defKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, moved, 0o600); err != nil {
		t.Fatal(err)
	}
	n = seccompCompiles
	if got, err := compileSeccompCached(root, s); err != nil || !reflect.DeepEqual(got, want) || seccompCompiles != n+1 {
		t.Fatalf("another profile's file under this name: err %v, equal %v, compiles %d; want it compiled again", err, reflect.DeepEqual(got, want), seccompCompiles-n)
	}

	// A program for another architecture, its checksum made right, is not
	// used either.
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		t.Fatal(err)
	}
	audit, known := auditArches()[native]
	if !known {
		t.Logf("skipping the wrong-architecture check: no AUDIT_ARCH for %s", native)
	} else {
		foreign := append([]unix.SockFilter(nil), want.filter...)
		swapped := false
		for i := range foreign {
			if foreign[i].Code == unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K && foreign[i].K == audit {
				foreign[i].K = unix.AUDIT_ARCH_S390X
				if audit == unix.AUDIT_ARCH_S390X {
					foreign[i].K = unix.AUDIT_ARCH_X86_64
				}
				swapped = true
			}
		}
		if !swapped {
			t.Fatalf("the program of %s never tests its architecture %#x", native, audit)
		}
		prog := encodeSeccompFilter(foreign)
		if err := os.WriteFile(path, append(seccompCacheSum(key, prog), prog...), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := decodeSeccompCache(key, append(seccompCacheSum(key, prog), prog...)); ok {
			t.Error("a program for another architecture passes decodeSeccompCache")
		}
		n = seccompCompiles
		if got, err := compileSeccompCached(root, s); err != nil || !reflect.DeepEqual(got, want) || seccompCompiles != n+1 {
			t.Fatalf("another architecture's program: err %v, equal %v, compiles %d; want it compiled again", err, reflect.DeepEqual(got, want), seccompCompiles-n)
		}
	}
	// What the cache wrote itself is still good.
	if b, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	} else if _, ok := decodeSeccompCache(key, b); !ok {
		t.Error("the rewritten cache file is refused")
	}

	// A change of the profile is another key.
	other := denyPgid()
	other.Syscalls[0].Errno = uintp(uint(unix.EPERM))
	if k2, _ := seccompCacheKey(other); k2 == key {
		t.Error("two profiles have the same cache key")
	}

	// The checks of init are made on a hit too: a flag this kernel lacks
	// is refused by the cached path as by compileSeccomp.
	bad := denyPgid()
	bad.Flags = []SeccompFlag{"SECCOMP_FILTER_FLAG_NOT_A_FLAG"}
	_, errFresh := compileSeccomp(bad)
	_, errFromFilter := seccompFromFilter(bad, want.filter)
	if (errFresh == nil) != (errFromFilter == nil) {
		t.Errorf("unknown flag: compileSeccomp says %v, the cached path %v", errFresh, errFromFilter)
	}
	for _, e := range ents {
		if !strings.HasPrefix(filepath.Base(e), seccompCachePrefix) {
			t.Errorf("cache file %s outside the prefix", e)
		}
	}
}

// stateRootEntries is os.ReadDir of a state root without the compiled
// seccomp filters kept there on purpose: what a test that leaves nothing
// behind must find empty.
func stateRootEntries(root string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(root)
	var left []os.DirEntry
	for _, e := range ents {
		if name := e.Name(); strings.HasPrefix(name, seccompCachePrefix) && len(name) == len(seccompCachePrefix)+64 && e.Type().IsRegular() {
			continue
		}
		left = append(left, e)
	}
	return left, err
}

// TestSeccompInstallOnly: what init receives beside a compiled program
// still installs it the same way (flags, a notify fd or not) and carries
// no rule the program already holds.
func TestSeccompInstallOnly(t *testing.T) {
	one := uint(1)
	full := &Seccomp{
		DefaultAction:    SeccompErrno,
		DefaultErrno:     &one,
		Architectures:    []string{"x86"},
		Flags:            []SeccompFlag{SeccompFlagLog},
		ListenerPath:     "/run/agent.sock",
		ListenerMetadata: "meta",
		Syscalls: []SeccompRule{
			{Names: []string{"read", "write"}, Action: SeccompAllow},
			{Names: []string{"mkdir"}, Action: SeccompNotify},
			{Names: []string{"kill"}, Action: SeccompAllow, Args: []SeccompArg{{Index: 1, Value: 0, Op: SeccompEqual}}},
		},
	}
	slim := full.installOnly()
	if len(slim.Syscalls) != 1 || slim.Syscalls[0].Action != SeccompNotify || !slices.Equal(slim.Syscalls[0].Names, []string{"mkdir"}) {
		t.Fatalf("rules kept: %+v, want the notify rule only", slim.Syscalls)
	}
	if !slim.usesNotify() || !slim.hasFlag(SeccompFlagLog) || slim.ListenerPath != full.ListenerPath || slim.ListenerMetadata != full.ListenerMetadata {
		t.Fatalf("install settings lost: %+v", slim)
	}
	if err := slim.Validate(); err != nil {
		t.Fatalf("the slim profile does not validate: %v", err)
	}
	filter := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
	a, b := newSeccompProgram(full, filter), newSeccompProgram(slim, filter)
	if a.flags != b.flags || a.listener != b.listener {
		t.Fatalf("installed differently: full flags %#x listener %v, slim %#x %v", a.flags, a.listener, b.flags, b.listener)
	}
	full.Syscalls = full.Syscalls[:1]
	if full.installOnly().usesNotify() {
		t.Fatal("a profile without notify rules became one with")
	}
}

// TestSeccompKeyFields: the cache key covers every field of a profile. The
// field lists below are those appendSeccompKey writes; a field added to
// the types fails here until the key writes it too. And a change of any one
// field (each of a rule's and an argument's too) changes the key.
func TestSeccompKeyFields(t *testing.T) {
	fields := func(v any) []string {
		var names []string
		for f := range reflect.TypeOf(v).Fields() {
			names = append(names, f.Name)
		}
		return names
	}
	for _, c := range []struct {
		v    any
		want []string
	}{
		{Seccomp{}, []string{"DefaultAction", "DefaultErrno", "Architectures", "Flags", "ListenerPath", "ListenerMetadata", "Syscalls"}},
		{SeccompRule{}, []string{"Names", "Action", "Errno", "Args"}},
		{SeccompArg{}, []string{"Index", "Value", "ValueTwo", "Op"}},
	} {
		if got := fields(c.v); !slices.Equal(got, c.want) {
			t.Errorf("%T has the fields %q; appendSeccompKey writes %q: make it write the new ones", c.v, got, c.want)
		}
	}

	base := func() *Seccomp {
		return &Seccomp{
			DefaultAction: SeccompErrno, DefaultErrno: uintp(1),
			Architectures: []string{"x86"}, Flags: []SeccompFlag{"SECCOMP_FILTER_FLAG_LOG"},
			ListenerPath: "/l", ListenerMetadata: "m",
			Syscalls: []SeccompRule{{
				Names: []string{"read", "write"}, Action: SeccompErrno, Errno: uintp(2),
				Args: []SeccompArg{{Index: 1, Value: 2, ValueTwo: 3, Op: "SCMP_CMP_EQ"}},
			}},
		}
	}
	changes := map[string]func(s *Seccomp){
		"DefaultAction":    func(s *Seccomp) { s.DefaultAction = SeccompKill },
		"DefaultErrno":     func(s *Seccomp) { s.DefaultErrno = uintp(3) },
		"DefaultErrno nil": func(s *Seccomp) { s.DefaultErrno = nil },
		"Architectures":    func(s *Seccomp) { s.Architectures = []string{"x32"} },
		"Flags":            func(s *Seccomp) { s.Flags = nil },
		"ListenerPath":     func(s *Seccomp) { s.ListenerPath = "/k" },
		"ListenerMetadata": func(s *Seccomp) { s.ListenerMetadata = "n" },
		"path into meta":   func(s *Seccomp) { s.ListenerPath, s.ListenerMetadata = "", "/lm" },
		"Names":            func(s *Seccomp) { s.Syscalls[0].Names = []string{"readwrite"} },
		"Names split":      func(s *Seccomp) { s.Syscalls[0].Names = []string{"rea", "dwrite"} },
		"Action":           func(s *Seccomp) { s.Syscalls[0].Action = SeccompAllow },
		"Errno":            func(s *Seccomp) { s.Syscalls[0].Errno = nil },
		"Args":             func(s *Seccomp) { s.Syscalls[0].Args = nil },
		"Index":            func(s *Seccomp) { s.Syscalls[0].Args[0].Index = 0 },
		"Value":            func(s *Seccomp) { s.Syscalls[0].Args[0].Value = 9 },
		"ValueTwo":         func(s *Seccomp) { s.Syscalls[0].Args[0].ValueTwo = 9 },
		"Op":               func(s *Seccomp) { s.Syscalls[0].Args[0].Op = "SCMP_CMP_NE" },
		"second rule": func(s *Seccomp) {
			s.Syscalls = append(s.Syscalls, SeccompRule{Names: []string{"x"}, Action: SeccompAllow})
		},
		"rule names merged": func(s *Seccomp) {
			s.Syscalls[0].Names = []string{"read"}
			s.Syscalls = append(s.Syscalls, SeccompRule{Names: []string{"write"}})
		},
	}
	key := string(appendSeccompKey(nil, base()))
	if again := string(appendSeccompKey(nil, base())); again != key {
		t.Fatal("the key of one profile differs between two calls")
	}
	seen := map[string]string{key: "base"}
	for name, change := range changes {
		s := base()
		change(s)
		k := string(appendSeccompKey(nil, s))
		if prev, dup := seen[k]; dup {
			t.Errorf("%s: the same key as %s", name, prev)
		}
		seen[k] = name
	}
}

// TestSeccompLayoutFallback: a profile is compiled as a binary tree, and
// as libseccomp's list when the tree is longer than the kernel takes but
// the list is not; a profile too long either way is refused, naming the
// limit. (The limit is lowered to fit Docker's default profile, whose
// tree is longer than its list, rather than compiling a huge profile.)
func TestSeccompLayoutFallback(t *testing.T) {
	def, err := parseSeccompDefault()
	if err != nil {
		t.Fatal(err)
	}
	list, err := seccompBPF(def, false)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := seccompBPF(def, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) <= len(list) {
		t.Fatalf("the tree (%d instructions) is not longer than the list (%d): pick another profile for this test", len(tree), len(list))
	}
	p, err := compileSeccomp(def)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.filter, tree) {
		t.Errorf("compileSeccomp made %d instructions, not the tree's %d", len(p.filter), len(tree))
	}
	defer func(old int) { maxSeccompInsns = old }(maxSeccompInsns)
	maxSeccompInsns = (len(list) + len(tree)) / 2
	p, err = compileSeccomp(def)
	if err != nil {
		t.Fatalf("with a limit of %d: %v", maxSeccompInsns, err)
	}
	if !reflect.DeepEqual(p.filter, list) {
		t.Errorf("with a limit of %d, compileSeccomp made %d instructions, not the list's %d", maxSeccompInsns, len(p.filter), len(list))
	}
	maxSeccompInsns = len(list) - 1
	_, err = compileSeccomp(def)
	if err == nil || !strings.Contains(err.Error(), "more than the kernel's") {
		t.Errorf("with a limit of %d: %v, want the filter refused as too long", maxSeccompInsns, err)
	}
}
