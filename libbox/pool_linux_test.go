package libbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newTestPool(t *testing.T, o Options, n int) *Pool {
	t.Helper()
	requireSandbox(t)
	if o.StateRoot == "" {
		o.StateRoot = t.TempDir()
	}
	p, err := NewPool(o, n)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if err := p.Warm(ctx); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	return p
}

func TestSandboxPoolRun(t *testing.T) {
	// No wall time limit here: on a loaded host a shell may take longer
	// than a short one to start, and the run would fail for nothing. The
	// wall time's pool below runs only a sleep.
	p := newTestPool(t, Options{}, 2)
	ctx := context.Background()
	ids := poolIDs(t, p)
	// Each ready sandbox's mount namespace is held (CreateOpts.holdRefs),
	// so that the program's exit does not take its mounts down (rootless
	// too: init sends it).
	if held := heldMountNamespaces(t); len(held) != 2 {
		t.Errorf("a full pool of 2 holds %d mount namespaces, want 2: %v", len(held), held)
	}
	res, err := p.Run(ctx, "/bin/sh", "-c", "echo hello; echo oops >&2; echo kept >/tmp/f")
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOK)
	if string(res.Stdout) != "hello\n" || string(res.Stderr) != "oops\n" {
		t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	first := res.Report.ID
	ids = append(ids, first)
	// A fresh sandbox every time: nothing of the last run is left.
	res, err = p.Run(ctx, "/bin/sh", "-c", "cat /tmp/f 2>/dev/null || echo fresh")
	if err != nil || string(res.Stdout) != "fresh\n" || res.Report.ID == first {
		t.Fatalf("second run: %v %q (ids %s %s, status %s: %s)", err, res.Stdout, first, res.Report.ID, res.Report.Status, res.Report.Error)
	}
	res, err = p.Run(ctx, "/no/such/program")
	if !errors.Is(err, ErrProgramNotFound) || res == nil || res.ExitCode != ExitNotFound || res.Report.Status != StatusSetupError {
		t.Errorf("missing program: %v %+v", err, res)
	}
	if res != nil {
		ids = append(ids, res.Report.ID)
	}
	ids = append(ids, poolIDs(t, p)...)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Run(cctx, "/bin/true"); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx, "/bin/true"); !errors.Is(err, ErrPoolClosed) {
		t.Errorf("Run after Close: %v", err)
	}
	checkPoolEmpty(t, p, ids)

	// Once p is gone (checkPoolEmpty counts every child of this process).
	wp := newTestPool(t, Options{Limits: Limits{WallTime: 300 * time.Millisecond}}, 1)
	res, err = wp.Run(ctx, "/bin/sleep", "30")
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusWallTimeout)
	wids := append(poolIDs(t, wp), res.Report.ID)
	if err := wp.Close(); err != nil {
		t.Fatal(err)
	}
	checkPoolEmpty(t, wp, wids)
}

// poolIDs are the ids of the pool's sandboxes now in its state root.
func poolIDs(t *testing.T, p *Pool) []string {
	t.Helper()
	ents, err := stateRootEntries(p.Sandbox().StateRoot())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		ids = append(ids, e.Name())
	}
	return ids
}

// checkPoolEmpty fails when a closed pool left anything behind: a state
// directory, a cgroup of one of ids (the pool's sandboxes), a process, a
// mount.
func checkPoolEmpty(t *testing.T, p *Pool, ids []string) {
	t.Helper()
	if ents, err := stateRootEntries(p.Sandbox().StateRoot()); err != nil || len(ents) != 0 {
		t.Errorf("state root after Close: %v %v", ents, err)
	}
	for _, id := range ids {
		checkNothingLeft(t, p.Sandbox(), id)
	}
	if kids := childrenOf(os.Getpid()); len(kids) != 0 {
		var what []string
		for _, k := range kids {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", k))
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k))
			what = append(what, fmt.Sprintf("%s [%s]", strings.TrimSpace(string(stat)), strings.ReplaceAll(string(cmd), "\x00", " ")))
		}
		t.Errorf("processes left behind: %v", what)
	}
	checkNoMounts(t, p.Sandbox().StateRoot())
	if held := heldMountNamespaces(t); len(held) != 0 {
		t.Errorf("mount namespaces still held after Close: %v", held)
	}
}

