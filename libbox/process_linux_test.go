package libbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestLookPath(t *testing.T) {
	// Root bypasses permission bits except that execute needs at least one
	// x bit, which is all this test relies on: it works as root or not.
	root := t.TempDir()
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	binProg := mk("bin/prog", 0o755)
	sbinProg := mk("sbin/prog", 0o755)
	mk("usr/bin/noexec", 0o644)
	laterNoexec := mk("usr/local/bin/noexec", 0o755)
	onlyNoexec := mk("bin/data", 0o644)
	if err := os.MkdirAll(filepath.Join(root, "bin/adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "sbin/adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	mk("work/tool", 0o755)
	if err := os.Symlink(binProg, filepath.Join(root, "bin/link")); err != nil {
		t.Fatal(err)
	}

	bin, sbin := filepath.Join(root, "bin"), filepath.Join(root, "sbin")
	pathEnv := func(dirs ...string) []string {
		return []string{"FOO=bar", "PATH=" + strings.Join(dirs, ":")}
	}

	for _, tc := range []struct {
		name, file string
		env        []string
		cwd        string
		want       string
		wantErr    string
		is         error
	}{
		{name: "first in PATH", file: "prog", env: pathEnv(bin, sbin), want: binProg},
		{name: "PATH order", file: "prog", env: pathEnv(sbin, bin), want: sbinProg},
		{name: "last PATH wins", file: "prog", env: append(pathEnv(bin), "PATH="+sbin), want: sbinProg},
		{name: "symlink", file: "link", env: pathEnv(bin), want: filepath.Join(bin, "link")},
		{name: "directories are skipped", file: "adir", env: pathEnv(bin, sbin),
			wantErr: `exec: "adir": executable file not found in $PATH`, is: exec.ErrNotFound},
		{name: "missing", file: "foo", env: pathEnv(bin, sbin),
			wantErr: `exec: "foo": executable file not found in $PATH`, is: exec.ErrNotFound},
		{name: "empty name", file: "", env: pathEnv(bin),
			wantErr: `exec: "": executable file not found in $PATH`, is: exec.ErrNotFound},
		{name: "not executable is skipped for a later one", file: "noexec",
			env: pathEnv(filepath.Join(root, "usr/bin"), filepath.Join(root, "usr/local/bin")), want: laterNoexec},
		{name: "only a non-executable match", file: "data", env: pathEnv(bin, sbin),
			wantErr: `exec: "data": permission denied`, is: fs.ErrPermission},
		{name: "relative PATH entry is relative to cwd", file: "tool", env: pathEnv("work"), cwd: root,
			want: filepath.Join(root, "work/tool")},
		{name: "empty PATH entry is cwd", file: "tool", env: pathEnv(bin, ""), cwd: filepath.Join(root, "work"),
			want: filepath.Join(root, "work/tool")},
		{name: "absolute", file: binProg, env: pathEnv(), want: binProg},
		{name: "relative with slash", file: "bin/prog", env: pathEnv(sbin), cwd: root, want: binProg},
		{name: "dot slash", file: "./tool", env: nil, cwd: filepath.Join(root, "work"),
			want: filepath.Join(root, "work/tool")},
		{name: "slash path is not searched", file: "x/prog", env: pathEnv(root), cwd: "/nonexistent",
			wantErr: `exec: "x/prog": no such file or directory`, is: fs.ErrNotExist},
		{name: "absolute directory", file: bin, env: pathEnv(bin),
			wantErr: fmt.Sprintf("exec: %q: is a directory: permission denied", bin), is: fs.ErrPermission},
		{name: "absolute not executable", file: onlyNoexec, env: pathEnv(),
			wantErr: fmt.Sprintf("exec: %q: permission denied", onlyNoexec), is: fs.ErrPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lookPath(tc.file, tc.env, tc.cwd)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("lookPath(%q) = %q, want error %q", tc.file, got, tc.wantErr)
				}
				if err.Error() != tc.wantErr {
					t.Errorf("error %q, want %q", err, tc.wantErr)
				}
				if !errors.Is(err, tc.is) {
					t.Errorf("error %q is not %v", err, tc.is)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("lookPath(%q) = %q, %v; want %q", tc.file, got, err, tc.want)
			}
		})
	}
}

