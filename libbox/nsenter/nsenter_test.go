package nsenter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// envHelper, when set, names an already built helper: the test binary was
// re-executed (as an unprivileged user) by TestUserNSUnprivileged.
const envHelper = "NSENTER_TEST_HELPER"

var (
	helperPath string // testdata/helper, built by TestMain
	testDir    string // world-readable temporary directory holding it
)

func TestMain(m *testing.M) {
	if p := os.Getenv(envHelper); p != "" {
		helperPath, testDir = p, filepath.Dir(p)
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "nsenter-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The helper is also run as an unprivileged user.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir, helperPath = dir, filepath.Join(dir, "helper")
	out, err := exec.Command("go", "build", "-o", helperPath, "./testdata/helper").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build helper: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// stage is the helper as started by a runtime: the nsenter stage until it
// has forked init, then init.
type stage struct {
	t       *testing.T
	cmd     *exec.Cmd
	sock    *os.File // our end of the init socket
	out     *os.File // read end of the helper's stdout and stderr
	initPid int      // the forked init, once known; reaped by waitInit
}

func startStage(t *testing.T, withEnv bool) *stage {
	t.Helper()
	return startStageWith(t, withEnv)
}

// startStageWith is startStage with extra files for the helper, from fd 4
// up (3 is the init socket).
func startStageWith(t *testing.T, withEnv bool, extra ...*os.File) *stage {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Non-blocking on our side only, so that read deadlines work.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	s := &stage{t: t, sock: os.NewFile(uintptr(fds[0]), "init-sock")}
	child := os.NewFile(uintptr(fds[1]), "init-sock-child")
	defer child.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s.out = r
	s.cmd = exec.Command(helperPath, "init")
	s.cmd.Env = os.Environ()
	if withEnv {
		s.cmd.Env = append(s.cmd.Env, EnvInitPipe+"=3")
	}
	s.cmd.ExtraFiles = append([]*os.File{child}, extra...)
	// *os.File, so that Wait does not wait for init to close its copy.
	s.cmd.Stdout, s.cmd.Stderr = w, w
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.initPid > 0 {
			_ = unix.Kill(s.initPid, unix.SIGKILL)
			_, _ = unix.Wait4(s.initPid, nil, 0, nil)
		}
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.sock.Close()
		s.out.Close()
	})
	return s
}

func (s *stage) send(msg []byte) {
	s.t.Helper()
	if _, err := s.sock.Write(msg); err != nil {
		s.t.Fatalf("send %q: %v", msg, err)
	}
}

// recv returns the next message, and false at EOF.
func (s *stage) recv() (string, bool) {
	s.t.Helper()
	buf := make([]byte, 1<<16)
	_ = s.sock.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := s.sock.Read(buf)
	if errors.Is(err, io.EOF) {
		return "", false
	}
	if err != nil {
		s.t.Fatalf("recv: %v", err)
	}
	return string(buf[:n]), true
}

// waitStage reaps the process that was started and returns its exit code.
func (s *stage) waitStage() int {
	s.t.Helper()
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		s.t.Fatalf("wait: %v", err)
	}
	return s.cmd.ProcessState.ExitCode()
}

// output reads everything the helper and init wrote, once both are gone.
func (s *stage) output() string {
	s.t.Helper()
	_ = s.out.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(s.out)
	if err != nil {
		s.t.Fatalf("read output: %v (so far %q)", err, b)
	}
	return string(b)
}

// run sends the bootstrap message and plays the parent until the pid
// arrives; usermap writes the id maps for the stage's pid. It returns the
// error text instead when the child sends one.
func (s *stage) run(msg []byte, usermap func(pid int)) (errText string) {
	s.t.Helper()
	s.send(msg)
	for {
		m, ok := s.recv()
		if !ok {
			s.t.Fatalf("init socket closed before pid (stage exit %d): %s", s.waitStage(), s.output())
		}
		kind, val := ParseReply([]byte(m))
		switch kind {
		case MsgUsermap:
			if usermap == nil {
				s.t.Fatalf("unexpected %q", m)
			}
			usermap(s.cmd.Process.Pid)
			s.send([]byte(MsgUsermapOK))
		case MsgPid:
			pid, err := strconv.Atoi(val)
			if err != nil || pid <= 0 {
				s.t.Fatalf("bad pid message %q", m)
			}
			s.initPid = pid
			return ""
		case MsgError:
			return val
		default:
			s.t.Fatalf("unexpected message %q", m)
		}
	}
}

