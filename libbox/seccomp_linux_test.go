package libbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

func uintp(v uint) *uint { return &v }

// onThrowawayThread runs fn on an OS thread of its own that is never
// reused: filters and Landlock domains are per thread, and a goroutine that
// exits while locked takes its thread with it.
func onThrowawayThread(fn func()) {
	_ = onOwnThread(func() error { fn(); return nil })
}

// installForTest compiles and installs s on the calling thread, after
// setting no_new_privs there (so the test needs no CAP_SYS_ADMIN).
func installForTest(s *Seccomp) (int, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, err
	}
	p, err := compileSeccomp(s)
	if err != nil {
		return -1, err
	}
	return p.install()
}

// getpgid is the probe: harmless, one argument we choose, and never made
// by the Go runtime itself.
func getpgid(pid uintptr) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_GETPGID, pid, 0, 0)
	return errno
}

func TestSeccompValidate(t *testing.T) {
	ok := &Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"mkdir"}, Action: SeccompErrno, Errno: uintp(38)}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Seccomp
		want string
	}{
		{Seccomp{DefaultAction: "maybe"}, `unknown default action "maybe"`},
		{Seccomp{DefaultAction: SeccompAllow, Flags: []SeccompFlag{"tsync"}}, `unknown flag "tsync"`},
		{Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"a"}, Action: "deny"}}}, `syscalls[0]: unknown action "deny"`},
		{Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"a"}, Action: SeccompErrno, Args: []SeccompArg{{Op: "~"}}}}}, `syscalls[0].args[0]: unknown operator "~"`},
		{Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"a"}, Action: SeccompAllow, Errno: uintp(1)}}}, `action "allow" takes no errno`},
		{Seccomp{DefaultAction: SeccompLog, DefaultErrno: uintp(1)}, `default action: action "log" takes no errno`},
		{Seccomp{DefaultAction: SeccompErrno, DefaultErrno: uintp(5000)}, "MAX_ERRNO"},
	} {
		err := tc.s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "seccomp: ") {
			t.Errorf("%+v: error %v, want %q", tc.s, err, tc.want)
		}
	}
}