func TestLookPathDefaultPath(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh on this machine")
	}
	got, err := lookPath("sh", []string{"TERM=xterm"}, "/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(filepath.SplitList(defaultPath), filepath.Dir(got)) {
		t.Errorf("sh found at %s, outside the default PATH", got)
	}
	// An explicitly empty PATH means the cwd only, as for execvp.
	if _, err := lookPath("sh", []string{"PATH="}, t.TempDir()); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("PATH= found sh: %v", err)
	}
}

func TestWithHome(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\nnohome:x:1001:1001:::/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env    []string
		uid    uint32
		passwd string
		want   []string
	}{
		{[]string{"A=1"}, 1000, passwd, []string{"A=1", "HOME=/home/alice"}},
		{nil, 0, passwd, []string{"HOME=/root"}},
		{[]string{"A=1"}, 4242, passwd, []string{"A=1", "HOME=/"}},
		{nil, 1001, passwd, []string{"HOME=/"}},
		{[]string{"HOME=/custom"}, 1000, passwd, []string{"HOME=/custom"}},
		{[]string{"A=1"}, 1000, filepath.Join(dir, "missing"), []string{"A=1", "HOME=/"}},
	} {
		got := withHome(tc.env, tc.uid, tc.passwd)
		if !slices.Equal(got, tc.want) {
			t.Errorf("withHome(%q, %d) = %q, want %q", tc.env, tc.uid, got, tc.want)
		}
	}
	// The caller's slice is never written through.
	env := make([]string, 1, 4)
	env[0] = "A=1"
	_ = withHome(env, 0, passwd)
	if extended := env[:2]; extended[1] != "" {
		t.Errorf("withHome wrote into the caller's array: %q", extended)
	}
}

func TestCheckMapped(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "uid_map")
	if err := os.WriteFile(m, []byte("         0     100000      65536\n     65536       1000          1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{0, 1000, 65535, 65536} {
		if err := checkMapped("uid", id, m, false); err != nil {
			t.Errorf("uid %d: %v", id, err)
		}
	}
	err := checkMapped("uid", 65537, m, false)
	if err == nil || err.Error() != "uid 65537 is not mapped in the container's user namespace" {
		t.Errorf("unmapped uid: %v", err)
	}
	err = checkMapped("gid", 70000, m, true)
	if err == nil || !strings.HasPrefix(err.Error(), "gid 70000 is not mapped in the container's user namespace: a rootless container") {
		t.Errorf("unmapped rootless gid: %v", err)
	}
	if err := checkMapped("uid", 7, filepath.Join(dir, "missing"), false); err != nil {
		t.Errorf("a missing map file must leave the decision to the kernel: %v", err)
	}
}

func TestRlimitName(t *testing.T) {
	for typ, want := range map[int]string{
		unix.RLIMIT_NOFILE: "RLIMIT_NOFILE", unix.RLIMIT_CPU: "RLIMIT_CPU", 13: "RLIMIT_NICE",
		unix.RLIMIT_RTTIME: "RLIMIT_RTTIME", 99: "rlimit 99",
	} {
		if got := rlimitName(typ); got != want {
			t.Errorf("rlimitName(%d) = %q, want %q", typ, got, want)
		}
	}
	if rlimitValue(unix.RLIM_INFINITY) != "unlimited" || rlimitValue(42) != "42" {
		t.Error("rlimitValue")
	}
}