// finish checks that the stage exits 0 and init runs to completion, and
// returns init's report.
func (s *stage) finish() map[string]string {
	s.t.Helper()
	if code := s.waitStage(); code != 0 {
		s.t.Fatalf("stage exited %d", code)
	}
	// "pid=" must come before anything init sends.
	if m, ok := s.recv(); !ok || m != "hello from init" {
		s.t.Fatalf("after pid: got %q (ok=%v), want init's hello", m, ok)
	}
	var ws unix.WaitStatus
	pid := s.initPid
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		s.t.Fatalf("wait4 init %d (not our child?): %v", pid, err)
	}
	s.initPid = 0
	out := s.output()
	if !ws.Exited() || ws.ExitStatus() != 0 {
		s.t.Fatalf("init %d: %v\n%s", pid, ws, out)
	}
	r := parseReport(out)
	if r["initpipe"] != "open cloexec=false" {
		s.t.Errorf("init socket in init: %q, want open and unchanged", r["initpipe"])
	}
	if r["args"] != "init" {
		s.t.Errorf("args %q, want init", r["args"])
	}
	return r
}

func parseReport(out string) map[string]string {
	r := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			r[k] = v
		}
	}
	return r
}

func nsLink(t *testing.T, pid int, kind string) string {
	t.Helper()
	l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// expectFailure checks that the stage reported an error containing every
// one of want and exited 1.
func (s *stage) expectFailure(msg []byte, want ...string) {
	s.t.Helper()
	errText := s.run(msg, nil)
	if errText == "" {
		s.t.Fatalf("got pid %d, want an error", s.initPid)
	}
	for _, w := range want {
		if !strings.Contains(errText, w) {
			s.t.Errorf("error %q does not contain %q", errText, w)
		}
	}
	if code := s.waitStage(); code != 1 {
		s.t.Errorf("stage exited %d, want 1", code)
	}
}

func TestNoEnv(t *testing.T) {
	s := startStage(t, false)
	code := s.waitStage()
	out := s.output()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	r := parseReport(out)
	if r["pid"] != strconv.Itoa(s.cmd.Process.Pid) {
		t.Errorf("pid %s, want %d: the constructor must do nothing", r["pid"], s.cmd.Process.Pid)
	}
	if _, ok := r["initpipe"]; ok {
		t.Errorf("initpipe reported without the variable: %s", out)
	}
}

func TestNoNamespaces(t *testing.T) {
	s := startStage(t, true)
	if e := s.run(BootstrapMessage(0, nil), nil); e != "" {
		t.Fatal(e)
	}
	initPid := s.initPid
	r := s.finish()
	if r["pid"] != strconv.Itoa(initPid) || initPid == s.cmd.Process.Pid {
		t.Errorf("init reports pid %s, the stage sent %d, the stage is %d", r["pid"], initPid, s.cmd.Process.Pid)
	}
	if r["ppid"] != strconv.Itoa(os.Getpid()) {
		t.Errorf("init's parent %s, want us (%d): CLONE_PARENT", r["ppid"], os.Getpid())
	}
	for _, ns := range []string{"user", "mnt", "pid", "net", "uts", "ipc"} {
		if want := nsLink(t, os.Getpid(), ns); r["ns."+ns] != want {
			t.Errorf("ns %s: %s, want ours %s", ns, r["ns."+ns], want)
		}
	}
	if r["dumpable"] != "1" {
		t.Errorf("dumpable %s, want 1 when nothing is joined", r["dumpable"])
	}
}

// TestNewNamespacesRoot creates every kind but user, as root.
func TestNewNamespacesRoot(t *testing.T) {
	requireRoot(t)
	flags := uintptr(unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWNET |
		unix.CLONE_NEWPID | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME)
	s := startStage(t, true)
	if e := s.run(BootstrapMessage(flags, nil), nil); e != "" {
		t.Fatal(e)
	}
	r := s.finish()
	if r["pid"] != "1" || r["ppid"] != "0" || r["uid"] != "0" {
		t.Errorf("pid %s ppid %s uid %s, want 1 0 0", r["pid"], r["ppid"], r["uid"])
	}
	for _, ns := range []string{"mnt", "pid", "net", "uts", "ipc", "cgroup", "time"} {
		if ours := nsLink(t, os.Getpid(), ns); r["ns."+ns] == ours || !strings.HasPrefix(r["ns."+ns], ns+":[") {
			t.Errorf("ns %s: %s, want a new one (ours %s)", ns, r["ns."+ns], ours)
		}
	}
	if ours := nsLink(t, os.Getpid(), "user"); r["ns.user"] != ours {
		t.Errorf("user ns %s, want ours %s", r["ns.user"], ours)
	}
}

// A new time namespace gets its clock offsets before init is forked into it.
func TestTimeOffsets(t *testing.T) {
	requireRoot(t)
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		t.Fatal(err)
	}
	const day = 86400
	s := startStage(t, true)
	msg := BootstrapMessage(unix.CLONE_NEWTIME, nil, TimeOffset{Clock: "boottime", Secs: 10 * day}, TimeOffset{Clock: "monotonic", Secs: day, Nanosecs: 5})
	if e := s.run(msg, nil); e != "" {
		t.Fatal(e)
	}
	r := s.finish()
	got, err := strconv.ParseInt(r["boottime"], 10, 64)
	if err != nil || got < ts.Sec+10*day || got > ts.Sec+10*day+600 {
		t.Errorf("boottime in the namespace %q, want about %d", r["boottime"], ts.Sec+10*day)
	}

	// Offsets without a new time namespace are an error, not ignored.
	s = startStage(t, true)
	e := s.run(BootstrapMessage(unix.CLONE_NEWUTS, nil, TimeOffset{Clock: "boottime", Secs: day}), nil)
	if !strings.Contains(e, "time offsets without a new time namespace") {
		t.Errorf("offsets without a time namespace: %q", e)
	}
}

