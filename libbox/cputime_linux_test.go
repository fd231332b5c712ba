package libbox

import (
	"os"
	"testing"
	"time"
)

// TestParseStat: the CPU fields of /proc/PID/stat are found after the
// command, whatever the command holds (a program names itself freely: a
// command with ") 1 2 3" in it must not shift the fields).
func TestParseStat(t *testing.T) {
	line := []byte("42 (evil) 9 9 9 9) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 11 5 20 0 1 0 100 0 0\n")
	ut, st, err := parseStatTimes(line)
	if err != nil || ut != 7 || st != 3 {
		t.Errorf("parseStatTimes: %d %d %v, want 7 3", ut, st, err)
	}
	u, s, err := parseStatCPU(line)
	if err != nil || u != 7+11 || s != 3+5 {
		t.Errorf("parseStatCPU: %d %d %v, want 18 8", u, s, err)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) S 1 2 3"} {
		if _, _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q): no error", bad)
		}
	}
}

// TestTreeCPU: the walk counts a busy process (this test's own: at least
// the 50 ms it just spun, in 10 ms ticks) and nothing for a missing one.
func TestTreeCPU(t *testing.T) {
	end := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(end) {
	}
	if c := treeCPU(os.Getpid()); !c.ok || c.total() < 30*time.Millisecond {
		t.Errorf("treeCPU of this busy process: %v", c)
	}
	c := treeCPU(1 << 30) // no such process: nothing read
	if c.total() != 0 {
		t.Errorf("treeCPU of a missing pid: %v", c.total())
	}
}
