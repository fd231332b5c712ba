package libbox

// Real sandboxes, run by this test binary (TestMain calls Main, so it is
// their init too). As root they run rootful; TestSandboxRootless runs the
// same tests again as the unprivileged test user.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// rootlessChildEnv marks the run of this binary as the unprivileged user.
const rootlessChildEnv = "NANOBOX_TEST_SANDBOX_ROOTLESS_CHILD"

// rootlessTestUser is the user the integration suites run the runtime as
// (tests/integration/setup-rootless-user.sh creates it).
const rootlessTestUser = "nanobox-test"

func requireSandbox(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 && os.Getenv(rootlessChildEnv) == "" {
		// An ordinary user runs them too when user namespaces work.
		if p := Probe(); !p.UserNamespaces.OK {
			t.Skipf("user namespaces are not available here: %s", p.UserNamespaces.Detail)
		}
	}
}

// newTestSandbox makes a sandbox with a state root of the test's own.
func newTestSandbox(t *testing.T, o Options) *Sandbox {
	t.Helper()
	requireSandbox(t)
	if o.StateRoot == "" {
		o.StateRoot = t.TempDir()
	}
	sb, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return sb
}

// run runs a shell command and checks that nothing was left behind.
func run(t *testing.T, sb *Sandbox, script string) *Result {
	t.Helper()
	res, err := sb.Run(context.Background(), "/bin/sh", "-c", script)
	if err != nil {
		var stderr []byte
		if res != nil {
			stderr = res.Stderr
		}
		t.Fatalf("Run %q: %v\nstderr: %s", script, err, stderr)
	}
	checkNothingLeft(t, sb, res.Report.ID)
	return res
}

// checkNothingLeft fails when the sandbox id left a state directory or a
// cgroup behind.
func checkNothingLeft(t *testing.T, sb *Sandbox, id string) {
	t.Helper()
	if id == "" {
		t.Fatal("report has no sandbox id")
	}
	if _, err := os.Lstat(filepath.Join(sb.StateRoot(), id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory of %s left behind (%v)", id, err)
	}
	for _, dir := range ownCgroupDirs(t) {
		for _, d := range []string{filepath.Join(dir, id), filepath.Join(filepath.Dir(dir), id)} {
			if _, err := os.Lstat(d); err == nil {
				t.Errorf("cgroup %s left behind", d)
			}
		}
	}
}

// ownCgroupDirs are this process's cgroup directories, one per hierarchy.
func ownCgroupDirs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrl := strings.TrimPrefix(parts[1], "name=")
		switch {
		case parts[0] == "0":
			if _, err := os.Stat("/sys/fs/cgroup/unified"); err == nil {
				dirs = append(dirs, filepath.Join("/sys/fs/cgroup/unified", parts[2]))
			} else {
				dirs = append(dirs, filepath.Join("/sys/fs/cgroup", parts[2]))
			}
		case ctrl != "":
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup", strings.Split(ctrl, ",")[0], parts[2]))
		}
	}
	return dirs
}

func wantRunStatus(t *testing.T, res *Result, want RunStatus) {
	t.Helper()
	if res.Report.Status != want {
		t.Fatalf("status %q, want %q (exit %d, signal %d, error %q)\nstdout: %s\nstderr: %s",
			res.Report.Status, want, res.ExitCode, res.Signal, res.Report.Error, res.Stdout, res.Stderr)
	}
}

func wantLimit(t *testing.T, res *Result, n LimitName, st LimitStatus, hit bool) LimitReport {
	t.Helper()
	l, ok := res.Report.Limits[n]
	if !ok {
		t.Fatalf("report has no %s limit: %+v", n, res.Report.Limits)
	}
	if l.Status != st || l.Hit != hit || l.Mechanism == "" && st != LimitUnavailable {
		t.Fatalf("limit %s: %+v, want status %s, hit %v, a mechanism", n, l, st, hit)
	}
	return l
}