// userNSFlags is the brief's case: user, pid, uts and mount namespaces.
const userNSFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWUTS | unix.CLONE_NEWNS

func testUserNS(t *testing.T, usermap func(pid int), wantMap string) {
	s := startStage(t, true)
	if e := s.run(BootstrapMessage(userNSFlags, nil), usermap); e != "" {
		t.Fatal(e)
	}
	r := s.finish()
	t.Logf("init saw: %v", r)
	if r["pid"] != "1" || r["uid"] != "0" || r["gid"] != "0" {
		t.Errorf("pid %s uid %s gid %s, want 1 0 0", r["pid"], r["uid"], r["gid"])
	}
	if r["uid_map"] != wantMap || r["gid_map"] != wantMap {
		t.Errorf("maps %q %q, want %q", r["uid_map"], r["gid_map"], wantMap)
	}
	for _, ns := range []string{"user", "mnt", "pid", "uts"} {
		if ours := nsLink(t, os.Getpid(), ns); r["ns."+ns] == ours {
			t.Errorf("ns %s: %s is ours, want a new one", ns, ours)
		}
	}
	if ours := nsLink(t, os.Getpid(), "net"); r["ns.net"] != ours {
		t.Errorf("net ns %s, want ours %s", r["ns.net"], ours)
	}
	if h, _ := os.Hostname(); r["hostname"] != h {
		t.Errorf("hostname %q, want a copy of ours %q", r["hostname"], h)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0); err != nil {
		t.Fatal(err)
	}
}

func TestUserNSRoot(t *testing.T) {
	requireRoot(t)
	const m = "0 100000 65536"
	testUserNS(t, func(pid int) {
		writeFile(t, fmt.Sprintf("/proc/%d/uid_map", pid), m)
		writeFile(t, fmt.Sprintf("/proc/%d/gid_map", pid), m)
	}, m)
}

// TestUserNSUnprivileged runs the user namespace case as an unprivileged
// user: directly when not root, else by re-running this test binary as
// nobody (setpriv).
func TestUserNSUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		uid, gid := os.Geteuid(), os.Getegid()
		testUserNS(t, func(pid int) {
			writeFile(t, fmt.Sprintf("/proc/%d/setgroups", pid), "deny")
			writeFile(t, fmt.Sprintf("/proc/%d/uid_map", pid), fmt.Sprintf("0 %d 1", uid))
			writeFile(t, fmt.Sprintf("/proc/%d/gid_map", pid), fmt.Sprintf("0 %d 1", gid))
		}, "0 "+strconv.Itoa(uid)+" 1")
		return
	}
	if os.Getenv(envHelper) != "" {
		t.Fatal("re-executed test is still root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not found: cannot drop to an unprivileged user")
	}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("user namespaces are disabled (user.max_user_namespaces=0)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(testDir, "nsenter.test")
	if err := os.WriteFile(copyPath, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		copyPath, "-test.run=^TestUserNSUnprivileged$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"="+helperPath)
	cmd.Dir = testDir
	out, err := cmd.CombinedOutput()
	t.Logf("as uid 65534:\n%s", out)
	if err != nil {
		t.Fatalf("as uid 65534: %v", err)
	}
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Skip("skipped as uid 65534")
	}
	if !bytes.Contains(out, []byte("--- PASS: TestUserNSUnprivileged")) {
		t.Fatal("the unprivileged run did not pass")
	}
}

// sleeper starts a process in new namespaces of the given kinds, to join.
func sleeper(t *testing.T, flags uintptr, userMap bool) int {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	if userMap {
		m := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 100000, Size: 65536}}
		cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings = m, m
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

func TestJoinNet(t *testing.T) {
	requireRoot(t)
	pid := sleeper(t, unix.CLONE_NEWNET, false)
	s := startStage(t, true)
	path := fmt.Sprintf("/proc/%d/ns/net", pid)
	if e := s.run(BootstrapMessage(0, []Join{{"net", path}}), nil); e != "" {
		t.Fatal(e)
	}
	r := s.finish()
	if want := nsLink(t, pid, "net"); r["ns.net"] != want || want == nsLink(t, os.Getpid(), "net") {
		t.Errorf("net ns %s, want the sleeper's %s", r["ns.net"], want)
	}
	if r["dumpable"] != "0" {
		t.Errorf("dumpable %s after joining, want 0", r["dumpable"])
	}
}

