package libbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestFiltersWhen checks when the seccomp filter goes in: at apply (just
// before execve) when the process can install it there, in prepareFilters
// when it could not (no no_new_privs and no Landlock to set it) or when the
// notify fd must reach the runtime.
func TestFiltersWhen(t *testing.T) {
	deny := func() *Seccomp {
		return &Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"getpgid"}, Action: SeccompErrno,
			Errno: uintp(uint(unix.EXDEV)), Args: []SeccompArg{{Value: 1000001, Op: SeccompEqual}}}}}
	}
	filtered := func() bool { return getpgid(1000001) == unix.EXDEV }
	for _, tc := range []struct {
		name     string
		nnp      bool
		landlock *Landlock
		early    bool
	}{
		{"no_new_privs: late", true, nil, false},
		{"no no_new_privs: early", false, nil, true},
		{"no no_new_privs, landlock sets it: late", false, &Landlock{ReadWrite: []string{"/"}}, false},
	} {
		if tc.landlock != nil && landlockABI() < 1 {
			t.Logf("%s: skipped, no Landlock", tc.name)
			continue
		}
		onThrowawayThread(func() {
			// The test thread stands in for init: no_new_privs (set by
			// setupProcess in init) is what makes the late install legal.
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				t.Error(err)
				return
			}
			f, err := prepareFilters(nil, &Process{NoNewPrivileges: tc.nnp}, deny(), tc.landlock)
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				return
			}
			if got := filtered(); got != tc.early {
				t.Errorf("%s: filtered after prepare %v, want %v", tc.name, got, tc.early)
			}
			if err := f.apply(); err != nil {
				t.Errorf("%s: apply: %v", tc.name, err)
			}
			if !filtered() {
				t.Errorf("%s: not filtered after apply", tc.name)
			}
			// Applied once: a second apply has nothing left to do.
			if f.seccomp != nil && tc.early {
				t.Errorf("%s: early filter kept for apply", tc.name)
			}
		})
	}

	// A notify filter goes in early and its fd to the runtime.
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
		s := deny()
		s.ListenerPath = "/run/agent.sock"
		s.Syscalls = append(s.Syscalls, SeccompRule{Names: []string{"getpgid"}, Action: SeccompNotify,
			Args: []SeccompArg{{Value: 1000002, Op: SeccompEqual}}})
		f, err := prepareFilters(csock, &Process{NoNewPrivileges: true}, s, nil)
		if err != nil {
			t.Error(err)
			return
		}
		if !filtered() || f.seccomp != nil {
			t.Error("notify filter not installed by prepareFilters")
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
	f, err := prepareFilters(nil, &Process{}, nil, nil)
	if err != nil || f.apply() != nil {
		t.Errorf("no policies: %v", err)
	}
	if (*filters)(nil).apply() != nil {
		t.Error("nil filters apply failed")
	}
}