func TestSetDumpable(t *testing.T) {
	defer func() {
		if err := setDumpable(true); err != nil {
			t.Fatal(err)
		}
	}()
	for _, want := range []bool{false, true} {
		if err := setDumpable(want); err != nil {
			t.Fatal(err)
		}
		got, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if (got == 1) != want {
			t.Errorf("dumpable = %d after setDumpable(%v)", got, want)
		}
	}
}

func TestCloexecFromProc(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC on purpose
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// Only fds from fd up are touched; the test's own fds above it getting
	// CLOEXEC is harmless.
	if err := cloexecFromProc(fd); err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("fd %d has no FD_CLOEXEC", fd)
	}
}

// The rest runs setupProcess for real, in a re-executed test binary that
// then executes busybox to report what the program ends up with.

const setupHelperEnv = "NANOBOX_TEST_SETUP_PROCESS"

type setupHelperSpec struct {
	Process  Process
	Rootless bool
	Keep     int
	// LeakFD opens a descriptor without O_CLOEXEC before closeExtraFDs.
	LeakFD bool
}

func init() {
	spec := os.Getenv(setupHelperEnv)
	if spec == "" {
		return
	}
	// The main goroutine runs package init locked to the main thread; lock
	// anyway, as the container's init does.
	runtime.LockOSThread()
	fail := func(err error) {
		fmt.Printf("ERR: %v\n", err)
		os.Exit(3)
	}
	var s setupHelperSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fail(err)
	}
	if s.LeakFD {
		if _, err := unix.Open("/dev/null", unix.O_RDONLY, 0); err != nil {
			fail(err)
		}
	}
	env, _, err := setupProcess(&s.Process, s.Rootless, false)
	if err != nil {
		fail(err)
	}
	path, err := lookPath(s.Process.Args[0], env, "/")
	if err != nil {
		fail(err)
	}
	if err := closeExtraFDs(s.Keep); err != nil {
		fail(err)
	}
	fail(finalExec(path, s.Process.Args, env))
}

func requireRootAndBusybox(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: setupProcess changes uid, groups and capabilities")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("needs /bin/busybox (Debian package busybox-static) to report from after execve")
	}
}

// reportArgs make the helper print its status, limits, oom_score_adj and
// environment after execve.
var reportArgs = []string{"busybox", "sh", "-c",
	"busybox cat /proc/self/status /proc/self/limits; echo oom_score_adj: $(busybox cat /proc/self/oom_score_adj); busybox env"}

// runHelper runs setupProcess in a child with spec and returns its output
// and whether it failed in the helper (output then starts with "ERR: ").
func runHelper(t *testing.T, spec setupHelperSpec, attr *syscall.SysProcAttr, extra ...*os.File) string {
	t.Helper()
	if spec.Process.Args == nil {
		spec.Process.Args = reportArgs
	}
	if spec.Process.Env == nil {
		spec.Process.Env = []string{"PATH=/bin:/usr/bin"}
	}
	if spec.Process.Cwd == "" {
		spec.Process.Cwd = "/"
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), setupHelperEnv+"="+string(b))
	cmd.Dir = "/"
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = extra
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("helper: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
		}
	}
	return string(out)
}

// statusOf parses the "Key:\tvalue" lines of /proc/self/status, plus the
// "Max open files" line of /proc/self/limits and HOME from the environment.
func statusOf(out string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(line, "Max open files"); ok {
			m["Max open files"] = strings.Join(strings.Fields(v), " ")
			continue
		}
		if v, ok := strings.CutPrefix(line, "HOME="); ok {
			m["HOME"] = strings.TrimSpace(v)
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			if _, dup := m[k]; !dup {
				m[k] = strings.Join(strings.Fields(v), " ")
			}
		}
	}
	return m
}

func hexMask(names ...string) string {
	return fmt.Sprintf("%016x", uint64(mask(names...)))
}