// TestJoinAll joins a user namespace and every kind owned by it.
func TestJoinAll(t *testing.T) {
	requireRoot(t)
	kinds := []string{"user", "mnt", "pid", "net", "uts", "ipc", "cgroup"}
	pid := sleeper(t, unix.CLONE_NEWUSER|unix.CLONE_NEWNS|unix.CLONE_NEWPID|unix.CLONE_NEWNET|
		unix.CLONE_NEWUTS|unix.CLONE_NEWIPC|unix.CLONE_NEWCGROUP, true)
	var joins []Join
	for _, k := range kinds {
		joins = append(joins, Join{k, fmt.Sprintf("/proc/%d/ns/%s", pid, k)})
	}
	s := startStage(t, true)
	if e := s.run(BootstrapMessage(0, joins), nil); e != "" {
		t.Fatal(e)
	}
	r := s.finish()
	for _, k := range kinds {
		if want := nsLink(t, pid, k); r["ns."+k] != want {
			t.Errorf("ns %s: %s, want the sleeper's %s", k, r["ns."+k], want)
		}
	}
	// The sleeper is pid 1 there; we are not visible.
	if r["pid"] == "1" || r["ppid"] != "0" || r["uid"] != "0" || r["uid_map"] != "0 100000 65536" {
		t.Errorf("pid %s ppid %s uid %s uid_map %q", r["pid"], r["ppid"], r["uid"], r["uid_map"])
	}
}

// TestJoinAndNewUser joins a network namespace and creates a user namespace:
// the stage is dumpable while the parent writes its maps.
func TestJoinAndNewUser(t *testing.T) {
	requireRoot(t)
	pid := sleeper(t, unix.CLONE_NEWNET, false)
	s := startStage(t, true)
	msg := BootstrapMessage(unix.CLONE_NEWUSER|unix.CLONE_NEWUTS, []Join{{"net", fmt.Sprintf("/proc/%d/ns/net", pid)}})
	e := s.run(msg, func(p int) {
		writeFile(t, fmt.Sprintf("/proc/%d/uid_map", p), "0 100000 65536")
		writeFile(t, fmt.Sprintf("/proc/%d/gid_map", p), "0 100000 65536")
	})
	if e != "" {
		t.Fatal(e)
	}
	r := s.finish()
	if r["ns.net"] != nsLink(t, pid, "net") || r["uid"] != "0" || r["ns.user"] == nsLink(t, os.Getpid(), "user") {
		t.Errorf("report %v", r)
	}
}