func TestSandboxRunEcho(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	res := run(t, sb, "echo hello; echo oops >&2")
	wantRunStatus(t, res, StatusOK)
	if string(res.Stdout) != "hello\n" || string(res.Stderr) != "oops\n" || res.ExitCode != 0 {
		t.Fatalf("stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	r := res.Report
	if r.Version != ContractVersion || !strings.HasPrefix(r.ID, "sb-") || r.WallTime <= 0 || r.PeakMemory <= 0 || r.PeakMemorySource == "" {
		t.Errorf("report %+v", r)
	}
	if r.OutputBytes != 11 || r.OutputTruncated {
		t.Errorf("output bytes %d truncated %v", r.OutputBytes, r.OutputTruncated)
	}
	if r.Isolation.Rootless != (os.Geteuid() != 0) || r.Isolation.Network != NetworkNone || r.Isolation.Seccomp != "default" || r.Isolation.Namespaces != "all" {
		t.Errorf("isolation %+v", r.Isolation)
	}
}

func TestSandboxExitStatuses(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	res := run(t, sb, "exit 3")
	wantRunStatus(t, res, StatusExited)
	if res.ExitCode != 3 || res.Signal != 0 {
		t.Errorf("exit %d signal %d", res.ExitCode, res.Signal)
	}
	// A fault: the program is pid 1 of its pid namespace, which ignores
	// the signals it sends itself, but not the ones the kernel forces.
	res = run(t, sb, `exec perl -e 'unpack "p", pack "L!", 1'`)
	wantRunStatus(t, res, StatusSignaled)
	if res.Signal != unix.SIGSEGV || res.ExitCode != 128+int(unix.SIGSEGV) || res.Report.SignalName != "SIGSEGV" {
		t.Errorf("exit %d signal %d (%s)", res.ExitCode, res.Signal, res.Report.SignalName)
	}
}

func TestSandboxProgramErrors(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	for _, tc := range []struct {
		prog string
		is   error
		code int
	}{
		{"no-such-program-here", ErrProgramNotFound, ExitNotFound},
		{"/no/such/path", ErrProgramNotFound, ExitNotFound},
		{"/etc/passwd", ErrProgramNotExecutable, ExitNotExecutable},
		{"/usr", ErrProgramNotExecutable, ExitNotExecutable},
	} {
		res, err := sb.Run(context.Background(), tc.prog)
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v, want %v", tc.prog, err, tc.is)
			continue
		}
		if res == nil || res.ExitCode != tc.code || res.Report.Status != StatusSetupError || !strings.Contains(res.Report.Error, tc.prog) {
			t.Errorf("%s: result %+v", tc.prog, res)
			continue
		}
		checkNothingLeft(t, sb, res.Report.ID)
	}
}

// The default root, seen from inside.
func TestSandboxDefaultRoot(t *testing.T) {
	sb := newTestSandbox(t, Options{Env: []string{"A=1"}})
	res := run(t, sb, `
		fail() { echo "FAIL: $*" >&2; }
		[ "$(hostname)" = sandbox ] || fail hostname $(hostname)
		[ "$(id -u):$(id -g)" = 0:0 ] || fail ids $(id)
		[ "$(pwd)" = /tmp ] || fail cwd $(pwd)
		touch /newfile 2>/dev/null && fail / is writable
		touch /usr/newfile 2>/dev/null && fail /usr is writable
		touch /etc/newfile 2>/dev/null && fail /etc is writable
		echo x >/tmp/f && [ "$(cat /tmp/f)" = x ] || fail /tmp is not writable
		echo x >/dev/shm/f || fail /dev/shm is not writable
		[ -s /etc/shadow ] && fail /etc/shadow is readable
		for k in /etc/ssh/ssh_host_*_key; do [ -e "$k" ] && [ -s "$k" ] && fail "$k is readable"; done
		[ -s /etc/passwd ] || fail /etc/passwd is missing
		[ -e /home ] && fail /home is visible
		[ -e /root ] && fail /root is visible
		[ -e /run ] && fail /run is visible
		[ -e /sys ] && fail /sys is visible
		ls /dev | tr '\n' ' '; echo
		tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '
		ls -d /proc/[0-9]* | wc -l
		exec 9>/tmp/x; ls /proc/self/fd | tr '\n' ' '; echo
		env | cut -d= -f1 | sort | tr '\n' ' '
	`)
	wantRunStatus(t, res, StatusOK)
	if len(res.Stderr) > 0 {
		t.Errorf("inside the sandbox:\n%s", res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 5 {
		t.Fatalf("output %q", res.Stdout)
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty", "pts", "shm", "ptmx"} {
		if !slices.Contains(strings.Fields(lines[0]), d) {
			t.Errorf("/dev has no %s: %s", d, lines[0])
		}
	}
	if len(strings.Fields(lines[0])) > 16 {
		t.Errorf("/dev has more than the minimal devices: %s", lines[0])
	}
	if lines[1] != "lo" {
		t.Errorf("network interfaces %q, want only lo", lines[1])
	}
	// The shell and ls: a pid namespace of its own.
	if n, _ := strconv.Atoi(strings.TrimSpace(lines[2])); n < 1 || n > 3 {
		t.Errorf("%s processes visible in /proc", lines[2])
	}
	// Only stdio, the fd just opened and ls's own directory fd.
	if got := strings.Fields(lines[3]); !slices.Equal(got, []string{"0", "1", "2", "3", "9"}) {
		t.Errorf("fds inside: %v", got)
	}
	// The environment is what was given, plus HOME and what sh sets.
	for _, k := range strings.Fields(lines[4]) {
		if !slices.Contains([]string{"A", "HOME", "PWD", "OLDPWD", "SHLVL", "_"}, k) {
			t.Errorf("variable %s in the sandbox's environment", k)
		}
	}
}

// A hostile program tries the usual ways out of the default root.
func TestSandboxEscapeAttempts(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	res := run(t, sb, `
		bad() { echo "ESCAPED: $*"; }
		mount -t tmpfs x /tmp 2>/dev/null && bad mount
		mount -o remount,rw / 2>/dev/null && bad remount /
		mount -o remount,rw /usr 2>/dev/null && bad remount /usr
		umount /etc 2>/dev/null && bad umount /etc
		unshare -U true 2>/dev/null && bad unshare user
		unshare -m true 2>/dev/null && bad unshare mount
		chroot / true 2>/dev/null && bad chroot
		mknod /tmp/sda b 8 0 2>/dev/null && bad mknod
		echo 1 >/proc/sys/kernel/sysrq 2>/dev/null && bad write /proc/sys
		echo c >/proc/sysrq-trigger 2>/dev/null && bad sysrq-trigger
		[ -s /proc/kcore ] && head -c 1 /proc/kcore >/dev/null 2>&1 && bad read kcore
		kill -9 -1 2>/dev/null
		ls /proc/1/root/ >/dev/null 2>&1 || true
		[ "$(readlink /proc/1/root)" = / ] || bad /proc/1/root is $(readlink /proc/1/root)
		if cd -P /proc/self/cwd/.. 2>/dev/null; then [ "$(pwd -P)" = / ] || bad cwd escape to $(pwd -P); fi
		ls -a / | grep -q state.json && bad runtime state visible
		touch /dev/x 2>/dev/null; [ -e /dev/sda ] && bad host devices
		echo done
	`)
	// kill -9 -1 in a pid namespace reaches only the sandbox's processes:
	// the shell itself may be among them on some shells.
	if s := res.Report.Status; s != StatusOK && s != StatusSignaled {
		t.Fatalf("status %s: %s %s", s, res.Stdout, res.Stderr)
	}
	if strings.Contains(string(res.Stdout), "ESCAPED") {
		t.Fatalf("escapes:\n%s", res.Stdout)
	}
}

func TestSandboxWallTime(t *testing.T) {
	sb := newTestSandbox(t, Options{Limits: Limits{WallTime: 300 * time.Millisecond}})
	res := run(t, sb, "sleep 30 & sleep 31")
	wantRunStatus(t, res, StatusWallTimeout)
	wantLimit(t, res, LimitWallTime, LimitEnforced, true)
	if !res.Report.Killed || res.Signal != unix.SIGKILL {
		t.Errorf("killed %v signal %d", res.Report.Killed, res.Signal)
	}
	if w := res.Report.WallTime; w < 300*time.Millisecond || w > 20*time.Second {
		t.Errorf("wall time %s", w)
	}
}

// forkingBurn burns 2.4 s of CPU time in four processes of 0.6 s each, two
// at a time, each under a RLIMIT_CPU of 1 s: only a limit on the total
// stops it.
const forkingBurn = `for i in 1 2; do perl -e '1 while (times)[0] < 0.6' & perl -e '1 while (times)[0] < 0.6'; wait; done; echo finished`

// TestSandboxCPUTimeForks: the CPU time limit holds for the sandbox as a
// whole, not per process: with the cgroup's total where the caller has a
// cgroup, and the program's process tree polled from /proc where not.
func TestSandboxCPUTimeForks(t *testing.T) {
	sb := newTestSandbox(t, Options{Limits: Limits{CPUTime: time.Second, WallTime: 60 * time.Second}})
	res := run(t, sb, forkingBurn)
	wantRunStatus(t, res, StatusCPUTimeout)
	wantLimit(t, res, LimitCPUTime, LimitEnforced, true)
	if strings.Contains(string(res.Stdout), "finished") {
		t.Errorf("the program finished: report %+v", res.Report)
	}
}

func TestSandboxCPUTime(t *testing.T) {
	sb := newTestSandbox(t, Options{Limits: Limits{CPUTime: 500 * time.Millisecond, WallTime: 60 * time.Second}})
	res := run(t, sb, "while :; do :; done")
	wantRunStatus(t, res, StatusCPUTimeout)
	wantLimit(t, res, LimitCPUTime, LimitEnforced, true)
	if c := res.Report.CPUTime(); c < 400*time.Millisecond {
		t.Errorf("cpu time %s, below the limit", c)
	}
}

func TestSandboxOutputLimit(t *testing.T) {
	const limit = 64 << 10
	sb := newTestSandbox(t, Options{Limits: Limits{Output: limit, WallTime: 60 * time.Second}})
	res := run(t, sb, "yes flood & yes flood >&2")
	wantRunStatus(t, res, StatusOutputLimit)
	wantLimit(t, res, LimitOutput, LimitEnforced, true)
	if n := len(res.Stdout) + len(res.Stderr); n > limit || n < limit/2 {
		t.Errorf("kept %d bytes of output, limit %d", n, limit)
	}
	if !res.OutputTruncated || res.Report.OutputBytes <= limit {
		t.Errorf("truncated %v, output bytes %d", res.OutputTruncated, res.Report.OutputBytes)
	}
}

// Without an output limit, Run keeps DefaultOutputCap and does not kill.
func TestSandboxOutputDefaultCap(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	res := run(t, sb, "head -c 1000000 /dev/zero")
	wantRunStatus(t, res, StatusOK)
	if len(res.Stdout) != 1000000 || res.OutputTruncated {
		t.Errorf("%d bytes, truncated %v", len(res.Stdout), res.OutputTruncated)
	}
}

func TestSandboxOpenFiles(t *testing.T) {
	sb := newTestSandbox(t, Options{Limits: Limits{OpenFiles: 16}})
	// Open files until the kernel says no (EMFILE), and count the fds.
	res := run(t, sb, `exec perl -e 'my @f; while (open(my $f, "<", "/dev/null")) { push @f, $f } print scalar(@f)+3, " $!\n"'`)
	wantRunStatus(t, res, StatusOK)
	wantLimit(t, res, LimitOpenFiles, LimitEnforced, false)
	if got := strings.TrimSpace(string(res.Stdout)); got != "16 Too many open files" {
		t.Errorf("opened %q (want 16 fds, then EMFILE)", got)
	}
}

// The program is pid 1 of the sandbox, for which the kernel drops
// SIGXFSZ (it has no handler, and a pid namespace's init ignores unhandled
// signals that are not forced): the write fails with EFBIG instead.
func TestSandboxFileSize(t *testing.T) {
	sb := newTestSandbox(t, Options{Limits: Limits{FileSize: 1 * MB}})
	res := run(t, sb, "exec head -c 3000000 /dev/zero >/tmp/big")
	wantRunStatus(t, res, StatusExited)
	if !strings.Contains(string(res.Stderr), "File too large") {
		t.Fatalf("stderr %q, want EFBIG's message", res.Stderr)
	}
	wantLimit(t, res, LimitFileSize, LimitEnforced, false)
	// A child process gets the signal.
	res = run(t, sb, "head -c 3000000 /dev/zero >/tmp/big; echo $?")
	wantRunStatus(t, res, StatusOK)
	if got := strings.TrimSpace(string(res.Stdout)); got != strconv.Itoa(128+int(unix.SIGXFSZ)) {
		t.Errorf("head's exit status %q, want SIGXFSZ's", got)
	}
}

// memoryOptions is a memory limit that this caller can have: enforced by
// a cgroup, or degraded to RLIMIT_AS where there is none.
func memoryOptions(t *testing.T, limit int64) (Options, LimitStatus) {
	o := Options{Limits: Limits{Memory: limit, WallTime: 60 * time.Second}}
	if probeCgroup(os.Geteuid() != 0).has("memory") {
		return o, LimitEnforced
	}
	// Fail closed: refused unless degradation is allowed.
	o.StateRoot = t.TempDir()
	_, err := New(o)
	if err == nil || !strings.Contains(err.Error(), "limits.memory") || !strings.Contains(err.Error(), "allowDegraded") {
		t.Fatalf("memory limit without a cgroup: New error %v, want one naming limits.memory and the fix", err)
	}
	o.AllowDegraded = []LimitName{LimitMemory}
	return o, LimitDegraded
}

func TestSandboxMemoryHog(t *testing.T) {
	o, fate := memoryOptions(t, 64*MB)
	sb := newTestSandbox(t, o)
	// dd fills its 256 MiB buffer: every page is touched.
	res := run(t, sb, "exec dd if=/dev/zero of=/dev/null bs=256M count=1")
	if fate == LimitEnforced {
		wantRunStatus(t, res, StatusOOM)
		wantLimit(t, res, LimitMemory, LimitEnforced, true)
		if !res.Report.OOMKilled || !strings.HasPrefix(res.Report.PeakMemorySource, "cgroup") {
			t.Errorf("oom %v peak source %q", res.Report.OOMKilled, res.Report.PeakMemorySource)
		}
		if p := res.Report.PeakMemory; p > 80*MB || p < 32*MB {
			t.Errorf("peak memory %d, limit %d", p, 64*MB)
		}
		return
	}
	// RLIMIT_AS: the allocation fails, and dd says so.
	wantRunStatus(t, res, StatusExited)
	l := wantLimit(t, res, LimitMemory, LimitDegraded, false)
	if !strings.Contains(l.Mechanism, "RLIMIT_AS") || l.Reason == "" {
		t.Errorf("degraded memory limit %+v", l)
	}
	if !strings.Contains(string(res.Stderr), "memory") {
		t.Errorf("dd stderr %q", res.Stderr)
	}
}

func pidsOptions(t *testing.T, limit int64) (Options, LimitStatus) {
	o := Options{Limits: Limits{Pids: limit, WallTime: 60 * time.Second}}
	if probeCgroup(os.Geteuid() != 0).has("pids") {
		return o, LimitEnforced
	}
	o.StateRoot = t.TempDir()
	_, err := New(o)
	if err == nil || !strings.Contains(err.Error(), "limits.pids") {
		t.Fatalf("pids limit without a cgroup: New error %v, want one naming limits.pids", err)
	}
	o.AllowDegraded = []LimitName{LimitPids}
	return o, LimitDegraded
}

func TestSandboxForkBomb(t *testing.T) {
	o, fate := pidsOptions(t, 8)
	sb := newTestSandbox(t, o)
	// Fork far more processes than allowed, and count how many forks
	// worked: the program itself is one of the 8.
	res := run(t, sb, `exec perl -e 'my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit } $n++ } print "$n\n"'`)
	wantRunStatus(t, res, StatusOK)
	wantLimit(t, res, LimitPids, fate, fate == LimitEnforced)
	if got := strings.TrimSpace(string(res.Stdout)); got != "7" {
		t.Errorf("%q forks worked, want 7 (limit 8 with the program)", got)
	}
}

// forkCounter forks children that sleep until it has forked 40 or a fork
// failed, and prints how many forks worked.
const forkCounter = `my $n = 0; for (1..40) { my $p = fork; last unless defined $p; if (!$p) { sleep 30; exit } $n++ } print "$n\n"`

// TestSandboxSmallPidsLimit: a pids limit below the threads of the
// runtime's Go init (pids.max is written once init is set up, before the
// program runs) runs the program under it: it gets limit-1 forks, and so
// does the same program in a pooled sandbox, which waits for its program
// under the limit and still reports one not found.
func TestSandboxSmallPidsLimit(t *testing.T) {
	for _, limit := range []int64{1, 2} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			o, fate := pidsOptions(t, limit)
			want := fmt.Sprint(limit - 1)
			sb := newTestSandbox(t, o)
			res := run(t, sb, "exec perl -e '"+forkCounter+"'")
			wantRunStatus(t, res, StatusOK)
			wantLimit(t, res, LimitPids, fate, fate == LimitEnforced)
			if got := strings.TrimSpace(string(res.Stdout)); got != want {
				t.Errorf("%q forks worked, want %s (limit %d with the program)", got, want, limit)
			}
			p := newTestPool(t, o, 1)
			res, err := p.Run(context.Background(), "/usr/bin/perl", "-e", forkCounter)
			if err != nil {
				t.Fatal(err)
			}
			wantRunStatus(t, res, StatusOK)
			if got := strings.TrimSpace(string(res.Stdout)); got != want {
				t.Errorf("pooled: %q forks worked, want %s (limit %d with the program)", got, want, limit)
			}
			// A program not found is reported as such: the runtime that
			// reports it must not need threads the limit refuses.
			res, err = p.Run(context.Background(), "/nonexistent/program")
			if err == nil || !strings.Contains(err.Error(), "no such file or directory") || res == nil || res.Report.Status != StatusSetupError {
				var rep any
				if res != nil {
					rep = res.Report
				}
				t.Errorf("pooled, a missing program: %v, report %+v; want a setup error, not found", err, rep)
			}
		})
	}
}

