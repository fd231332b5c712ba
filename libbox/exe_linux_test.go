package libbox

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The last-resort copy must be sealed: no write, no resize, no new seals,
// whatever the caller's privileges (CVE-2019-5736).
func TestMemfdCopyIsSealed(t *testing.T) {
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	f, err := memfdCopy(self)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var a, b unix.Stat_t
	if err := unix.Fstat(int(self.Fd()), &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstat(int(f.Fd()), &b); err != nil {
		t.Fatal(err)
	}
	if a.Size != b.Size {
		t.Fatalf("copy is %d bytes, binary %d", b.Size, a.Size)
	}
	// Reopened for writing through /proc, as an attacker would.
	w, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), os.O_WRONLY, 0)
	if err == nil {
		_, err = w.Write([]byte("x"))
		w.Close()
	}
	if !errors.Is(err, unix.EPERM) {
		t.Fatalf("write to the sealed copy: %v, want EPERM", err)
	}
	if err := unix.Ftruncate(int(f.Fd()), 0); !errors.Is(err, unix.EPERM) {
		t.Fatalf("truncate of the sealed copy: %v, want EPERM", err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, 0); !errors.Is(err, unix.EPERM) {
		t.Fatalf("adding seals: %v, want EPERM (F_SEAL_SEAL)", err)
	}
}

// A sandbox's init keeps the Go runtime's huge pages off (GODEBUG
// disablethp=1): its memory is charged to the sandbox, whose report gives
// the peak. Only a Config that asks (InitHugePages) lets them be.
func TestInitHugePagesOnlyWhenAsked(t *testing.T) {
	presets := map[string]Options{
		"defaults":       {},
		"agent-executor": AgentExecutor(t.TempDir()),
		"code-judge":     CodeJudge(t.TempDir()),
		"data-analysis":  DataAnalysis(t.TempDir(), t.TempDir()),
	}
	for name, opts := range presets {
		cfg, _, err := ContainerConfig(opts, "", []string{"/bin/true"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.InitHugePages {
			t.Errorf("%s: the sandbox's Config asks for huge pages in init", name)
		}
	}
	for _, tt := range []struct {
		hugePages, disabled bool
	}{{false, true}, {true, false}} {
		env := initGODEBUG(tt.hugePages)
		if !strings.HasPrefix(env, "GODEBUG=") {
			t.Errorf("initGODEBUG(%v) = %q, not a GODEBUG setting", tt.hugePages, env)
		}
		if got := slices.Contains(strings.Split(strings.TrimPrefix(env, "GODEBUG="), ","), "disablethp=1"); got != tt.disabled {
			t.Errorf("initGODEBUG(%v) = %q: disablethp=1 present %v, want %v", tt.hugePages, env, got, tt.disabled)
		}
		// nsenter/thp.c asks only when NANOBOX_THP=1 is in the
		// environment, which init's is made here, not inherited.
		full := initEnv(3, 4, tt.hugePages)
		if got := slices.Contains(full, "NANOBOX_THP=1"); got == tt.disabled {
			t.Errorf("initEnv(hugePages %v) = %q: NANOBOX_THP=1 present %v", tt.hugePages, full, got)
		}
		if !slices.Contains(full, env) || !slices.Contains(full, initGOMAXPROCS) {
			t.Errorf("initEnv(hugePages %v) = %q: no %q or %q", tt.hugePages, full, env, initGOMAXPROCS)
		}
	}
	// The C side reads the variables by those names.
	src, err := os.ReadFile("nsenter/thp.c")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{envHugePages, envPrefault} {
		if !strings.Contains(string(src), strconv.Quote(name)) {
			t.Errorf("nsenter/thp.c does not read %s", name)
		}
	}
}

// The runtime's NANOBOX_PREFAULT reaches the container processes it
// starts, as it is; without it they have none.
func TestInitEnvPassesPrefault(t *testing.T) {
	for _, v := range []string{"0", "1"} {
		t.Setenv(envPrefault, v)
		if env := initEnv(3, 4, false); !slices.Contains(env, envPrefault+"="+v) {
			t.Errorf("NANOBOX_PREFAULT=%s: init's environment %q", v, env)
		}
	}
	t.Setenv(envPrefault, "")
	os.Unsetenv(envPrefault)
	for _, kv := range initEnv(3, 4, true) {
		if strings.HasPrefix(kv, envPrefault+"=") {
			t.Errorf("no NANOBOX_PREFAULT in the runtime: init's environment has %q", kv)
		}
	}
}

// nsenter/thp.c keeps huge pages off in the binary's processes that live
// in a sandbox with an environment not the runtime's, by their argv[0]
// (the C side cannot see the Go names): a renamed argv[0] must be renamed
// there too. The network supervisor, whose environment is the runtime's,
// has GODEBUG's switch instead.
func TestHugePagesExclusionsNameTheProcesses(t *testing.T) {
	src, err := os.ReadFile("nsenter/thp.c")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{waiterArgv0, resumeArgv0, confineArgv0} {
		if !strings.Contains(string(src), strconv.Quote(name)) {
			t.Errorf("nsenter/thp.c does not name %q", name)
		}
	}
	if env := netSupervisorEnv([]byte("{}")); !slices.Contains(env, "GODEBUG=disablethp=1") {
		t.Errorf("the network supervisor's environment %q lets it have huge pages", env)
	}
}
