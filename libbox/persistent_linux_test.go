package libbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// startSandbox starts a persistent sandbox and closes it when the test
// ends, whatever happened.
func startSandbox(t *testing.T, o Options) *Sandbox {
	t.Helper()
	sb := newTestSandbox(t, o)
	if err := sb.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// execOut runs a script in the persistent sandbox and returns its result
// with its output.
func execOut(t *testing.T, sb *Sandbox, script string) *Result {
	t.Helper()
	c, err := sb.Exec(context.Background(), "/bin/sh", []string{"-c", script}, Stdio{})
	if err != nil {
		t.Fatalf("Exec %q: %v", script, err)
	}
	res, err := c.WaitWithOutput()
	if err != nil {
		t.Fatalf("Exec %q: %v", script, err)
	}
	return res
}

func TestSandboxPersistent(t *testing.T) {
	sb := startSandbox(t, Options{})
	id := sb.ID()
	if !strings.HasPrefix(id, "sb-") {
		t.Fatalf("ID %q", id)
	}
	res := execOut(t, sb, "echo kept >/tmp/f; echo $$")
	wantRunStatus(t, res, StatusOK)
	if res.Report.ID != id {
		t.Errorf("exec report id %q, sandbox %q", res.Report.ID, id)
	}
	// The same sandbox: what one program left, the next one sees; pid 1
	// is the pause, which the sandbox's own processes cannot end.
	res = execOut(t, sb, `cat /tmp/f; tr '\0' ' ' </proc/1/cmdline; echo; kill -TERM 1; kill -INT 1; echo signalled`)
	wantRunStatus(t, res, StatusOK)
	if got := string(res.Stdout); got != "kept\nnanobox-pause \nsignalled\n" {
		t.Errorf("second exec: %q (stderr %q)", got, res.Stderr)
	}
	res = execOut(t, sb, "exit 7")
	wantRunStatus(t, res, StatusExited)
	if res.ExitCode != 7 {
		t.Errorf("exit %d", res.ExitCode)
	}

	// Programs at once.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := sb.Exec(context.Background(), "/bin/sh", []string{"-c", "echo $0", fmt.Sprint(i)}, Stdio{})
			if err != nil {
				errs <- err
				return
			}
			res, err := c.WaitWithOutput()
			if err != nil || string(res.Stdout) != fmt.Sprintf("%d\n", i) {
				errs <- fmt.Errorf("exec %d: %v %q", i, err, res.Stdout)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	rep := sb.Report()
	if rep == nil || rep.Status != StatusOK || rep.ID != id || rep.WallTime <= 0 || rep.PeakMemory <= 0 {
		t.Fatalf("sandbox report %+v", rep)
	}
	if rep.OutputBytes == 0 {
		t.Error("the sandbox's report counts no output")
	}
	checkNothingLeft(t, sb, id)
	if _, err := sb.Exec(context.Background(), "/bin/true", nil, Stdio{}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Exec after Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Started again: a new sandbox, nothing of the old one.
	if err := sb.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sb.ID() == id {
		t.Error("a restarted sandbox has the old id")
	}
	res = execOut(t, sb, "cat /tmp/f 2>/dev/null || echo fresh")
	if string(res.Stdout) != "fresh\n" {
		t.Errorf("after restart: %q", res.Stdout)
	}
}

// TestSandboxPersistentExecBornInCgroup: init and a program exec'd into a
// running sandbox are born in its cgroup, every hierarchy, seen from the
// host: the runtime moves nothing (see TestSandboxBornInCgroup).
func TestSandboxPersistentExecBornInCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a rootless sandbox on cgroup v1 has no cgroup")
	}
	moves := recordCgroupMoves(t)
	sb := startSandbox(t, Options{})
	ctr := sb.live.in.ctr
	cg := ctr.cgroup()
	if cg == nil {
		t.Fatal("a rootful sandbox without a cgroup")
	}
	paths := cg.m.GetPaths()
	wantInCgroups(t, "init", ctr.st.InitPid, paths)
	res := execOut(t, sb, "cat /proc/self/cgroup")
	wantRunStatus(t, res, StatusOK)
	wantCgroupNSRoot(t, res.Stdout)
	c, err := sb.Exec(context.Background(), "/bin/sleep", []string{"60"}, Stdio{})
	if err != nil {
		t.Fatal(err)
	}
	wantInCgroups(t, "the exec'd program", c.Pid(), paths)
	_ = c.Kill()
	_, _ = c.Wait()
	if moved := moves(); len(moved) != 0 {
		t.Errorf("the runtime moved %v into the sandbox's cgroup: want init and the programs born there", moved)
	}
}

// Kill ends an exec'd program and everything it started, even a double
// fork; the sandbox goes on. What a program leaves running when it exits
// on its own goes on until Close.
func TestSandboxPersistentKillTree(t *testing.T) {
	sb := startSandbox(t, Options{})
	marker := fmt.Sprintf("%d", 7000000+os.Getpid()%1000000)
	c, err := sb.Exec(context.Background(), "/bin/sh", []string{"-c", "sleep " + marker + " & (sleep " + marker + " &); echo ready; wait"}, Stdio{})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, c, c.Stdout, "ready\n")
	if !markerAlive("sleep " + marker) {
		t.Fatal("not running")
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	res, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusCancelled)
	if markerAlive("sleep " + marker) {
		t.Fatal("processes of the killed program are still running")
	}

	bg := fmt.Sprintf("%d", 8000000+os.Getpid()%1000000)
	res = execOut(t, sb, "sleep "+bg+" >/dev/null 2>&1 </dev/null & echo started")
	wantRunStatus(t, res, StatusOK)
	if !markerAlive("sleep " + bg) {
		t.Fatal("a background process did not outlive its program")
	}
	res = execOut(t, sb, "echo still here")
	if string(res.Stdout) != "still here\n" {
		t.Errorf("after the kill: %q", res.Stdout)
	}
	id := sb.ID()
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if markerAlive("sleep " + bg) {
		t.Error("Close left a process running")
	}
	checkNothingLeft(t, sb, id)
}