func TestSandboxConcurrentRuns(t *testing.T) {
	sb := newTestSandbox(t, Options{Limits: Limits{WallTime: 120 * time.Second}})
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sb.Run(context.Background(), "/bin/sh", "-c", "echo $0", strconv.Itoa(i))
			switch {
			case err != nil:
				errs <- fmt.Errorf("run %d: %w", i, err)
			case res.Report.Status != StatusOK || string(res.Stdout) != strconv.Itoa(i)+"\n":
				errs <- fmt.Errorf("run %d: status %s stdout %q stderr %q", i, res.Report.Status, res.Stdout, res.Stderr)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ents, err := stateRootEntries(sb.StateRoot()); err != nil || len(ents) != 0 {
		t.Errorf("state root after %d runs: %v %v", n, ents, err)
	}
}

// markerAlive reports whether a process whose command line contains marker
// exists on the host.
func markerAlive(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			return true
		}
	}
	return false
}

// readyFifo is a host directory with a fifo the sandbox writes to once its
// processes are running: the test waits on that event, not on time.
func readyFifo(t *testing.T) (dir, fifo string) {
	dir = t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	fifo = filepath.Join(dir, "ready")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	return dir, fifo
}

// waitFifo waits for a line on fifo, written by a sandbox once it is
// ready; it fails the test if ended is closed first (the sandbox finished,
// or failed, without writing it).
func waitFifo(t *testing.T, fifo string, ended <-chan struct{}) {
	t.Helper()
	// Read-write: the open never blocks, whether a writer comes or not.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(f).ReadString('\n')
		line <- err
	}()
	select {
	case err := <-line:
		if err != nil {
			t.Fatalf("read %s: %v", fifo, err)
		}
	case <-ended:
		t.Fatalf("the sandbox ended before it was ready (nothing on %s)", fifo)
	}
}