func TestJoinErrors(t *testing.T) {
	self := os.Getpid()
	for _, tc := range []struct {
		name string
		join Join
		want []string
	}{
		{"missing", Join{"net", "/nonexistent/ns/net"}, []string{"open net /nonexistent/ns/net: no such file or directory"}},
		{"wrong kind", Join{"net", fmt.Sprintf("/proc/%d/ns/mnt", self)},
			[]string{fmt.Sprintf("setns net /proc/%d/ns/mnt: invalid argument (it is a mnt namespace)", self)}},
		{"not a namespace", Join{"uts", helperPath}, []string{"setns uts " + helperPath + ": invalid argument (not a namespace file)"}},
		{"newline", Join{"net", "/a\njoin=mnt:/b"}, []string{`bootstrap: path to join for net "/a\njoin=mnt:/b" contains a newline`}},
		{"bad kind", Join{"network", "/x"}, []string{`bootstrap: unknown namespace kind "network"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			startStage(t, true).expectFailure(BootstrapMessage(0, []Join{tc.join}), tc.want...)
		})
	}
}

func TestBadBootstrap(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"unknown key", "clone=0\nfoo=bar\n", `bootstrap: unknown key "foo"`},
		{"no equals", "clone=0\nfoo\n", `bootstrap: malformed line "foo"`},
		{"non-namespace flag", "clone=256\n", "bootstrap: clone flags 0x100 are not namespace flags"},
		{"bad number", "clone=-1\n", `bootstrap: bad clone flags "-1"`},
		{"clone twice", "clone=0\nclone=0\n", "bootstrap: clone given twice"},
		{"bad kind", "join=bogus:/x\n", `bootstrap: unknown namespace kind "bogus"`},
		{"no colon", "join=net\n", `bootstrap: malformed join "net"`},
		{"empty path", "join=net:\n", "bootstrap: empty path to join for net"},
		{"twice", "join=net:/a\njoin=net:/b\n", "bootstrap: net namespace joined twice"},
		{"nul", "clone=0\x00\n", "bootstrap: message contains a NUL byte"},
		{"oom out of range", "clone=0\noomscoreadj=1001\n", `bootstrap: bad oomscoreadj "1001"`},
		{"oom not a number", "clone=0\noomscoreadj=5x\n", `bootstrap: bad oomscoreadj "5x"`},
		{"oom empty", "clone=0\noomscoreadj=\n", `bootstrap: bad oomscoreadj ""`},
		{"oom twice", "clone=0\noomscoreadj=1\noomscoreadj=2\n", `bootstrap: bad oomscoreadj "2"`},
		{"empty", "", "bootstrap: empty message or init pipe closed"},
		{"too big", strings.Repeat("\n", MaxBootstrapSize+1), "bootstrap: message of 65537 bytes is over the limit of 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			startStage(t, true).expectFailure([]byte(tc.msg), tc.want)
		})
	}
}

func TestLargestBootstrap(t *testing.T) {
	msg := BootstrapMessage(0, nil)
	msg = append(msg, bytes.Repeat([]byte("\n"), MaxBootstrapSize-len(msg))...)
	s := startStage(t, true)
	if e := s.run(msg, nil); e != "" {
		t.Fatal(e)
	}
	s.finish()
}

func TestUsermapRefused(t *testing.T) {
	s := startStage(t, true)
	s.send(BootstrapMessage(unix.CLONE_NEWUSER, nil))
	if m, ok := s.recv(); m != MsgUsermap || !ok {
		t.Fatalf("got %q, want usermap", m)
	}
	s.send([]byte("no"))
	if m, ok := s.recv(); ok {
		t.Errorf("got %q after refusing, want EOF", m)
	}
	if code := s.waitStage(); code != 1 {
		t.Errorf("stage exited %d, want 1", code)
	}
}

func TestBootstrapMessage(t *testing.T) {
	got := string(BootstrapMessage(unix.CLONE_NEWUSER|unix.CLONE_NEWNS, []Join{
		{"net", "/proc/1/ns/net"}, {"mnt", "/run/netns/a b:c"},
	}))
	want := fmt.Sprintf("clone=%d\njoin=net:/proc/1/ns/net\njoin=mnt:/run/netns/a b:c\n", unix.CLONE_NEWUSER|unix.CLONE_NEWNS)
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := string(BootstrapMessage(0, nil)); got != "clone=0\n" {
		t.Errorf("got %q", got)
	}
	got = string(BootstrapMessage(0, nil, TimeOffset{"monotonic", -5, 7}, TimeOffset{"realtime", 1, 0}))
	if want := "clone=0\ntimeoffset=monotonic -5 7\ninvalid=unknown clock \"realtime\" for a time namespace offset\n"; got != want {
		t.Errorf("offsets: got %q, want %q", got, want)
	}
	adj := -17
	if got := string(Bootstrap{OOMScoreAdj: &adj}.Message()); got != "clone=0\noomscoreadj=-17\n" {
		t.Errorf("oomScoreAdj: got %q", got)
	}
	for _, j := range []Join{{"net", ""}, {"net", "/a\nb"}, {"net", "/a\x00"}, {"network", "/a"}, {"net:/x\njoin=mnt", "/y"}} {
		got := string(BootstrapMessage(0, []Join{j}))
		if !strings.HasPrefix(got, "clone=0\ninvalid=") || strings.Count(got, "\n") != 2 {
			t.Errorf("%q: got %q, want one invalid= line", j, got)
		}
	}
}

func TestParseReply(t *testing.T) {
	for _, tc := range []struct{ msg, kind, value string }{
		{"usermap", "usermap", ""},
		{"pid=42", "pid", "42"},
		{"error=setns net /x: invalid argument (a=b)", "error", "setns net /x: invalid argument (a=b)"},
		{"", "", ""},
	} {
		if k, v := ParseReply([]byte(tc.msg)); k != tc.kind || v != tc.value {
			t.Errorf("%q: got %q %q, want %q %q", tc.msg, k, v, tc.kind, tc.value)
		}
	}
}

func TestKind(t *testing.T) {
	want := map[string]struct {
		kind string
		flag uintptr
	}{
		"network": {"net", unix.CLONE_NEWNET},
		"mount":   {"mnt", unix.CLONE_NEWNS},
		"pid":     {"pid", unix.CLONE_NEWPID},
		"ipc":     {"ipc", unix.CLONE_NEWIPC},
		"uts":     {"uts", unix.CLONE_NEWUTS},
		"user":    {"user", unix.CLONE_NEWUSER},
		"cgroup":  {"cgroup", unix.CLONE_NEWCGROUP},
		"time":    {"time", unix.CLONE_NEWTIME},
	}
	for typ, w := range want {
		if k, f, ok := Kind(typ); !ok || k != w.kind || f != w.flag {
			t.Errorf("Kind(%q) = %q %#x %v", typ, k, f, ok)
		}
	}
	for _, typ := range []string{"net", "mnt", "", "Network"} {
		if _, _, ok := Kind(typ); ok {
			t.Errorf("Kind(%q) ok", typ)
		}
	}
}

// v1Cgroup makes a cgroup in the cgroup v1 pids hierarchy for a test, and
// returns its directory.
func v1Cgroup(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup/pids", &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
		t.Skip("no cgroup v1 pids hierarchy at /sys/fs/cgroup/pids (a cgroup v2 host: the stage is started in its cgroup by clone3 instead)")
	}
	return testCgroup(t, "/sys/fs/cgroup/pids", func(f []string) bool { return f[1] == "pids" })
}

// testCgroup makes a cgroup for a test below the test's own in the
// hierarchy mounted at mnt (its line in /proc/self/cgroup is the one pick
// takes), removed when the test ends, and returns its directory.
func testCgroup(t *testing.T, mnt string, pick func(fields []string) bool) string {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	parent := "/"
	for _, l := range strings.Split(string(own), "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && pick(f) {
			parent = f[2]
		}
	}
	dir := filepath.Join(mnt, parent, fmt.Sprintf("nsenter-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 100 && os.Remove(dir) != nil; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	})
	return dir
}

// TestCgroupFd: the stage joins a cgroup v1 hierarchy through a tasks file
// it was given (cgroupfd), before it forks init, so that init is born in
// it; the file is closed before init's Go runtime starts. In a new user
// namespace too, whose root is not the host's: the kernel checks the
// credentials of the file's opener.
func TestCgroupFd(t *testing.T) {
	dir := v1Cgroup(t)
	for _, tc := range []struct {
		name    string
		flags   uintptr
		usermap func(pid int)
	}{
		{"plain", 0, nil},
		{"userns", userNSFlags, func(pid int) {
			writeFile(t, fmt.Sprintf("/proc/%d/uid_map", pid), "0 100000 65536")
			writeFile(t, fmt.Sprintf("/proc/%d/gid_map", pid), "0 100000 65536")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer tasks.Close()
			s := startStageWith(t, true, tasks)
			msg := Bootstrap{Clone: tc.flags, Cgroups: []CgroupFd{{Fd: 4, Path: tasks.Name()}}}.Message()
			if e := s.run(msg, tc.usermap); e != "" {
				t.Fatal(e)
			}
			// init reports its cgroups itself: read from outside,
			// /proc/PID/cgroup of a task that is exiting shows the root
			// of every v1 hierarchy, and init exits as soon as it has
			// reported, which a loaded host lets it do first. Nothing
			// moves init after the stage forked it, so where it reports
			// is where it was born.
			r := s.finish()
			in := false
			for _, l := range strings.Split(r["cgroup"], ";") {
				if f := strings.SplitN(l, ":", 3); len(f) == 3 && f[1] == "pids" {
					in = strings.HasSuffix(dir, f[2]) && f[2] != "/"
				}
			}
			if !in {
				t.Errorf("init's cgroups: %s; want pids in %s", r["cgroup"], dir)
			}
			if strings.Contains(r["fds"], "tasks") || !strings.Contains(r["fds"], "3:socket:") {
				t.Errorf("init's open descriptors %s: want the init socket, and the tasks file closed", r["fds"])
			}
		})
	}
}

// TestCgroupFdErrors: a cgroupfd that is not open, or not open for
// writing, is an error naming the file, and nothing is forked.
func TestCgroupFdErrors(t *testing.T) {
	dir := v1Cgroup(t)
	ro, err := os.Open(filepath.Join(dir, "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s := startStageWith(t, true, ro)
	s.expectFailure(Bootstrap{Cgroups: []CgroupFd{{Fd: 4, Path: ro.Name()}}}.Message(), "join cgroup "+ro.Name(), "bad file descriptor")
	s = startStage(t, true)
	s.expectFailure(Bootstrap{Cgroups: []CgroupFd{{Fd: 9, Path: "/x/tasks"}}}.Message(), "bootstrap: cgroupfd 9 for /x/tasks", "bad file descriptor")
	s = startStage(t, true)
	s.expectFailure(Bootstrap{Cgroups: []CgroupFd{{Fd: 3, Path: "/x/tasks"}}}.Message(), "bootstrap: bad cgroupfd 3")
	s = startStage(t, true)
	s.expectFailure(Bootstrap{Cgroups: []CgroupFd{{Fd: 4, Path: "a\nb"}}}.Message(), "bootstrap: cgroup path", "contains a newline")
}

// cgroup2Dir makes a cgroup in the cgroup2 hierarchy (the whole of it on a
// cgroup v2 host, /sys/fs/cgroup/unified on a hybrid one) for a test, and
// returns it open, with its directory.
func cgroup2Dir(t *testing.T) (*os.File, string) {
	t.Helper()
	requireRoot(t)
	mnt := ""
	for _, m := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(m, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			mnt = m
			break
		}
	}
	if mnt == "" {
		t.Skip("no cgroup2 mount at /sys/fs/cgroup or /sys/fs/cgroup/unified")
	}
	dir := testCgroup(t, mnt, func(f []string) bool { return f[0] == "0" })
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, dir
}

// runLate plays the parent of a latecgroups bootstrap: the bootstrap, then
// the cgroups message cg with files as its descriptors, and returns the
// reply that ends the exchange (pid, pid-outside or error).
func (s *stage) runLate(boot, cg []byte, files ...*os.File) (kind, value string) {
	return s.runLateUser(boot, nil, cg, files...)
}

// runLateUser is runLate with a new user namespace, whose id maps usermap
// writes when the stage asks (before the cgroups are sent, as the runtime
// does).
func (s *stage) runLateUser(boot []byte, usermap func(pid int), cg []byte, files ...*os.File) (kind, value string) {
	s.t.Helper()
	s.send(boot)
	if usermap != nil {
		if m, ok := s.recv(); !ok || m != MsgUsermap {
			s.t.Fatalf("got %q (ok=%v), want %q", m, ok, MsgUsermap)
		}
		usermap(s.cmd.Process.Pid)
		s.send([]byte(MsgUsermapOK))
	}
	var rights []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		rights = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(int(s.sock.Fd()), cg, rights, nil, 0); err != nil {
		s.t.Fatalf("send the cgroups message: %v", err)
	}
	m, ok := s.recv()
	if !ok {
		s.t.Fatalf("init socket closed before pid (stage exit %d): %s", s.waitStage(), s.output())
	}
	kind, value = ParseReply([]byte(m))
	if kind == MsgPid || kind == MsgPidOutside {
		num, _, _ := strings.Cut(value, " ")
		pid, err := strconv.Atoi(num)
		if err != nil || pid <= 0 {
			s.t.Fatalf("bad pid message %q", m)
		}
		s.initPid = pid
	}
	return kind, value
}

// inCgroup says whether init's report (its /proc/self/cgroup, lines
// joined by ";") puts it in dir in the hierarchy whose controllers field is
// ctrls.
func inCgroup(report, ctrls, dir string) bool {
	for _, l := range strings.Split(report, ";") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && f[1] == ctrls {
			return f[2] != "/" && strings.HasSuffix(dir, f[2])
		}
	}
	return false
}

// TestLateCgroups: with latecgroups the stage makes the namespaces first,
// then takes the cgroups from a message of their own (as the runtime makes
// them meanwhile): it joins the v1 tasks files and clones init into the
// cgroup2 directory, so that init is born in all of them, and none of the
// descriptors reaches init. A directory clone3 cannot start init in gives
// pid-outside with the reason, and init is started all the same.
func TestLateCgroups(t *testing.T) {
	dir, dirPath := cgroup2Dir(t)
	flags := uintptr(unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWNET)
	boot := Bootstrap{Clone: flags, LateCgroups: true}.Message()
	var st unix.Statfs_t
	hasV1 := unix.Statfs("/sys/fs/cgroup/pids", &st) == nil && st.Type == unix.CGROUP_SUPER_MAGIC

	t.Run("born in every cgroup", func(t *testing.T) { testLateCgroupsBorn(t, boot, nil, dir, dirPath, hasV1) })
	// The runtime sends a cgroup late in a new user namespace only where
	// root there is the runtime's own user on the host: here, host root
	// (and clone3's permission checks pass for it).
	t.Run("born in every cgroup, in a user namespace", func(t *testing.T) {
		userBoot := Bootstrap{Clone: flags | unix.CLONE_NEWUSER, LateCgroups: true}.Message()
		testLateCgroupsBorn(t, userBoot, func(pid int) {
			writeFile(t, fmt.Sprintf("/proc/%d/uid_map", pid), "0 0 1")
			writeFile(t, fmt.Sprintf("/proc/%d/gid_map", pid), "0 0 1")
		}, dir, dirPath, hasV1)
	})
	// Why not where root is mapped to another host user: clone3 into the
	// cgroup checks the mapped root's credentials, and refuses them.
	t.Run("user namespace whose root is another user", func(t *testing.T) {
		userBoot := Bootstrap{Clone: flags | unix.CLONE_NEWUSER, LateCgroups: true}.Message()
		s := startStage(t, true)
		kind, val := s.runLateUser(userBoot, func(pid int) {
			writeFile(t, fmt.Sprintf("/proc/%d/uid_map", pid), "0 100000 65536")
			writeFile(t, fmt.Sprintf("/proc/%d/gid_map", pid), "0 100000 65536")
		}, CgroupsMessage(nil, dirPath), dir)
		if kind != MsgError || val != "clone init into cgroup "+dirPath+": permission denied" {
			t.Fatalf("reply %s=%s, want clone3's refusal", kind, val)
		}
	})

	// Not a cgroup: clone3 refuses it (EBADF) once the process has its
	// pid. Without a new pid namespace, init is forked outside the cgroup;
	// with one, whose first pid that was, it is an error.
	other, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	t.Run("not a cgroup", func(t *testing.T) {
		s := startStage(t, true)
		noPid := Bootstrap{Clone: flags &^ unix.CLONE_NEWPID, LateCgroups: true}.Message()
		kind, val := s.runLate(noPid, CgroupsMessage(nil, other.Name()), other)
		if kind != MsgPidOutside || !strings.Contains(val, "clone3 into "+other.Name()+": bad file descriptor") {
			t.Fatalf("reply %s=%s, want pid-outside naming %s", kind, val, other.Name())
		}
		r := s.finish()
		if strings.Contains(r["fds"], other.Name()) {
			t.Errorf("init's open descriptors %s: the directory reached init", r["fds"])
		}
	})
	t.Run("not a cgroup, new pid namespace", func(t *testing.T) {
		s := startStage(t, true)
		kind, val := s.runLate(boot, CgroupsMessage(nil, other.Name()), other)
		if kind != MsgError || val != "clone init into cgroup "+other.Name()+": bad file descriptor" {
			t.Fatalf("reply %s=%s, want the error of clone3 into %s", kind, val, other.Name())
		}
		if code := s.waitStage(); code != 1 {
			t.Errorf("stage exited %d, want 1", code)
		}
	})
}

// testLateCgroupsBorn runs a stage with boot (latecgroups), sends it the
// cgroup2 directory dir and, when hasV1, a v1 pids cgroup's tasks file,
// and checks where init was born and what it holds open.
func testLateCgroupsBorn(t *testing.T, boot []byte, usermap func(pid int), dir *os.File, dirPath string, hasV1 bool) {
	files, tasks := []*os.File{}, []string{}
	v1 := ""
	if hasV1 {
		v1 = v1Cgroup(t)
		f, err := os.OpenFile(filepath.Join(v1, "tasks"), os.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files, tasks = append(files, f), append(tasks, f.Name())
	}
	s := startStage(t, true)
	kind, val := s.runLateUser(boot, usermap, CgroupsMessage(tasks, dirPath), append(files, dir)...)
	if kind != MsgPid {
		t.Fatalf("reply %s=%s, want pid", kind, val)
	}
	r := s.finish()
	if !inCgroup(r["cgroup"], "", dirPath) {
		t.Errorf("init's cgroups: %s; want the cgroup2 one %s", r["cgroup"], dirPath)
	}
	if hasV1 && !inCgroup(r["cgroup"], "pids", v1) {
		t.Errorf("init's cgroups: %s; want pids in %s", r["cgroup"], v1)
	}
	// (The Go runtime keeps cpu.cfs_quota_us and cpu.cfs_period_us
	// open: not ours.)
	leaked := strings.Contains(r["fds"], dirPath) || (v1 != "" && strings.Contains(r["fds"], v1))
	if leaked || !strings.Contains(r["fds"], "3:socket:") {
		t.Errorf("init's open descriptors %s: want the init socket, and none of the cgroup files", r["fds"])
	}
	for _, ns := range []string{"mnt", "pid", "net", "uts", "ipc"} {
		if r["ns."+ns] == nsLink(t, os.Getpid(), ns) {
			t.Errorf("init is in the test's %s namespace, want a new one", ns)
		}
	}
}

// TestLateCgroupsErrors: a cgroups message that names a descriptor it does
// not carry, or one twice, or comes with cgroupfd lines in the bootstrap,
// is an error and nothing is forked; a parent that closes the socket
// instead of sending the cgroups (it could not make them) makes the stage
// exit 1 without forking.
func TestLateCgroupsErrors(t *testing.T) {
	dir, dirPath := cgroup2Dir(t)
	boot := Bootstrap{Clone: unix.CLONE_NEWUTS, LateCgroups: true}.Message()
	for _, tc := range []struct {
		name  string
		cg    []byte
		files []*os.File
		want  string
	}{
		{"no descriptor", CgroupsMessage([]string{"/x/tasks"}, ""), nil, "cgroups: bad descriptor index 0 for /x/tasks"},
		{"one descriptor twice", []byte("cgroups\ncgroupdir=0:" + dirPath + "\ncgroupfd=0:" + dirPath), []*os.File{dir}, "cgroups: bad descriptor index 0"},
		{"a newline in a path", CgroupsMessage([]string{"/x\n/tasks"}, ""), nil, "cgroups: malformed line"},
		{"not the cgroups", []byte("usermap-ok"), nil, "cgroups: unexpected message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStage(t, true)
			kind, val := s.runLate(boot, tc.cg, tc.files...)
			if kind != MsgError || !strings.Contains(val, tc.want) {
				t.Fatalf("reply %s=%s, want an error containing %q", kind, val, tc.want)
			}
			if code := s.waitStage(); code != 1 {
				t.Errorf("stage exited %d, want 1", code)
			}
		})
	}
	t.Run("with cgroupfd lines", func(t *testing.T) {
		s := startStageWith(t, true, dir)
		s.expectFailure(Bootstrap{LateCgroups: true, Cgroups: []CgroupFd{{Fd: 4, Path: dirPath}}}.Message(), "bootstrap: cgroupfd lines and latecgroups together")
	})
	t.Run("socket closed", func(t *testing.T) {
		s := startStage(t, true)
		s.send(boot)
		if err := unix.Shutdown(int(s.sock.Fd()), unix.SHUT_WR); err != nil {
			t.Fatal(err)
		}
		if m, ok := s.recv(); ok {
			t.Fatalf("got %q, want the socket closed", m)
		}
		if code := s.waitStage(); code != 1 {
			t.Errorf("stage exited %d, want 1", code)
		}
	})
}