func TestCompileSeccomp(t *testing.T) {
	for _, a := range []SeccompAction{SeccompKill, SeccompKillThread, SeccompKillProcess, SeccompTrap,
		SeccompErrno, SeccompTrace, SeccompAllow, SeccompLog, SeccompNotify} {
		s := &Seccomp{DefaultAction: SeccompAllow, ListenerPath: "/run/agent",
			Syscalls: []SeccompRule{{Names: []string{"getpgid"}, Action: a}}}
		p, err := compileSeccomp(s)
		if err != nil {
			t.Errorf("%s: %v", a, err)
			continue
		}
		if len(p.filter) < 4 || p.listener != (a == SeccompNotify) ||
			(p.flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER != 0) != (a == SeccompNotify) {
			t.Errorf("%s: %d instructions, listener %v, flags %#x", a, len(p.filter), p.listener, p.flags)
		}
	}

	// A rule that does what the default does is dropped, not an error;
	// so is a syscall name libseccomp does not know.
	// (read, number 0, raises no ENOSYS stub maximum either.)
	p, err := compileSeccomp(&Seccomp{DefaultAction: SeccompErrno, Syscalls: []SeccompRule{
		{Names: []string{"read"}, Action: SeccompErrno},
		{Names: []string{"no_such_syscall", "getpgid"}, Action: SeccompAllow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := compileSeccomp(&Seccomp{DefaultAction: SeccompErrno, Syscalls: []SeccompRule{
		{Names: []string{"getpgid"}, Action: SeccompAllow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.filter) != len(plain.filter) {
		t.Errorf("redundant rule or unknown name changed the filter: %d vs %d instructions", len(p.filter), len(plain.filter))
	}

	// Other architectures of the same endianness add their own checks.
	multi, err := compileSeccomp(&Seccomp{DefaultAction: SeccompErrno, Architectures: []string{"x86", "x32", "amd64"},
		Syscalls: []SeccompRule{{Names: []string{"read"}, Action: SeccompAllow}}})
	if runtime.GOARCH == "amd64" {
		if err != nil || len(multi.filter) <= len(plain.filter) {
			t.Errorf("x86+x32: %v, %d instructions", err, len(plain.filter))
		}
		// libseccomp cannot mix endiannesses in one filter.
		if _, err := compileSeccomp(&Seccomp{DefaultAction: SeccompErrno, Architectures: []string{"s390x"}}); err == nil ||
			!strings.Contains(err.Error(), `architecture "s390x"`) {
			t.Errorf("s390x on amd64: %v", err)
		}
	}
	if _, err := compileSeccomp(&Seccomp{DefaultAction: SeccompErrno, Architectures: []string{"vax"}}); err == nil ||
		!strings.Contains(err.Error(), `seccomp: architecture "vax"`) {
		t.Errorf("vax: %v", err)
	}
}

func TestSeccompInstallActions(t *testing.T) {
	onThrowawayThread(func() {
		s := &Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{
			{Names: []string{"getpgid"}, Action: SeccompErrno, Errno: uintp(uint(unix.ENOSYS)),
				Args: []SeccompArg{{Index: 0, Value: 1000001, Op: SeccompEqual}}},
			{Names: []string{"getpgid"}, Action: SeccompErrno,
				Args: []SeccompArg{{Index: 0, Value: 1000002, Op: SeccompEqual}}},
			// ptrace(2)'s PTRACE_EVENT_SECCOMP without a tracer: ENOSYS.
			{Names: []string{"getpgid"}, Action: SeccompTrace, Errno: uintp(7),
				Args: []SeccompArg{{Index: 0, Value: 1000003, Op: SeccompEqual}}},
			{Names: []string{"getpgid"}, Action: SeccompLog,
				Args: []SeccompArg{{Index: 0, Value: 1000004, Op: SeccompEqual}}},
		}, Flags: []SeccompFlag{SeccompFlagSpecAllow}}
		if _, err := installForTest(s); err != nil {
			t.Error(err)
			return
		}
		for _, tc := range []struct {
			pid  uintptr
			want unix.Errno
		}{
			{1000001, unix.ENOSYS}, // errnoRet
			{1000002, unix.EPERM},  // errno without errnoRet
			{1000003, unix.ENOSYS}, // trace, nobody tracing
			{1000004, unix.ESRCH},  // log: allowed, and there is no such process
			{1000005, unix.ESRCH},  // no rule: the default, allow
		} {
			if got := getpgid(tc.pid); got != tc.want {
				t.Errorf("getpgid(%d): %v, want %v", tc.pid, got, tc.want)
			}
		}
	})
}

func TestSeccompInstallOperators(t *testing.T) {
	const marker = unix.Errno(133) // EHWPOISON: nothing else returns it here
	args := []uintptr{4, 5, 6}
	for _, tc := range []struct {
		args  []SeccompArg
		match []bool
	}{
		{[]SeccompArg{{Value: 5, Op: SeccompEqual}}, []bool{false, true, false}},
		{[]SeccompArg{{Value: 5, Op: SeccompNotEqual}}, []bool{true, false, true}},
		{[]SeccompArg{{Value: 5, Op: SeccompLess}}, []bool{true, false, false}},
		{[]SeccompArg{{Value: 5, Op: SeccompLessOrEqual}}, []bool{true, true, false}},
		{[]SeccompArg{{Value: 5, Op: SeccompGreater}}, []bool{false, false, true}},
		{[]SeccompArg{{Value: 5, Op: SeccompGreaterOrEqual}}, []bool{false, true, true}},
		{[]SeccompArg{{Value: 3, ValueTwo: 1, Op: SeccompMaskedEqual}}, []bool{false, true, false}},
		// Two conditions on the same argument: OR-ed (one rule each).
		{[]SeccompArg{{Value: 4, Op: SeccompEqual}, {Value: 6, Op: SeccompEqual}}, []bool{true, false, true}},
		// Conditions on different arguments: AND-ed. getpgid ignores
		// its second argument, which is 0 here.
		{[]SeccompArg{{Value: 5, Op: SeccompGreaterOrEqual}, {Index: 1, Value: 0, Op: SeccompEqual}}, []bool{false, true, true}},
		{[]SeccompArg{{Value: 5, Op: SeccompGreaterOrEqual}, {Index: 1, Value: 1, Op: SeccompEqual}}, []bool{false, false, false}},
	} {
		onThrowawayThread(func() {
			s := &Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{
				{Names: []string{"getpgid"}, Action: SeccompErrno, Errno: uintp(uint(marker)), Args: tc.args},
			}}
			if _, err := installForTest(s); err != nil {
				t.Error(err)
				return
			}
			for i, a := range args {
				if got := getpgid(a) == marker; got != tc.match[i] {
					t.Errorf("%+v: getpgid(%d) matched %v, want %v", tc.args, a, got, tc.match[i])
				}
			}
		})
	}
}

func TestSeccompInstallNotify(t *testing.T) {
	if api, _ := libseccomp.GetAPI(); api < 6 {
		t.Skipf("libseccomp API level %d: notify needs 6", api)
	}
	// The agent: another goroutine, on an unfiltered thread, answers every
	// notification with EXDEV until the fd is closed.
	fds := make(chan int, 1)
	agentDone := make(chan struct{})
	go func() {
		defer close(agentDone)
		fd, ok := <-fds
		if !ok {
			return
		}
		defer unix.Close(fd)
		for {
			req, err := libseccomp.NotifReceive(libseccomp.ScmpFd(fd))
			if err != nil {
				return
			}
			_ = libseccomp.NotifRespond(libseccomp.ScmpFd(fd), &libseccomp.ScmpNotifResp{ID: req.ID, Error: int32(unix.EXDEV)})
			if req.Data.Args[0] == 1000001 {
				return
			}
		}
	}()
	onThrowawayThread(func() {
		s := &Seccomp{DefaultAction: SeccompAllow, ListenerPath: "/unused",
			Syscalls: []SeccompRule{{Names: []string{"getpgid"}, Action: SeccompNotify,
				Args: []SeccompArg{{Value: 1000001, Op: SeccompEqual}}}}}
		if seccompFlagAvailable(SeccompFlagWaitKillableRecv) {
			s.Flags = []SeccompFlag{SeccompFlagWaitKillableRecv}
		}
		fd, err := installForTest(s)
		if err != nil || fd < 0 {
			t.Errorf("install: fd %d, %v", fd, err)
			close(fds)
			return
		}
		fds <- fd
		if got := getpgid(1000002); got != unix.ESRCH {
			t.Errorf("getpgid without a rule: %v", got)
		}
		if got := getpgid(1000001); got != unix.EXDEV {
			t.Errorf("notified getpgid: %v, want the agent's EXDEV", got)
		}
	})
	<-agentDone
}

func TestSeccompFdDelivery(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.sock")
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 1); err != nil {
		t.Fatal(err)
	}

	parent, child, err := newSyncPair()
	if err != nil {
		t.Fatal(err)
	}
	psock, csock := &syncSocket{f: parent}, &syncSocket{f: child}
	defer psock.Close()
	defer csock.Close()

	// Init's side: a pipe stands in for the notify fd.
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	if err := sendSeccompFd(csock, p[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
		t.Errorf("sendSeccompFd left the fd open: %v", err)
	}

	// The runtime's side.
	if _, err := psock.expect(syncSeccompFd); err != nil {
		t.Fatal(err)
	}
	state := []byte(`{"ociVersion":"1.2.0","id":"c1","status":"creating","pid":42,"bundle":"/b"}`)
	s := &Seccomp{ListenerPath: path, ListenerMetadata: "hello"}
	errc := make(chan error, 1)
	go func() { errc <- deliverSeccompFd(psock, s, state) }()

	conn, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(conn)
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(conn, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Version  string          `json:"ociVersion"`
		Fds      []string        `json:"fds"`
		Pid      int             `json:"pid"`
		Metadata string          `json:"metadata"`
		State    json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(buf[:n], &msg); err != nil {
		t.Fatalf("%q: %v", buf[:n], err)
	}
	if msg.Version != "1.2.0" || len(msg.Fds) != 1 || msg.Fds[0] != "seccompFd" || msg.Pid != 42 ||
		msg.Metadata != "hello" || string(msg.State) != string(state) {
		t.Errorf("message %s", buf[:n])
	}
	cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(cmsgs) != 1 {
		t.Fatalf("control messages %v %v", cmsgs, err)
	}
	got, err := unix.ParseUnixRights(&cmsgs[0])
	if err != nil || len(got) != 1 {
		t.Fatalf("rights %v %v", got, err)
	}
	defer unix.Close(got[0])
	// It is the same pipe: what goes in one end comes out of the fd.
	if _, err := unix.Write(p[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := unix.Read(got[0], buf); err != nil || string(buf[:n]) != "x" {
		t.Errorf("read the passed fd: %q %v", buf[:n], err)
	}
}

func TestSeccompFdDeliveryNoListener(t *testing.T) {
	parent, child, err := newSyncPair()
	if err != nil {
		t.Fatal(err)
	}
	psock, csock := &syncSocket{f: parent}, &syncSocket{f: child}
	defer psock.Close()
	defer csock.Close()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := sendSeccompFd(csock, fd); err != nil {
		t.Fatal(err)
	}
	if _, err := psock.expect(syncSeccompFd); err != nil {
		t.Fatal(err)
	}
	s := &Seccomp{ListenerPath: filepath.Join(t.TempDir(), "nobody.sock")}
	err = deliverSeccompFd(psock, s, []byte(`{"pid":1}`))
	if err == nil || !strings.Contains(err.Error(), "failed to connect with seccomp agent at listenerPath") || !strings.Contains(err.Error(), "is the seccomp agent running") {
		t.Errorf("error %v", err)
	}
}

func TestSeccompKernelChecks(t *testing.T) {
	for _, a := range []SeccompAction{SeccompErrno, SeccompAllow, SeccompKill, SeccompTrap} {
		if !seccompActionAvailable(a) {
			t.Errorf("action %s unavailable", a)
		}
	}
	if seccompActionAvailable("nope") || seccompFlagAvailable("nope") {
		t.Error("unknown action or flag reported available")
	}
	sup := ProbeSeccomp()
	if len(sup.Actions) < 7 || sup.LibseccompVersion == "" || len(sup.Archs) == 0 {
		t.Errorf("probe %+v", sup)
	}
	// A flag the kernel has is accepted by compile; which ones it has is
	// the kernel's business, so only check consistency.
	for _, f := range []SeccompFlag{SeccompFlagLog, SeccompFlagSpecAllow} {
		_, err := compileSeccomp(&Seccomp{DefaultAction: SeccompAllow, Flags: []SeccompFlag{f}})
		if (err == nil) != seccompFlagAvailable(f) {
			t.Errorf("flag %s: compile error %v, available %v", f, err, seccompFlagAvailable(f))
		}
	}
}