func TestSandboxContextCancel(t *testing.T) {
	dir, fifo := readyFifo(t)
	sb := newTestSandbox(t, Options{Mounts: []Bind{{Source: dir, Target: "/sync"}}})
	marker := fmt.Sprintf("%d", 4000000+os.Getpid()%1000000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	ended := make(chan struct{})
	go func() {
		res, err := sb.Run(ctx, "/bin/sh", "-c", "sleep "+marker+" & sleep "+marker+" & echo ok >/sync/ready; wait")
		done <- out{res, err}
		close(ended)
	}()
	waitFifo(t, fifo, ended)
	if !markerAlive("sleep " + marker) {
		t.Fatal("the sandbox's processes are not running")
	}
	cancel()
	o := <-done
	if !errors.Is(o.err, context.Canceled) || o.res == nil {
		t.Fatalf("Run after cancel: %v %+v", o.err, o.res)
	}
	wantRunStatus(t, o.res, StatusCancelled)
	if !o.res.Report.Killed {
		t.Error("report does not say killed")
	}
	if markerAlive("sleep " + marker) {
		t.Error("processes of the cancelled sandbox are still running")
	}
	checkNothingLeft(t, sb, o.res.Report.ID)
}

// Nothing of the caller's is closed, leaked into the sandbox or replaced.
func TestSandboxCallerFDs(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	f, err := os.CreateTemp(t.TempDir(), "caller")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &before); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		res := run(t, sb, "ls /proc/self/fd | wc -l")
		// 0-2, and ls's own directory fd.
		if strings.TrimSpace(string(res.Stdout)) != "4" {
			t.Fatalf("fds in the sandbox: %q", res.Stdout)
		}
	}
	for range 3 {
		runtime.GC()
	}
	var after unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &after); err != nil || after.Ino != before.Ino {
		t.Fatalf("caller's fd %d changed or closed: %v", f.Fd(), err)
	}
	if _, err := f.WriteString("still mine"); err != nil {
		t.Fatalf("caller's file: %v", err)
	}
}

