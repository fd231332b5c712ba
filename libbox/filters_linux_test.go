package libbox

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// denyPgid filters getpgid(1000001) with EXDEV: a probe no runtime code
// makes by itself.
func denyPgid() *Seccomp {
	return &Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"getpgid"}, Action: SeccompErrno,
		Errno: uintp(uint(unix.EXDEV)), Args: []SeccompArg{{Value: 1000001, Op: SeccompEqual}}}}}
}

func pgidFiltered() bool { return getpgid(1000001) == unix.EXDEV }

// TestFiltersWhen checks that the seccomp filter goes in at apply (after
// `start`, right before the startContainer hooks and execve) whatever
// no_new_privs says, and that only a process which could not otherwise
// install it is asked to hold CAP_SYS_ADMIN until then.
func TestFiltersWhen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		nnp      bool
		landlock *Landlock
		sysAdmin bool
	}{
		{"no_new_privs", true, nil, false},
		{"no no_new_privs: CAP_SYS_ADMIN until apply", false, nil, true},
		{"no no_new_privs, landlock sets it", false, &Landlock{ReadWrite: []string{"/"}}, false},
	} {
		if tc.landlock != nil && landlockABI() < 1 {
			t.Logf("%s: skipped, no Landlock", tc.name)
			continue
		}
		onThrowawayThread(func() {
			// The test thread stands in for init: no_new_privs (set by
			// setupProcess in init) or the CAP_SYS_ADMIN held for it is
			// what makes the install legal; set no_new_privs here so the
			// test needs no capability.
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				t.Error(err)
				return
			}
			f, err := prepareFilters(&Process{NoNewPrivileges: tc.nnp}, denyPgid(), tc.landlock)
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				return
			}
			if got := f.needsSysAdmin(); got != tc.sysAdmin {
				t.Errorf("%s: needsSysAdmin %v, want %v", tc.name, got, tc.sysAdmin)
			}
			if pgidFiltered() {
				t.Errorf("%s: filtered before apply", tc.name)
			}
			if err := f.apply(nil); err != nil {
				t.Errorf("%s: apply: %v", tc.name, err)
			}
			if !pgidFiltered() {
				t.Errorf("%s: not filtered after apply", tc.name)
			}
			if f.seccomp != nil {
				t.Errorf("%s: filter kept after apply", tc.name)
			}
		})
	}

	// A notify filter goes in when asked (init: before ready) and its fd to
	// the runtime.
	parent, child, err := newSyncPair()
	if err != nil {
		t.Fatal(err)
	}
	psock, csock := &syncSocket{f: parent}, &syncSocket{f: child}
	defer psock.Close()
	defer csock.Close()
	onThrowawayThread(func() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Error(err)
			return
		}
		s := denyPgid()
		s.ListenerPath = "/run/agent.sock"
		s.Syscalls = append(s.Syscalls, SeccompRule{Names: []string{"getpgid"}, Action: SeccompNotify,
			Args: []SeccompArg{{Value: 1000002, Op: SeccompEqual}}})
		f, err := prepareFilters(&Process{NoNewPrivileges: true}, s, nil)
		if err != nil {
			t.Error(err)
			return
		}
		if !f.listener() {
			t.Error("a notify filter is not a listener")
		}
		if err := f.installSeccomp(csock); err != nil {
			t.Error(err)
			return
		}
		if !pgidFiltered() || f.seccomp != nil {
			t.Error("notify filter not installed")
		}
		if err := f.apply(nil); err != nil {
			t.Errorf("apply after install: %v", err)
		}
	})
	if _, err := psock.expect(syncSeccompFd); err != nil {
		t.Fatal(err)
	}
	fd, err := recvSeccompFd(psock)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)

	// nil policies: nothing to do.
	f, err := prepareFilters(&Process{}, nil, nil)
	if err != nil || f.apply(nil) != nil {
		t.Errorf("no policies: %v", err)
	}
	if (*filters)(nil).apply(nil) != nil {
		t.Error("nil filters apply failed")
	}
}