// heldMountNamespaces lists this process's descriptors that name a mount
// namespace other than its own (a pooled sandbox's, held until destroy).
func heldMountNamespaces(t *testing.T) []string {
	t.Helper()
	own, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, e := range ents {
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && strings.HasPrefix(l, "mnt:[") && l != own {
			held = append(held, e.Name()+" -> "+l)
		}
	}
	return held
}

// checkNoMounts fails when a mount of this mount namespace is under dir.
func checkNoMounts(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			t.Errorf("mount left behind: %s", line)
		}
	}
}

// The descriptors the pool holds for a ready sandbox (its mount
// namespace, the detached mounts' duplicates: CreateOpts.holdRefs) are the
// runtime's, never the program's: a pooled program has only its stdio and
// what it opens itself. A leaked mount namespace descriptor would let it
// setns back into a namespace outside its chroot's view.
func TestSandboxPoolHeldNotInside(t *testing.T) {
	p := newTestPool(t, Options{}, 1)
	res, err := p.Run(context.Background(), "/bin/ls", "-l", "/proc/self/fd/")
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOK)
	var fds []string
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		before, target, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		f := strings.Fields(before)
		fd := f[len(f)-1]
		switch {
		case fd == "0" || fd == "1" || fd == "2":
		case strings.HasPrefix(target, "/proc/") && strings.HasSuffix(target, "/fd"):
			// ls's own descriptor of the directory it lists.
		default:
			t.Errorf("the pooled program has descriptor %s -> %s", fd, target)
		}
		fds = append(fds, fd)
	}
	if len(fds) < 3 {
		t.Fatalf("ls listed %d descriptors, want at least stdio: %q", len(fds), res.Stdout)
	}
}

// 1000 runs through a pool, two at a time: none fails, and nothing is
// left once it is closed.
func TestSandboxPoolThousandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1000 sandboxes")
	}
	p := newTestPool(t, Options{}, 4)
	const runs, workers = 1000, 2
	var next, failed atomic.Int64
	var idsMu sync.Mutex
	ids := poolIDs(t, p)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= runs {
				res, err := p.Run(context.Background(), "/bin/true")
				if res != nil {
					idsMu.Lock()
					ids = append(ids, res.Report.ID)
					idsMu.Unlock()
				}
				if err == nil && res.Report.Status != StatusOK {
					err = fmt.Errorf("status %s: %s", res.Report.Status, res.Report.Error)
				}
				if err != nil {
					if failed.Add(1) <= 10 {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d pooled runs failed", n, runs)
	}
	ids = append(ids, poolIDs(t, p)...)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	checkPoolEmpty(t, p, ids)
}

// A pooled program runs under the sandbox's filters whether its init
// applied them before it waited (a built-in profile) or right before
// execve (a caller's profile, which may deny what the Go runtime of a
// waiting init needs): seccomp in filter mode, Landlock in force (a
// read-write mount not writable under a read-only rule), the strict
// profile's denials in force (flock).
func TestSandboxPoolFilters(t *testing.T) {
	// The strict profile again, as the caller's own: applied the late way.
	custom, err := SandboxSeccomp(SeccompProfileStrict)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		sc    SeccompProfile
		flock string
	}{
		{"strict", SeccompStrict(), "denied"},
		{"custom", CustomSeccomp(custom), "denied"},
		{"default", SeccompDefault(), "allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := newTestPool(t, Options{Seccomp: tc.sc, Landlock: &Landlock{ReadOnly: []string{"/"}, ReadWrite: []string{"/dev", "/tmp"}}, Mounts: []Bind{{Source: dir, Target: "/out"}}}, 1)
			res, err := p.Run(context.Background(), "/bin/sh", "-c",
				`grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status | tr -s '\t ' ' '
if flock /tmp -c true 2>/dev/null; then echo flock allowed; else echo flock denied; fi
if echo x >/out/f 2>/dev/null; then echo write allowed; else echo write denied; fi`)
			if err != nil {
				t.Fatal(err)
			}
			wantRunStatus(t, res, StatusOK)
			want := "NoNewPrivs: 1\nSeccomp: 2\nflock " + tc.flock + "\nwrite denied\n"
			if string(res.Stdout) != want {
				t.Errorf("stdout %q, want %q (stderr %q)", res.Stdout, want, res.Stderr)
			}
		})
	}
}