// The sandbox dies with the program that runs it, and the next New in the
// same state root removes what it left.
func TestSandboxOwnerKilled(t *testing.T) {
	requireSandbox(t)
	dir, fifo := readyFifo(t)
	root := t.TempDir()
	marker := fmt.Sprintf("%d", 5000000+os.Getpid()%1000000)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSandboxOwnerHelper$")
	cmd.Env = append(os.Environ(), "NANOBOX_TEST_OWNER_HELPER="+dir+":"+root+":"+marker)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	waitFifo(t, fifo, ended)
	if !markerAlive("sleep " + marker) {
		t.Fatal("the helper's sandbox is not running")
	}
	_ = cmd.Process.Kill()
	<-ended
	// The kernel delivers the parent-death signal as the helper exits;
	// poll for its effect with a generous deadline.
	deadline := time.Now().Add(20 * time.Second)
	for markerAlive("sleep "+marker) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if markerAlive("sleep " + marker) {
		t.Fatal("the sandbox outlived the program that ran it")
	}
	ents, _ := stateRootEntries(root)
	if len(ents) != 1 {
		t.Fatalf("state root after the kill: %v (want the killed sandbox's directory)", ents)
	}
	if _, err := New(Options{StateRoot: root}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := stateRootEntries(root); len(ents) != 0 {
		t.Errorf("New did not remove the dead program's sandbox: %v", ents)
	}
}

// TestSandboxOwnerHelper is TestSandboxOwnerKilled's program to kill.
func TestSandboxOwnerHelper(t *testing.T) {
	env := os.Getenv("NANOBOX_TEST_OWNER_HELPER")
	if env == "" {
		t.Skip("run by TestSandboxOwnerKilled")
	}
	parts := strings.SplitN(env, ":", 3)
	sb, err := New(Options{StateRoot: parts[1], Mounts: []Bind{{Source: parts[0], Target: "/sync"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sb.Run(context.Background(), "/bin/sh", "-c", "sleep "+parts[2]+" & echo ok >/sync/ready; wait")
	t.Fatalf("the helper's sandbox ended before the helper was killed: %v", err)
}

// TestSandboxRootless runs the sandbox tests again as the unprivileged
// test user, from a copy of this binary that user may execute.
func TestSandboxRootless(t *testing.T) {
	if os.Geteuid() != 0 || os.Getenv(rootlessChildEnv) != "" {
		t.Skip("runs as root, and reruns the sandbox tests as " + rootlessTestUser)
	}
	u, err := user.Lookup(rootlessTestUser)
	if err != nil {
		t.Skipf("no user %s (tests/integration/setup-rootless-user.sh creates it): %v", rootlessTestUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(dir); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			_ = os.Chmod(d, fi.Mode().Perm()|0o001)
		}
	}
	bin := filepath.Join(dir, "libbox.test")
	if err := copyTestFile(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, uid, gid); err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^Test(Sandbox|Preset|Confinement)", "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = tmp
	cmd.Env = []string{rootlessChildEnv + "=1", "PATH=/usr/bin:/bin", "HOME=" + tmp, "TMPDIR=" + tmp}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as %s:\n%s", rootlessTestUser, out)
	if err != nil {
		t.Fatalf("the sandbox tests failed as %s: %v%s", rootlessTestUser, err, failedTests(out))
	}
}

// failedTests returns the "--- FAIL" lines of a test binary's output with
// what each failed test logged, so that a failure of the rerun is named in
// the outer test's own message, not only deep in its log. With -test.v the
// log lines come between "=== RUN   Name" and "--- FAIL: Name"; without,
// indented after the FAIL line.
func failedTests(out []byte) string {
	lines := strings.Split(string(out), "\n")
	var b strings.Builder
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "---" || f[1] != "FAIL:" {
			continue
		}
		b.WriteString("\n" + l)
		start := -1
		for j := i - 1; j >= 0; j-- {
			if g := strings.Fields(lines[j]); len(g) == 3 && g[0] == "===" && g[1] == "RUN" && g[2] == f[2] {
				start = j
				break
			}
		}
		var logged []string
		if start >= 0 {
			logged = lines[start+1 : i]
		} else {
			for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "    ") && !strings.Contains(lines[j], "--- "); j++ {
				logged = append(logged, lines[j])
			}
		}
		n := 0
		for _, m := range logged {
			if strings.HasPrefix(strings.TrimSpace(m), "=== ") || strings.Contains(m, "--- PASS") {
				continue
			}
			if n++; n > 20 {
				break
			}
			b.WriteString("\n" + m)
		}
	}
	return b.String()
}

func copyTestFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// A user other than root inside: the one id the sandbox maps is that
// user's (root is then not mapped at all); files it writes to a
// read-write mount belong to the caller on the host.
func TestSandboxNonRootUser(t *testing.T) {
	dir := t.TempDir()
	sb := newTestSandbox(t, Options{User: User{UID: 1000, GID: 1000}, Mounts: []Bind{{Source: dir, Target: "/out"}}})
	res := run(t, sb, "id -u; id -g; cat /proc/self/uid_map | tr -s ' '; echo x >/out/f && echo wrote")
	wantRunStatus(t, res, StatusOK)
	want := fmt.Sprintf("1000\n1000\n 1000 %d 1\nwrote\n", os.Geteuid())
	if string(res.Stdout) != want {
		t.Errorf("stdout %q, want %q (stderr %s)", res.Stdout, want, res.Stderr)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, "f"), &st); err != nil || st.Uid != uint32(os.Geteuid()) {
		t.Errorf("file written from the sandbox: uid %d, %v", st.Uid, err)
	}
}

// TestSandboxBornInCgroup: init is born in the sandbox's cgroup, in every
// hierarchy (clone3 into the cgroup2 one, the v1 ones joined by the stage
// through their tasks files), so the runtime moves no process: the move by
// pid, a cgroup.procs write, is what costs a cold start most on a cgroup v1
// host. The program's cgroup namespace is rooted there, so each of its
// cgroups reads "/".
func TestSandboxBornInCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a rootless sandbox on cgroup v1 has no cgroup to be born in")
	}
	sb := newTestSandbox(t, Options{})
	moves := recordCgroupMoves(t)
	res := run(t, sb, "cat /proc/self/cgroup")
	if moved := moves(); len(moved) != 0 {
		t.Errorf("the runtime moved %v into the sandbox's cgroup: want init born there", moved)
	}
	wantCgroupNSRoot(t, res.Stdout)
}