func TestSandboxPersistentLimits(t *testing.T) {
	// Long enough for a shell to start on a loaded host (the second
	// program must not hit it), short enough for the test.
	sb := startSandbox(t, Options{Limits: Limits{WallTime: 3 * time.Second}})
	res := execOut(t, sb, "sleep 30")
	wantRunStatus(t, res, StatusWallTimeout)
	wantLimit(t, res, LimitWallTime, LimitEnforced, true)
	// Per program: the next one has its own.
	res = execOut(t, sb, "echo ok")
	wantRunStatus(t, res, StatusOK)
}

func TestSandboxPersistentPTY(t *testing.T) {
	sb := startSandbox(t, Options{})
	term := PTY(40, 132)
	c, err := sb.Exec(context.Background(), "/bin/sh", []string{"-c", "stty size; tty; read x; echo \"got $x\""}, Stdio{Stdin: term})
	if err != nil {
		t.Fatal(err)
	}
	if out := expect(t, c, c.Stdout, "/dev/pts/"); !strings.Contains(out, "40 132") {
		t.Errorf("in the pty: %q", out)
	}
	if _, err := io.WriteString(c.Stdin, "line\r"); err != nil {
		t.Fatal(err)
	}
	expect(t, c, c.Stdout, "got line")
	res, err := c.WaitWithOutput()
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOK)
}

// The context given to Start ends the sandbox.
func TestSandboxPersistentContext(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sb.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	c, err := sb.Exec(context.Background(), "/bin/sh", []string{"-c", "echo ready; exec sleep 1000"}, Stdio{})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, c, c.Stdout, "ready\n")
	cancel()
	res, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Status != StatusSignaled {
		t.Errorf("a program of the killed sandbox: %s", res.Report.Status)
	}
	id := sb.ID()
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := sb.Report(); rep == nil || rep.Status != StatusCancelled {
		t.Errorf("report %+v", rep)
	}
	checkNothingLeft(t, sb, id)
}