// A pooled sandbox has the sandbox's limits: the memory limit (the
// sandbox's cgroup, or RLIMIT_AS set by the deferred init after its
// program came, when the limit is degraded) and the pids limit. In the
// cgroup v2 VM stage too (scripts/test-cgroup2.sh).
func TestSandboxPoolLimits(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		o, fate := memoryOptions(t, 64*MB)
		p := newTestPool(t, o, 1)
		res, err := p.Run(context.Background(), "/bin/sh", "-c", "exec dd if=/dev/zero of=/dev/null bs=256M count=1")
		if err != nil {
			t.Fatal(err)
		}
		wantMemoryHog(t, res, fate)
		if fate == LimitEnforced && !strings.HasPrefix(res.Report.PeakMemorySource, "cgroup") {
			t.Errorf("peak memory source %q", res.Report.PeakMemorySource)
		}
	})
	t.Run("pids", func(t *testing.T) {
		o, fate := pidsOptions(t, 8)
		p := newTestPool(t, o, 1)
		res, err := p.Run(context.Background(), "/usr/bin/perl", "-e", `my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit } $n++ } print "$n\n"`)
		if err != nil {
			t.Fatal(err)
		}
		wantRunStatus(t, res, StatusOK)
		wantLimit(t, res, LimitPids, fate, fate == LimitEnforced)
		if got := strings.TrimSpace(string(res.Stdout)); got != "7" {
			t.Errorf("%q forks worked, want 7 (limit 8 with the program)", got)
		}
	})
}

// wantMemoryHog checks the result of dd filling a 256 MiB buffer under a
// 64 MiB memory limit: OOM-killed by the cgroup, or, degraded to
// RLIMIT_AS, its allocation failed.
func wantMemoryHog(t *testing.T, res *Result, fate LimitStatus) {
	t.Helper()
	if fate == LimitEnforced {
		wantRunStatus(t, res, StatusOOM)
		wantLimit(t, res, LimitMemory, LimitEnforced, true)
		if !res.Report.OOMKilled {
			t.Error("the report says no OOM kill")
		}
		return
	}
	wantRunStatus(t, res, StatusExited)
	l := wantLimit(t, res, LimitMemory, LimitDegraded, false)
	if !strings.Contains(l.Mechanism, "RLIMIT_AS") {
		t.Errorf("degraded memory limit %+v", l)
	}
	if !strings.Contains(string(res.Stderr), "memory") {
		t.Errorf("dd stderr %q", res.Stderr)
	}
}

// A pooled report reads its sandbox's cgroup through the files opened
// ahead (prefetchStats): the CPU time and the peak memory come from the
// cgroup, as a cold run's do.
func TestSandboxPoolReportFromCgroup(t *testing.T) {
	p := newTestPool(t, Options{}, 1)
	res, err := p.Run(context.Background(), "/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOK)
	rep := res.Report
	if rep.Isolation.Cgroup == "" {
		t.Skip("no cgroup for this caller here: the report measures with rusage")
	}
	if rep.CPUSource != "cgroup" || rep.CPUTime() <= 0 {
		t.Errorf("CPU %v from %q, want some from the cgroup", rep.CPUTime(), rep.CPUSource)
	}
	if !strings.HasPrefix(rep.PeakMemorySource, "cgroup") || rep.PeakMemory <= 0 {
		t.Errorf("peak memory %d from %q, want some from the cgroup", rep.PeakMemory, rep.PeakMemorySource)
	}
}