// TestCreateLateCgroup: a container without a user namespace has its
// cgroup made while the nsenter stage makes its namespaces (the two
// overlap: spawnSpec.lateCgroup), and its init is still born in it, in
// every hierarchy: seen from the host while init waits to be started, with
// nothing moved by the runtime, and from the program, whose cgroup
// namespace is rooted there.
func TestCreateLateCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a container without a user namespace")
	}
	if moved, pid := createLateCgroup(t); len(moved) != 0 {
		t.Errorf("the runtime moved %v (init %d) into the container's cgroup: want init born there", moved, pid)
	}
}

// envRefuseClone3 makes TestCreateLateCgroupWithoutClone3 run its test
// (in a process of its own, started by the test).
const envRefuseClone3 = "NANOBOX_TEST_REFUSE_CLONE3"

// TestCreateLateCgroupWithoutClone3: under a seccomp filter that refuses
// clone3 with ENOSYS (what container runtimes' default profiles do, and so
// what a runtime run in a container meets), the stage cannot clone init
// into the cgroup2 directory: it forks it with clone and says so, and the
// runtime moves init into the cgroup, by pid, once. Create still works,
// and init is in every hierarchy.
func TestCreateLateCgroupWithoutClone3(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a container without a user namespace")
	}
	if os.Getenv(envRefuseClone3) != "1" {
		// The filter holds for every thread of a process and for good:
		// the test runs again in a process of its own.
		cmd := exec.Command(os.Args[0], "-test.run=^TestCreateLateCgroupWithoutClone3$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envRefuseClone3+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestCreateLateCgroupWithoutClone3") {
			t.Fatalf("the test under a filter refusing clone3: %v\n%s", err, out)
		}
		return
	}
	refuseClone3(t)
	if _, _, errno := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0); errno != unix.ENOSYS {
		t.Fatalf("clone3 under the filter: %v, want ENOSYS", errno)
	}
	moved, pid := createLateCgroup(t)
	if len(moved) != 1 || moved[0] != pid {
		t.Errorf("the runtime moved %v into the container's cgroup: want init (%d), once", moved, pid)
	}
}