// Detach: a sandbox that is a container of its state root, for Load, Exec
// and Delete; the limits that need a supervisor are refused.
func TestSandboxDetach(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	id := fmt.Sprintf("detached-%d", os.Getpid())
	ctr, err := sb.Detach(id, []string{"/bin/sleep", "1000"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ctr.Delete(true)
	rt := &Runtime{Root: sb.StateRoot(), Rootless: os.Geteuid() != 0}
	loaded, err := rt.Load(id)
	if err != nil || loaded.Status() != Running {
		t.Fatalf("Load: %v %v", err, loaded)
	}
	if _, ok := loaded.Config().Annotations[sandboxOwnerAnnotation]; ok || loaded.Config().ParentDeathSignal != 0 {
		t.Error("a detached sandbox is tied to the process that made it")
	}
	// Another New in the same state root leaves it alone.
	if _, err := New(Options{StateRoot: sb.StateRoot()}); err != nil {
		t.Fatal(err)
	}
	if loaded.Status() != Running {
		t.Fatal("New swept a detached sandbox")
	}
	if err := loaded.Delete(true); err != nil {
		t.Fatal(err)
	}
	checkNothingLeft(t, sb, id)

	for _, o := range []Options{{Limits: Limits{WallTime: time.Second}}, {Limits: Limits{Output: 1 << 20}}} {
		sb := newTestSandbox(t, o)
		var le *LimitError
		if _, err := sb.Detach(id, []string{"/bin/true"}, nil, nil, nil); !errors.As(err, &le) {
			t.Errorf("%+v: %v, want a LimitError", o.Limits, err)
		}
	}
}

// The memory limit holds for each program run in a persistent sandbox
// (the sandbox's cgroup is theirs), and the sandbox outlives the one that
// went over it. In the cgroup v2 VM stage too (scripts/test-cgroup2.sh).
func TestSandboxPersistentMemoryHog(t *testing.T) {
	o, fate := memoryOptions(t, 64*MB)
	sb := startSandbox(t, o)
	res := execOut(t, sb, "exec dd if=/dev/zero of=/dev/null bs=256M count=1")
	wantMemoryHog(t, res, fate)
	res = execOut(t, sb, "echo still here")
	wantRunStatus(t, res, StatusOK)
	if string(res.Stdout) != "still here\n" {
		t.Errorf("after the hog: %q %q", res.Stdout, res.Stderr)
	}
}

// TestSandboxPersistentNewSession: a process Exec starts in a running
// sandbox leads a session and process group of its own, as a Run's does
// (TestSandboxNewSession).
func TestSandboxPersistentNewSession(t *testing.T) {
	sb := startSandbox(t, Options{})
	res := execOut(t, sb, sessionScript)
	wantRunStatus(t, res, StatusOK)
	var pid, pgrp, sid int
	if _, err := fmt.Sscanf(string(res.Stdout), "pid %d pgrp %d sid %d\n", &pid, &pgrp, &sid); err != nil || pid != pgrp || pid != sid || strings.Contains(string(res.Stdout), "tty") {
		t.Errorf("exec'd program: %q, want it leading its session and group (stderr %s)", res.Stdout, res.Stderr)
	}
}

// TestSandboxPersistentCPUTimeForks: an Exec's program is held to the CPU
// time limit as a whole (its process tree, polled), not per process.
func TestSandboxPersistentCPUTimeForks(t *testing.T) {
	sb := startSandbox(t, Options{Limits: Limits{CPUTime: time.Second}})
	res := execOut(t, sb, forkingBurn)
	wantRunStatus(t, res, StatusCPUTimeout)
	if strings.Contains(string(res.Stdout), "finished") {
		t.Errorf("the program finished: report %+v", res.Report)
	}
}
