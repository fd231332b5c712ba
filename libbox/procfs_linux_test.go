package libbox

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestCheckProcfs(t *testing.T) {
	proc, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer proc.Close()
	if err := checkProcfs(int(proc.Fd()), proc.Name()); err != nil {
		t.Errorf("/proc/self/status: %v", err)
	}
	other, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	err = checkProcfs(int(other.Fd()), "/proc/fake")
	if err == nil || !strings.HasPrefix(err.Error(), "/proc/fake is not on procfs (filesystem type 0x") {
		t.Errorf("a directory of another filesystem: %v", err)
	}
	if err := checkProcfs(-1, "/proc/bad"); err == nil || !strings.Contains(err.Error(), "fstatfs /proc/bad") {
		t.Errorf("a bad fd: %v", err)
	}
}

func TestCheckProcfsPath(t *testing.T) {
	if err := checkProcfsPath("/proc"); err != nil {
		t.Skipf("no procfs on /proc: %v", err)
	}
	dir := t.TempDir()
	if err := checkProcfsPath(dir); err == nil || !strings.Contains(err.Error(), "is not on procfs") {
		t.Errorf("%s: %v", dir, err)
	}
	if err := checkProcfsPath(dir + "/missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing path: %v", err)
	}
	// A symlink into procfs is the file it names.
	if err := os.Symlink("/proc", dir+"/p"); err != nil {
		t.Fatal(err)
	}
	if err := checkProcfsPath(dir + "/p"); err != nil {
		t.Errorf("a link to /proc: %v", err)
	}
}

func TestIsProcRoot(t *testing.T) {
	if !isProcRoot("/proc") {
		t.Skip("/proc is not a procfs root here")
	}
	for _, p := range []string{"/proc/self", "/proc/sys", t.TempDir(), "/nonexistent"} {
		if isProcRoot(p) {
			t.Errorf("isProcRoot(%s) = true", p)
		}
	}
}