// refuseClone3 makes clone3 fail with ENOSYS in this process and all it
// starts: a filter of libbox's own (compileSeccomp, seccompProgram.install),
// installed on every thread (TSYNC: the Go runtime's threads included).
func refuseClone3(t *testing.T) {
	t.Helper()
	enosys := uint(unix.ENOSYS)
	p, err := compileSeccomp(&Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{
		{Names: []string{"clone3"}, Action: SeccompErrno, Errno: &enosys},
	}})
	if err != nil {
		t.Fatalf("compile a filter refusing clone3: %v", err)
	}
	p.flags |= unix.SECCOMP_FILTER_FLAG_TSYNC
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatalf("no_new_privs: %v", err)
	}
	if _, err := p.install(); err != nil {
		t.Fatalf("filter refusing clone3: %v", err)
	}
}

// createLateCgroup creates and runs a container that takes the late cgroup
// path (a sandbox's config without its user namespace), checks that init
// is in every hierarchy of its cgroup before start and that the program's
// cgroup namespace is rooted there, and returns the pids the runtime moved
// into the cgroup and init's pid.
func createLateCgroup(t *testing.T) (moved []int, initPid int) {
	t.Helper()
	sb := newTestSandbox(t, Options{})
	cfg := *sb.containerConfig([]string{"/bin/sh", "-c", "cat /proc/self/cgroup"})
	cfg.Namespaces = slices.DeleteFunc(slices.Clone(cfg.Namespaces), func(n Namespace) bool { return n.Type == NEWUSER })
	cfg.UIDMappings, cfg.GIDMappings = nil, nil
	if cloneFlags, joins, err := namespaceFlags(&cfg); err != nil || !lateCgroupOK(&cfg, cloneFlags, joins) {
		t.Fatalf("the config does not take the late cgroup path (%v)", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	moves := recordCgroupMoves(t)
	ctr, err := sb.rt.Create("late-cgroup", &cfg, CreateOpts{Stdout: w, Stderr: w})
	w.Close()
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer func() { _ = ctr.Delete(true) }()
	moved = moves()
	h := ctr.cgroup()
	if h == nil {
		t.Fatal("the container has no cgroup")
	}
	wantInCgroups(t, "init", ctr.Pid(), h.m.GetPaths())
	if err := ctr.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, err := ctr.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	wantCgroupNSRoot(t, out)
	return moved, ctr.Pid()
}

// TestLateCgroupOK: the cgroup is sent to the stage late only where the
// stage forks init as the runtime's own user on the host.
func TestLateCgroupOK(t *testing.T) {
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	for _, tc := range []struct {
		name       string
		flags      uintptr
		joins      []nsenter.Join
		uids, gids []IDMap
		want       bool
	}{
		{"no user namespace", unix.CLONE_NEWNS | unix.CLONE_NEWPID, nil, nil, nil, true},
		{"joined network namespace", unix.CLONE_NEWNS, []nsenter.Join{{Kind: "net", Path: "/proc/1/ns/net"}}, nil, nil, true},
		{"joined user namespace", unix.CLONE_NEWNS, []nsenter.Join{{Kind: "user", Path: "/proc/1/ns/user"}}, nil, nil, false},
		{"joined cgroup namespace", unix.CLONE_NEWNS, []nsenter.Join{{Kind: "cgroup", Path: "/proc/1/ns/cgroup"}}, nil, nil, false},
		{"root mapped to the caller", unix.CLONE_NEWUSER, nil, []IDMap{{0, uid, 1}}, []IDMap{{0, gid, 1}}, true},
		{"root unmapped", unix.CLONE_NEWUSER, nil, []IDMap{{1000, uid, 1}}, []IDMap{{1000, gid, 1}}, true},
		{"root mapped elsewhere", unix.CLONE_NEWUSER, nil, []IDMap{{0, uid + 100000, 65536}}, []IDMap{{0, gid, 1}}, false},
		{"root's group mapped elsewhere", unix.CLONE_NEWUSER, nil, []IDMap{{0, uid, 1}}, []IDMap{{0, gid + 100000, 65536}}, false},
	} {
		cfg := &Config{UIDMappings: tc.uids, GIDMappings: tc.gids}
		if got := lateCgroupOK(cfg, tc.flags, tc.joins); got != tc.want {
			t.Errorf("%s: lateCgroupOK %v, want %v", tc.name, got, tc.want)
		}
	}
}

// wantCgroupNSRoot checks a program's /proc/self/cgroup (out) as seen in
// its cgroup namespace: every hierarchy at "/", the namespace's root, which
// is the cgroup init was in when it made the namespace. (That alone does
// not tell which cgroup that is: wantInCgroups does, from the host.)
func wantCgroupNSRoot(t *testing.T, out []byte) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 && !cgroups.IsCgroup2UnifiedMode() {
		t.Fatalf("the program's cgroups: %q", out)
	}
	for _, line := range lines {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[2] != "/" {
			t.Errorf("the program's cgroup %q: want / (in the sandbox's cgroup before its cgroup namespace)\n%s", line, out)
		}
	}
}

// wantInCgroups checks, from the host, that pid is in every cgroup of
// paths (a cgroup manager's GetPaths: hierarchy name, "" for cgroup2, to
// directory).
func wantInCgroups(t *testing.T, what string, pid int, paths map[string]string) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	in := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			in[ctrl] = parts[2]
		}
	}
	if len(paths) == 0 {
		t.Fatalf("%s: the sandbox has no cgroup paths", what)
	}
	for ctrl, dir := range paths {
		if dir == "" {
			continue
		}
		if p, ok := in[ctrl]; !ok || p == "/" || !strings.HasSuffix(dir, p) {
			t.Errorf("%s (pid %d) is in %q of hierarchy %q, want %s\n%s", what, pid, p, ctrl, dir, b)
		}
	}
}

