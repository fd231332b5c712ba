package libbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func noVerify(int, string) error { return nil }

func TestWriteAppArmorExec(t *testing.T) {
	t.Run("per-LSM directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "apparmor"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"apparmor/exec", "exec"} {
			if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeAppArmorExec(dir, "cri-containerd.apparmor.d", noVerify); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "apparmor/exec")); string(b) != "exec cri-containerd.apparmor.d" {
			t.Errorf("apparmor/exec = %q, want %q", b, "exec cri-containerd.apparmor.d")
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "exec")); len(b) != 0 {
			t.Errorf("the old attr/exec was written too: %q", b)
		}
	})
	t.Run("fallback to attr/exec", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "exec"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := writeAppArmorExec(dir, "docker-default", noVerify); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "exec")); string(b) != "exec docker-default" {
			t.Errorf("exec = %q", b)
		}
	})
	t.Run("no profile writes nothing", func(t *testing.T) {
		if err := writeAppArmorExec(filepath.Join(t.TempDir(), "missing"), "", noVerify); err != nil {
			t.Errorf("empty profile: %v", err)
		}
	})
	t.Run("no attr file", func(t *testing.T) {
		err := writeAppArmorExec(t.TempDir(), "p", noVerify)
		if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), `apparmor profile "p": `) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("a file that is not procfs's is not written", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "exec"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := writeAppArmorExec(dir, "p", checkProcfs)
		if err == nil || !strings.Contains(err.Error(), "is not on procfs") {
			t.Errorf("error = %v, want the procfs check's", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "exec")); len(b) != 0 {
			t.Errorf("written anyway: %q", b)
		}
	})
	t.Run("a symlinked attr file is refused", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "elsewhere")
		if err := os.WriteFile(target, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, "exec")); err != nil {
			t.Fatal(err)
		}
		if err := writeAppArmorExec(dir, "p", noVerify); err == nil {
			t.Error("a symlink was followed")
		}
	})
}

// On a host without AppArmor the kernel refuses the write, as runc 1.1 hits
// it ("write /proc/self/attr/exec: invalid argument"); specconv refuses
// such a config before init is made.
func TestApplyAppArmorProfileNotEnabled(t *testing.T) {
	if AppArmorEnabled() {
		t.Skip("AppArmor is enabled on this host")
	}
	done := make(chan error)
	go func() {
		// A thread of its own, thrown away: a successful write would change
		// the test binary's next execve.
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		done <- applyAppArmorProfile("nanobox-test-profile")
	}()
	err := <-done
	if err == nil {
		t.Fatal("the profile was accepted on a host without AppArmor")
	}
	if !strings.Contains(err.Error(), `"nanobox-test-profile"`) {
		t.Errorf("error %q does not name the profile", err)
	}
}