func wantStatus(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

func holdsCapability(t *testing.T, c int) bool {
	t.Helper()
	s, err := capget()
	if err != nil {
		t.Fatal(err)
	}
	return s.effective.has(c)
}

func TestSetupProcessUnprivilegedUser(t *testing.T) {
	requireRootAndBusybox(t)
	umask := uint32(0o027)
	oom := 100
	out := runHelper(t, setupHelperSpec{Process: Process{
		User: User{UID: 1000, GID: 1000, AdditionalGids: []uint32{10, 20}, Umask: &umask},
		Capabilities: &Capabilities{
			Bounding:    []string{"CAP_KILL", "CAP_NET_BIND_SERVICE"},
			Effective:   []string{"CAP_NET_BIND_SERVICE"},
			Permitted:   []string{"CAP_KILL", "CAP_NET_BIND_SERVICE"},
			Inheritable: []string{"CAP_NET_BIND_SERVICE"},
			Ambient:     []string{"CAP_NET_BIND_SERVICE"},
		},
		Rlimits:         []Rlimit{{Type: unix.RLIMIT_NOFILE, Soft: 1024, Hard: 2048}},
		NoNewPrivileges: true,
		OOMScoreAdj:     &oom,
		Env:             []string{"PATH=/bin:/usr/bin", "HOME=/work"},
	}}, nil)
	st := statusOf(out)
	// After execve a non-root program keeps only its ambient set in
	// permitted and effective; the bounding and inheritable sets stay.
	nbs := hexMask("CAP_NET_BIND_SERVICE")
	wantStatus(t, st, map[string]string{
		"Uid": "1000 1000 1000 1000", "Gid": "1000 1000 1000 1000", "Groups": "10 20",
		"CapBnd": hexMask("CAP_KILL", "CAP_NET_BIND_SERVICE"),
		"CapInh": nbs, "CapPrm": nbs, "CapEff": nbs, "CapAmb": nbs,
		"NoNewPrivs": "1", "Umask": "0027",
		"Max open files": "1024 2048 files",
		"oom_score_adj":  "100",
		"HOME":           "/work",
	})
	if t.Failed() {
		t.Logf("helper output:\n%s", out)
	}
}

func TestSetupProcessRootDefaults(t *testing.T) {
	requireRootAndBusybox(t)
	out := runHelper(t, setupHelperSpec{Process: Process{}}, nil)
	st := statusOf(out)
	// No capabilities field: none at all (runc's behaviour).
	def := hexMask()
	wantStatus(t, st, map[string]string{
		"Uid": "0 0 0 0", "Gid": "0 0 0 0", "Groups": "",
		"CapBnd": def, "CapPrm": def, "CapEff": def, "CapInh": hexMask(), "CapAmb": hexMask(),
		"NoNewPrivs": "0",
		"HOME":       homeOf(t, 0),
	})
	if t.Failed() {
		t.Logf("helper output:\n%s", out)
	}
}

func homeOf(t *testing.T, uid uint32) string {
	t.Helper()
	for _, kv := range withHome(nil, uid, "/etc/passwd") {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	t.Fatal("withHome set no HOME")
	return ""
}

func TestSetupProcessNoCapabilities(t *testing.T) {
	requireRootAndBusybox(t)
	out := runHelper(t, setupHelperSpec{Process: Process{
		User:         User{UID: 12345, GID: 12345},
		Capabilities: &Capabilities{},
	}}, nil)
	wantStatus(t, statusOf(out), map[string]string{
		"Uid": "12345 12345 12345 12345", "Gid": "12345 12345 12345 12345", "Groups": "",
		"CapBnd": hexMask(), "CapPrm": hexMask(), "CapEff": hexMask(), "CapAmb": hexMask(),
		"HOME": "/",
	})
	if t.Failed() {
		t.Logf("helper output:\n%s", out)
	}
}

// skipIf returns reason when cond holds, "" otherwise.
func skipIf(cond bool, reason string) string {
	if cond {
		return reason
	}
	return ""
}

func TestSetupProcessErrors(t *testing.T) {
	requireRootAndBusybox(t)
	var nofile unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	canRaise := holdsCapability(t, unix.CAP_SYS_RESOURCE)
	for _, tc := range []struct {
		name string
		p    Process
		want string
		skip string
	}{
		{
			name: "rlimit above the hard limit",
			p:    Process{Rlimits: []Rlimit{{Type: unix.RLIMIT_NOFILE, Soft: nofile.Max + 1, Hard: nofile.Max + 1}}},
			want: fmt.Sprintf("ERR: setrlimit RLIMIT_NOFILE %d/%d: operation not permitted: the hard limit cannot be raised without CAP_SYS_RESOURCE; lower process.rlimits",
				nofile.Max+1, nofile.Max+1),
			skip: skipIf(canRaise || nofile.Max == unix.RLIM_INFINITY, "the test runs with CAP_SYS_RESOURCE or an unlimited hard RLIMIT_NOFILE"),
		},
		{
			name: "soft above hard",
			p:    Process{Rlimits: []Rlimit{{Type: unix.RLIMIT_NOFILE, Soft: 100, Hard: 50}}},
			want: "ERR: setrlimit RLIMIT_NOFILE 100/50: invalid argument: the soft limit is above the hard limit",
		},
		{
			name: "lowering oom_score_adj",
			p:    Process{OOMScoreAdj: func() *int { v := -900; return &v }()},
			want: "ERR: set oom_score_adj: write -900: permission denied: lowering oom_score_adj needs CAP_SYS_RESOURCE; raise or unset process.oomScoreAdj",
			skip: skipIf(canRaise, "the test runs with CAP_SYS_RESOURCE, which may lower oom_score_adj"),
		},
		{
			name: "inheritable outside the bounding set",
			p: Process{User: User{UID: 1000, GID: 1000}, Capabilities: &Capabilities{
				Bounding:    []string{"CAP_KILL"},
				Permitted:   []string{"CAP_NET_BIND_SERVICE"},
				Inheritable: []string{"CAP_NET_BIND_SERVICE"},
				Ambient:     []string{"CAP_NET_BIND_SERVICE"},
			}},
			want: "ERR: set capabilities: capset: operation not permitted: inheritable capabilities CAP_NET_BIND_SERVICE are not in the bounding set",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			out := strings.TrimSpace(runHelper(t, setupHelperSpec{Process: tc.p}, nil))
			if out != tc.want {
				t.Errorf("got  %q\nwant %q", out, tc.want)
			}
		})
	}
}

// A capability the runtime does not hold is left out with a warning (the
// runtime spec: cannot be granted, SHOULD NOT fail), not a failed capset.
func TestSetupProcessCapabilityTheRuntimeLacks(t *testing.T) {
	requireRootAndBusybox(t)
	if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_RESOURCE, 0, 0, 0); err == nil {
		if old, err := capget(); err == nil && old.permitted.has(unix.CAP_SYS_RESOURCE) {
			t.Skip("the test runs with CAP_SYS_RESOURCE, so granting it works")
		}
	}
	out := runHelper(t, setupHelperSpec{Process: Process{Capabilities: &Capabilities{
		Bounding:  []string{"CAP_SYS_RESOURCE", "CAP_KILL"},
		Permitted: []string{"CAP_SYS_RESOURCE", "CAP_KILL"},
		Effective: []string{"CAP_SYS_RESOURCE", "CAP_KILL"},
	}}}, nil)
	if strings.HasPrefix(out, "ERR: ") {
		t.Fatalf("setupProcess failed: %s", out)
	}
	// uid 0 execs busybox: permitted = bounding after execve, which kept
	// CAP_KILL (and CAP_SYS_RESOURCE, which nothing could grant).
	if !strings.Contains(out, "CapPrm:\t0000000000000020\n") {
		t.Errorf("CapPrm is not CAP_KILL alone:\n%s", out)
	}
}

