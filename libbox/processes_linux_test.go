package libbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTree starts sh running n sleeps in the background, and returns it
// and, once they all run, the sleeps' pids.
func startTree(t *testing.T, n int) (*exec.Cmd, []int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", strings.Repeat("sleep 1000 & ", n)+"wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var kids []int
	t.Cleanup(func() {
		// The sleeps too: killing sh alone leaves them to init.
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		kids = kids[:0]
		parents, err := allParents()
		if err != nil {
			t.Fatal(err)
		}
		for pid, ppid := range parents {
			if ppid == cmd.Process.Pid {
				kids = append(kids, pid)
			}
		}
		if len(kids) == n {
			return cmd, kids
		}
		if time.Now().After(deadline) {
			t.Fatalf("sh %d has %d children after 30s, want %d", cmd.Process.Pid, len(kids), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startTime(t *testing.T, pid int) uint64 {
	t.Helper()
	ps, err := readProcStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return ps.StartTime
}

func alive(pid int) bool {
	ps, err := readProcStat(pid)
	return err == nil && ps.State != 'Z' && ps.State != 'X'
}

// A container with neither cgroup nor pid namespace of its own: its
// processes are init, the recorded exec'd ones and their descendants.
func TestKillAndWaitWithoutCgroupOrPidNamespace(t *testing.T) {
	dir := t.TempDir()
	initCmd, initKids := startTree(t, 2)
	execCmd, execKids := startTree(t, 3)
	stranger, strangerKids := startTree(t, 1)
	c := &Container{
		rt:  &Runtime{Root: filepath.Dir(dir)},
		dir: dir,
		st: &persisted{
			ID: "c", InitPid: initCmd.Process.Pid, InitStartTime: startTime(t, initCmd.Process.Pid),
			Config: &Config{Namespaces: []Namespace{{Type: NEWNS}}},
		},
	}
	if !c.tracksExecs(c.cgroup()) {
		t.Fatal("a container without cgroup and pid namespace must track its exec'd processes")
	}
	if err := c.recordExec(execCmd.Process.Pid, startTime(t, execCmd.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	// A record of a process that is gone, or whose pid now names another
	// process, is dropped and never signalled.
	if err := c.recordExec(stranger.Process.Pid, startTime(t, stranger.Process.Pid)+1); err != nil {
		t.Fatal(err)
	}

	pids, err := c.Processes()
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]int{initCmd.Process.Pid, execCmd.Process.Pid}, initKids...), execKids...)
	slices.Sort(pids)
	slices.Sort(want)
	if !slices.Equal(pids, want) {
		t.Fatalf("Processes() = %v, want %v", pids, want)
	}

	if err := c.killAndWait(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range want {
		if alive(pid) {
			t.Errorf("process %d survived killAndWait", pid)
		}
	}
	for _, pid := range append([]int{stranger.Process.Pid}, strangerKids...) {
		if !alive(pid) {
			t.Errorf("process %d, not the container's, was killed", pid)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, execsDir))
	for _, e := range ents {
		if e.Name() == strconv.Itoa(stranger.Process.Pid)+"."+strconv.FormatUint(startTime(t, stranger.Process.Pid)+1, 10) {
			t.Errorf("the record of a recycled pid was kept: %s", e.Name())
		}
	}
}
