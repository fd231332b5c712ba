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
	st, err := parseProcStat(line)
	if err != nil || st.Utime != 7 || st.Stime != 3 {
		t.Errorf("utime, stime: %d %d %v, want 7 3", st.Utime, st.Stime, err)
	}
	if st.Utime+st.Cutime != 7+11 || st.Stime+st.Cstime != 3+5 || st.Ppid != 1 || st.StartTime != 100 {
		t.Errorf("parseProcStat: %+v, want cutime 11, cstime 5, ppid 1, start 100", st)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) S 1 2 3"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("parseProcStat(%q): no error", bad)
		}
	}
}

// TestTreeCPU: the walk counts a busy process (this test's own: at least
// the 50 ms it just spun, in 10 ms ticks), nothing for a missing one, and
// nothing for a root that is not the process it started with (a reused
// pid).
func TestTreeCPU(t *testing.T) {
	end := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(end) {
	}
	c, start := treeCPU(os.Getpid(), 0)
	if !c.ok || c.total() < 30*time.Millisecond || start == 0 {
		t.Errorf("treeCPU of this busy process: %v (start %d)", c, start)
	}
	if again, _ := treeCPU(os.Getpid(), start); !again.ok || again.total() < c.total() {
		t.Errorf("treeCPU of the same process again: %v, before %v", again, c)
	}
	if other, _ := treeCPU(os.Getpid(), start+1); other.ok {
		t.Errorf("treeCPU of a root with another start time: %v", other)
	}
	c, _ = treeCPU(1<<30, 0) // no such process: nothing read
	if c.total() != 0 {
		t.Errorf("treeCPU of a missing pid: %v", c.total())
	}
}