// userNSAttr puts the helper in a new user namespace, as root, where only
// uid 0 and gids 0..65535 are mapped and setgroups is denied: what a
// rootless container without /etc/subuid ranges sees, plus a gid range to
// show the deny rule apart from the mapping rule.
func userNSAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
	}
}

func requireUserNS(t *testing.T) {
	t.Helper()
	cmd := exec.Command("/bin/busybox", "true")
	cmd.SysProcAttr = userNSAttr()
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot make a user namespace here: %v", err)
	}
}

func TestSetupProcessUserNamespace(t *testing.T) {
	requireRootAndBusybox(t)
	requireUserNS(t)
	for _, tc := range []struct {
		name string
		user User
		want string
	}{
		{"unmapped uid", User{UID: 1000}, "ERR: set user: uid 1000 is not mapped in the container's user namespace: a rootless container maps only the caller's own id unless /etc/subuid and /etc/subgid grant a range"},
		{"unmapped gid", User{GID: 70000}, "ERR: set user: gid 70000 is not mapped in the container's user namespace: a rootless container maps only the caller's own id unless /etc/subuid and /etc/subgid grant a range"},
		{"groups denied", User{AdditionalGids: []uint32{10}}, "ERR: set user: additional gids [10] cannot be set: setgroups is denied in this user namespace (rootless with a single gid mapped); map a gid range (newgidmap with /etc/subgid) or drop process.user.additionalGids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := strings.TrimSpace(runHelper(t, setupHelperSpec{Process: Process{User: tc.user}, Rootless: true}, userNSAttr()))
			if out != tc.want {
				t.Errorf("got  %q\nwant %q", out, tc.want)
			}
		})
	}
	t.Run("no additional gids", func(t *testing.T) {
		out := runHelper(t, setupHelperSpec{Process: Process{User: User{GID: 5}}, Rootless: true}, userNSAttr())
		wantStatus(t, statusOf(out), map[string]string{"Uid": "0 0 0 0", "Gid": "5 5 5 5"})
		if t.Failed() {
			t.Logf("helper output:\n%s", out)
		}
	})
}

