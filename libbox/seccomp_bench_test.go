package libbox_test

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

// The cost of the default (Docker) profile: compiled once per container in
// init, installed once per process. Run with
// go test -run X -bench Seccomp ./libbox
func BenchmarkSeccompCompileDefault(b *testing.B) {
	s, err := specconv.DefaultSeccomp()
	if err != nil {
		b.Fatal(err)
	}
	n, _, err := libbox.CompileSeccompForTest(s)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := libbox.CompileSeccompForTest(s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "insns")
}

func BenchmarkSeccompInstallDefault(b *testing.B) {
	s, err := specconv.DefaultSeccomp()
	if err != nil {
		b.Fatal(err)
	}
	_, install, err := libbox.CompileSeccompForTest(s)
	if err != nil {
		b.Fatal(err)
	}
	// Each install stacks on its thread; a fresh thread per round keeps
	// the measurement to one filter. The thread start is measured too, so
	// compare with BenchmarkThreadOnly.
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread is thrown away
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				done <- err
				return
			}
			done <- install()
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkThreadOnly(b *testing.B) {
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			done <- unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyscallUnderDefault is the cost the filter adds to every system
// call of the container: getppid, near the end of the profile's list.
func BenchmarkSyscallUnderDefault(b *testing.B) {
	s, err := specconv.DefaultSeccomp()
	if err != nil {
		b.Fatal(err)
	}
	_, install, err := libbox.CompileSeccompForTest(s)
	if err != nil {
		b.Fatal(err)
	}
	for _, filtered := range []bool{false, true} {
		name := "unfiltered"
		if filtered {
			name = "filtered"
		}
		b.Run(name, func(b *testing.B) {
			done := make(chan error, 1)
			go func() {
				runtime.LockOSThread() // never unlocked: the thread is thrown away
				if filtered {
					if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
						done <- err
						return
					}
					if err := install(); err != nil {
						done <- err
						return
					}
				}
				for b.Loop() {
					unix.Getppid()
				}
				done <- nil
			}()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