// TestFiltersDropSysAdmin installs a filter the way init does without
// no_new_privs: with CAP_SYS_ADMIN held for it, dropped right after. And a
// profile that denies capset fails the apply instead of leaving the
// capability behind.
func TestFiltersDropSysAdmin(t *testing.T) {
	old, err := capget()
	if err != nil {
		t.Fatal(err)
	}
	if !old.effective.has(unix.CAP_SYS_ADMIN) {
		t.Skip("needs CAP_SYS_ADMIN: the filter is installed without no_new_privs")
	}
	final := old
	final.effective &^= 1 << unix.CAP_SYS_ADMIN
	final.permitted &^= 1 << unix.CAP_SYS_ADMIN
	onThrowawayThread(func() {
		f, err := prepareFilters(&Process{}, denyPgid(), nil)
		if err != nil {
			t.Error(err)
			return
		}
		f.finalCaps = &final
		if err := f.apply(nil); err != nil {
			t.Errorf("apply: %v", err)
			return
		}
		if !pgidFiltered() {
			t.Error("not filtered after apply")
		}
		now, err := capget()
		if err != nil {
			t.Error(err)
			return
		}
		if now.effective.has(unix.CAP_SYS_ADMIN) || now.permitted.has(unix.CAP_SYS_ADMIN) {
			t.Errorf("CAP_SYS_ADMIN still held after apply: %+v", now)
		}
	})
	onThrowawayThread(func() {
		s := denyPgid()
		s.Syscalls = append(s.Syscalls, SeccompRule{Names: []string{"capset"}, Action: SeccompErrno})
		f, err := prepareFilters(&Process{}, s, nil)
		if err != nil {
			t.Error(err)
			return
		}
		f.finalCaps = &final
		err = f.apply(nil)
		if err == nil || !strings.Contains(err.Error(), "the seccomp profile must allow capset") {
			t.Errorf("apply with capset denied: %v", err)
		}
	})
}

// debugLines collects what is logged through logrus's standard logger.
type debugLines struct{ msgs []string }

func (h *debugLines) Levels() []logrus.Level { return logrus.AllLevels }
func (h *debugLines) Fire(e *logrus.Entry) error {
	h.msgs = append(h.msgs, e.Message)
	return nil
}

// TestSeccompFlagsLogged checks the debug line init sends the runtime
// before ready: the flags argument seccomp(2) gets, with NEW_LISTENER for
// a notify rule (runc logs the same line, and its suite reads the number).
func TestSeccompFlagsLogged(t *testing.T) {
	std := logrus.StandardLogger()
	level, out, hooks := std.GetLevel(), std.Out, std.ReplaceHooks(logrus.LevelHooks{})
	t.Cleanup(func() { std.SetLevel(level); std.SetOutput(out); std.ReplaceHooks(hooks) })
	std.SetLevel(logrus.DebugLevel)
	std.SetOutput(io.Discard)
	notify := []SeccompRule{{Names: []string{"mkdir"}, Action: SeccompNotify}}
	for _, tc := range []struct {
		name  string
		flags []SeccompFlag
		rules []SeccompRule
		want  string
	}{
		{"no flags", nil, denyPgid().Syscalls, "seccomp filter flags: 0"},
		{"log", []SeccompFlag{SeccompFlagLog}, denyPgid().Syscalls, "seccomp filter flags: 2"},
		{"log and spec-allow", []SeccompFlag{SeccompFlagLog, SeccompFlagSpecAllow}, denyPgid().Syscalls, "seccomp filter flags: 6"},
		{"notify", nil, notify, "seccomp filter flags: 8"},
		{"notify, wait-killable-recv", []SeccompFlag{SeccompFlagWaitKillableRecv}, notify, "seccomp filter flags: 40"},
	} {
		skip := false
		for _, f := range tc.flags {
			skip = skip || !seccompFlagAvailable(f)
		}
		if len(tc.rules) > 0 && tc.rules[0].Action == SeccompNotify && !seccompActionAvailable(SeccompNotify) {
			skip = true
		}
		if skip {
			t.Logf("%s: skipped, not supported here", tc.name)
			continue
		}
		sc := &Seccomp{DefaultAction: SeccompAllow, Flags: tc.flags, Syscalls: tc.rules}
		if tc.rules[0].Action == SeccompNotify {
			sc.ListenerPath = "/run/agent.sock"
		}
		f, err := prepareFilters(&Process{NoNewPrivileges: true}, sc, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := strings.TrimPrefix(tc.want, "seccomp filter flags: "); fmt.Sprint(f.seccomp.flags) != want {
			t.Errorf("%s: seccomp(2) would get flags %#x, want %s", tc.name, f.seccomp.flags, want)
		}
		got := &debugLines{}
		std.ReplaceHooks(logrus.LevelHooks{})
		std.AddHook(got)
		f.logSeccompFlags()
		if len(got.msgs) != 1 || got.msgs[0] != tc.want {
			t.Errorf("%s: logged %q, want %q", tc.name, got.msgs, tc.want)
		}
		// Once installed, nothing is left to log.
		f.seccomp = nil
		got.msgs = nil
		f.logSeccompFlags()
		if len(got.msgs) != 0 {
			t.Errorf("%s: logged %q with no filter pending", tc.name, got.msgs)
		}
	}
}