func TestCloseExtraFDs(t *testing.T) {
	requireRootAndBusybox(t)
	for _, keep := range []int{0, 1, 2} {
		t.Run("keep "+strconv.Itoa(keep), func(t *testing.T) {
			var extra []*os.File
			for range keep + 1 { // one more than kept: it must not leak
				f, err := os.Open("/dev/null")
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				extra = append(extra, f)
			}
			out := runHelper(t, setupHelperSpec{
				Process: Process{Args: []string{"busybox", "ls", "/proc/self/fd"}},
				Keep:    keep,
				LeakFD:  true,
			}, nil, extra...)
			if strings.HasPrefix(out, "ERR: ") {
				t.Fatal(out)
			}
			// 0-2, the kept ones, and the directory ls itself has open,
			// which takes the lowest free number.
			var want []string
			for fd := range 3 + keep + 1 {
				want = append(want, strconv.Itoa(fd))
			}
			got := strings.Fields(out)
			slices.SortFunc(got, func(a, b string) int {
				x, _ := strconv.Atoi(a)
				y, _ := strconv.Atoi(b)
				return x - y
			})
			if !slices.Equal(got, want) {
				t.Errorf("open fds after execve: %v, want %v", got, want)
			}
		})
	}
}

func TestDedupEnv(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"A=1", "B=2"}, []string{"A=1", "B=2"}},
		{[]string{"TERM=xterm", "PATH=/bin", "TERM=dumb", "A=1", "A=2", "A=3"}, []string{"TERM=dumb", "PATH=/bin", "A=3"}},
		{[]string{"A=", "A=x=y"}, []string{"A=x=y"}},
	} {
		if got := dedupEnv(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("dedupEnv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
