package libbox

import (
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