// recordCgroupMoves records the pids the runtime moves into a cgroup
// (beforeCgroupMove) until the returned function is called, which returns
// them.
func recordCgroupMoves(t *testing.T) func() []int {
	var mu sync.Mutex
	var moved []int
	orig := beforeCgroupMove
	t.Cleanup(func() { beforeCgroupMove = orig })
	beforeCgroupMove = func(pid int) {
		mu.Lock()
		moved = append(moved, pid)
		mu.Unlock()
	}
	return func() []int {
		beforeCgroupMove = orig
		mu.Lock()
		defer mu.Unlock()
		return moved
	}
}

// TestSandboxStateNotFsynced: a sandbox's state is written without fsync
// (Runtime.Ephemeral): nothing reads it after a crash of the host, and an
// fsync on a disk-backed state root waits for the journal on every run.
func TestSandboxStateNotFsynced(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	var mu sync.Mutex
	var synced []string
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	syncDir = func(d string) error {
		mu.Lock()
		synced = append(synced, d)
		mu.Unlock()
		return orig(d)
	}
	run(t, sb, "true")
	syncDir = orig
	if len(synced) > 0 {
		t.Fatalf("a sandbox's state directories were fsynced: %q", synced)
	}
}

// TestSandboxNoSetID: a hostile program in a sandbox tries every way it
// has to leave a setuid or setgid file in a read-write mount (a shell that
// would run as the caller, root included, for whoever executes it on the
// host later): chmod and its variants, a mode at creation (open, openat,
// creat, O_TMPFILE), mknod of a regular file, and openat2, whose mode the
// filter cannot read. Each must fail, and ordinary modes still work.
func TestSandboxNoSetID(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the script uses x86_64 system call numbers")
	}
	for _, profile := range []SeccompProfile{SeccompDefault(), SeccompStrict()} {
		t.Run(profile.Name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			sb := newTestSandbox(t, Options{Seccomp: profile, Mounts: []Bind{{Source: dir, Target: "/w"}}})
			res, err := sb.Run(context.Background(), "/usr/bin/perl", "-e", setIDScript)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantRunStatus(t, res, StatusOK)
			out := string(res.Stdout)
			if strings.Contains(out, "SETID") || !strings.HasSuffix(out, "done\n") {
				t.Errorf("set-id attempts:\n%s%s", out, res.Stderr)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) < 3 {
				t.Fatalf("the script left %d files (%v): %s", len(entries), err, out)
			}
			for _, e := range entries {
				fi, err := e.Info()
				if err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
					t.Errorf("%s is %v on the host", e.Name(), fi.Mode())
				}
			}
		})
	}
}

// setIDScript is TestSandboxNoSetID's program: perl, for its syscall.
const setIDScript = `
use Fcntl;
sub bad { print "SETID: @_\n" }
# syscall passes a string by its address, and wants it writable.
sub p { my $s = shift; return $s }
open(my $f, ">", "/w/plain") or die "create: $!";
close $f;
chmod(0755, "/w/plain") or die "chmod 0755: $!";
chmod(04755, "/w/plain") and bad("chmod 04755");
chmod(02755, "/w/plain") and bad("chmod 02755");
syscall(268, -100, p("/w/plain"), 04755) == -1 or bad("fchmodat");
my $r = syscall(452, -100, p("/w/plain"), 04755, 0);
$r == -1 or bad("fchmodat2");
sysopen(my $g, "/w/plain", O_RDONLY) or die "open: $!";
syscall(91, fileno($g), 02755) == -1 or bad("fchmod");
sysopen(my $h, "/w/created", O_CREAT|O_WRONLY, 0644) or die "open 0644: $!";
sysopen(my $i, "/w/suid", O_CREAT|O_WRONLY, 04755) and bad("open O_CREAT 04755");
syscall(2, p("/w/suid2"), O_CREAT|O_WRONLY, 06755) == -1 or bad("open");
syscall(85, p("/w/suid3"), 04755) == -1 or bad("creat");
syscall(257, -100, p("/w"), 020200000|O_WRONLY, 04755) == -1 or bad("O_TMPFILE");
syscall(133, p("/w/node"), 0100000|04755, 0) == -1 or bad("mknod");
syscall(259, -100, p("/w/node2"), 0100000|02755, 0) == -1 or bad("mknodat");
syscall(133, p("/w/node3"), 0100644, 0) == 0 or die "mknod 0644: $!";
my $how = pack("QQQ", O_CREAT|O_WRONLY, 04755, 0);
if (syscall(437, -100, p("/w/suid4"), $how, length $how) != -1) { bad("openat2") }
elsif ($! != 38) { print "openat2: $!, want ENOSYS\n" }
print "done\n";
`

// sessionScript prints the session and process group of the shell and
// whether /dev/tty opens: a sandbox's program leads a session of its own,
// without a controlling terminal (ExecOpts.NewSession), so that it cannot
// reach its caller's terminal or process group.
const sessionScript = `set -- $(sed 's/^.*) //' /proc/$$/stat); echo "pid $$ pgrp $3 sid $4"; (: </dev/tty) 2>/dev/null && echo tty opened; true`

// TestSandboxNewSession: the program of a Run leads a session and process
// group of its own. In the caller's, it could push input into the
// caller's terminal (TIOCSTI) and signal the caller's process group
// (kill 0); the pid namespace does not prevent either.
func TestSandboxNewSession(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	res := run(t, sb, sessionScript)
	wantRunStatus(t, res, StatusOK)
	if got := string(res.Stdout); got != "pid 1 pgrp 1 sid 1\n" {
		t.Errorf("program: %q, want pid 1 leading its session and group (stderr %s)", got, res.Stderr)
	}
}
