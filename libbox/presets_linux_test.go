package libbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPresetsAreData(t *testing.T) {
	ws := t.TempDir()
	o := AgentExecutor(ws)
	if !reflect.DeepEqual(o.Mounts, []Bind{{Source: ws, Target: WorkspaceDir}}) || len(o.Tmpfs) != 1 {
		t.Errorf("workspace without .git: mounts %+v tmpfs %+v", o.Mounts, o.Tmpfs)
	}
	writeTestFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
	o = AgentExecutor(ws)
	want := []Bind{
		{Source: ws, Target: WorkspaceDir},
		{Source: filepath.Join(ws, ".git"), Target: "/workspace/.git", ReadOnly: true},
	}
	if !reflect.DeepEqual(o.Mounts, want) || len(o.Tmpfs) != 1 {
		t.Errorf("mounts %+v, tmpfs %+v, want %+v", o.Mounts, o.Tmpfs, want)
	}
	if _, err := Preset("code-judge", "a", "b"); err == nil || !strings.Contains(err.Error(), "takes 1 directory") {
		t.Errorf("code-judge with two dirs: %v", err)
	}
	if _, err := Preset("data-analysis"); err == nil || !strings.Contains(err.Error(), "INPUT,OUTPUT") {
		t.Errorf("data-analysis without dirs: %v", err)
	}
	if _, err := Preset("bogus"); err == nil || !strings.Contains(err.Error(), "agent-executor, code-judge, data-analysis") {
		t.Errorf("unknown preset: %v", err)
	}
	j := CodeJudge("/s")
	if j.Seccomp.name() != "strict" || j.Network.mode() != NetworkNone || len(j.AllowDegraded) != 0 || j.Limits.Memory == 0 || j.Limits.Pids == 0 || j.Limits.CPUTime == 0 || j.Limits.WallTime == 0 {
		t.Errorf("code-judge %+v", j)
	}
	for _, o := range []Options{AgentExecutor(ws), CodeJudge(ws), DataAnalysis(ws, ws)} {
		if err := o.Validate(); err != nil {
			t.Errorf("preset does not validate: %v", err)
		}
	}
}

func TestPresetAgentExecutor(t *testing.T) {
	for _, hooks := range []bool{true, false} {
		t.Run(fmt.Sprintf("hooks=%v", hooks), func(t *testing.T) {
			ws := t.TempDir()
			writeTestFile(t, filepath.Join(ws, "main.go"), "package main\n")
			writeTestFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
			writeTestFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
			if hooks {
				writeTestFile(t, filepath.Join(ws, ".git", "hooks", "README"), "sample\n")
			}
			o := AgentExecutor(ws)
			o.StateRoot = t.TempDir()
			o.Env = append(o.Env, fmt.Sprintf("HOOKS=%d", map[bool]int{false: 0, true: 1}[hooks]))
			sb := newTestSandbox(t, o)
			res := run(t, sb, `
				bad() { echo "BAD: $*"; }
				[ "$(pwd)" = /workspace ] || bad cwd $(pwd)
				echo built >/workspace/out.txt || bad workspace not writable
				[ "$(cat /workspace/.git/HEAD)" = "ref: refs/heads/main" ] || bad .git not readable
				echo '[core] fsmonitor = evil' >>/workspace/.git/config 2>/dev/null && bad config written
				mkdir -p /workspace/.git/hooks 2>/dev/null
				echo evil >/workspace/.git/hooks/pre-commit 2>/dev/null && bad hook planted
				# git takes config and hooks from where commondir says.
				echo /workspace/evil >/workspace/.git/commondir 2>/dev/null && bad commondir written
				mkdir -p /workspace/.git/modules/m 2>/dev/null && bad submodule gitdir made
				echo x >>/workspace/.git/index 2>/dev/null && bad index written
				echo x >>/workspace/.git/HEAD 2>/dev/null && bad HEAD written
				mv /workspace/.git /workspace/moved 2>/dev/null && bad .git moved
				rm -rf /workspace/.git/hooks 2>/dev/null; [ -d /workspace/.git/hooks ] || [ "$HOOKS" = 0 ] || bad hooks removed
				touch /usr/x 2>/dev/null && bad /usr writable
				echo ok
			`)
			wantRunStatus(t, res, StatusOK)
			if got := string(res.Stdout); got != "ok\n" {
				t.Fatalf("inside the sandbox:\n%s%s", got, res.Stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "built\n" {
				t.Errorf("out.txt on the host: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(b) != "[core]\n" {
				t.Errorf(".git/config changed: %q", b)
			}
			if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
				t.Error("a hook was planted")
			}
			for _, name := range []string{"commondir", "modules"} {
				if _, err := os.Lstat(filepath.Join(ws, ".git", name)); err == nil {
					t.Errorf(".git/%s was made", name)
				}
			}
			// Generous limits, degraded where the host has no cgroup.
			for _, n := range []LimitName{LimitMemory, LimitPids} {
				if l := res.Report.Limits[n]; l.Status != LimitEnforced && l.Status != LimitDegraded {
					t.Errorf("%s: %+v", n, l)
				}
			}
		})
	}
}

// judgeOptions is the code-judge preset; on a host without a cgroup for
// this caller it fails closed, and the test then allows degradation to
// exercise the rest.
func judgeOptions(t *testing.T, submission string) Options {
	o := CodeJudge(submission)
	o.StateRoot = t.TempDir()
	if probeCgroup(os.Geteuid() != 0).has("memory") {
		return o
	}
	_, err := New(o)
	if err == nil || !strings.Contains(err.Error(), "limits.memory") {
		t.Fatalf("code-judge without a cgroup: New error %v, want limits.memory refused", err)
	}
	o.AllowDegraded = []LimitName{LimitMemory, LimitPids, LimitCPUs}
	return o
}

func TestPresetCodeJudge(t *testing.T) {
	sub := t.TempDir()
	writeTestFile(t, filepath.Join(sub, "main.sh"), "echo answer 42\n")
	o := judgeOptions(t, sub)
	// Six perls and shells take more than the judge's 5 s of CPU under
	// software emulation (the cgroup v2 VM): the limits are not what this
	// test is about (TestPresetsAreData has them).
	o.Limits.CPUTime, o.Limits.WallTime = time.Minute, 10*time.Minute
	sb := newTestSandbox(t, o)
	// The system calls by number (x86_64), through perl's syscall().
	res := run(t, sb, `
		bad() { echo "BAD: $*"; }
		[ "$(sh /submission/main.sh)" = "answer 42" ] || bad cannot run the submission
		touch /submission/x 2>/dev/null && bad submission writable
		echo scratch >/tmp/s || bad no scratch
		[ "$(hostname)" = judge ] || bad hostname
		perl -e 'exit(syscall(101, 0, 0, 0, 0) == -1 ? 0 : 1)' || bad ptrace allowed
		perl -e 'exit(syscall(250, 0, 0) == -1 ? 0 : 1)' || bad keyctl allowed
		perl -e 'exit(syscall(248, 0, 0, 0, 0, 0) == -1 ? 0 : 1)' || bad add_key allowed
		perl -e 'exit(syscall(425, 1, 0) == -1 ? 0 : 1)' || bad io_uring_setup allowed
		perl -e 'open(F, "<", "/submission/main.sh"); exit(flock(F, 2) ? 1 : 0)' || bad flock allowed
		echo ok
	`)
	wantRunStatus(t, res, StatusOK)
	if got := string(res.Stdout); got != "ok\n" {
		t.Fatalf("inside the judge:\n%s%s", got, res.Stderr)
	}
	if res.Report.Isolation.Seccomp != "strict" {
		t.Errorf("seccomp %q", res.Report.Isolation.Seccomp)
	}
}

// Two judge boxes at once cannot reach each other: abstract unix sockets
// (network namespace), SysV shared memory (IPC namespace), /dev/shm.
func TestPresetCodeJudgeInterBox(t *testing.T) {
	dir, fifo := readyFifo(t)
	o := judgeOptions(t, t.TempDir())
	o.Mounts = append(o.Mounts, Bind{Source: dir, Target: "/sync"})
	// The first box lives until the second has run: on a loaded host
	// that can take longer than the judge's wall time, which is not what
	// this test is about (TestPresetCodeJudge checks the preset's limits).
	o.Limits.WallTime = 10 * time.Minute
	sb := newTestSandbox(t, o)
	name := fmt.Sprintf("nbx-judge-%d", os.Getpid())
	listener := fmt.Sprintf(`
		use Socket;
		socket(S, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
		bind(S, pack_sockaddr_un("\0%s")) or die "bind: $!";
		listen(S, 5) or die "listen: $!";
		shmget(4242, 4096, 01666) // die "shmget: $!";
		open(F, ">", "/dev/shm/box-a") or die "shm file: $!";
		# The same box reaches its own socket.
		socket(C, PF_UNIX, SOCK_STREAM, 0); connect(C, pack_sockaddr_un("\0%s")) or die "self connect: $!";
		open(R, ">", "/sync/ready") or die; print R "ready\n"; close(R);
		accept(A, S); sleep 1000;
	`, name, name)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result, 1)
	ended := make(chan struct{})
	go func() {
		res, _ := sb.Run(ctx, "perl", "-e", listener)
		done <- res
		close(ended)
	}()
	waitFifo(t, fifo, ended)
	res := run(t, sb, fmt.Sprintf(`exec perl -e '
		use Socket;
		socket(C, PF_UNIX, SOCK_STREAM, 0) or die;
		print connect(C, pack_sockaddr_un("\0%s")) ? "connected\n" : "refused\n";
		print defined(shmget(4242, 0, 0)) ? "shm shared\n" : "shm private\n";
		print -e "/dev/shm/box-a" ? "devshm shared\n" : "devshm private\n";'`, name))
	cancel()
	a := <-done
	if a == nil || a.Report.Status != StatusCancelled {
		if a != nil {
			t.Fatalf("first box: status %s (%s), stderr %q", a.Report.Status, a.Report.Error, a.Stderr)
		}
		t.Fatal("first box: no result")
	}
	if len(a.Stderr) > 0 {
		t.Fatalf("first box failed: %s", a.Stderr)
	}
	if got, want := string(res.Stdout), "refused\nshm private\ndevshm private\n"; got != want {
		t.Errorf("second box saw:\n%s%s\nwant:\n%s", got, res.Stderr, want)
	}
}

func TestPresetDataAnalysis(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(in, "data.csv"), "a,b\n1,2\n3,4\n")
	o := DataAnalysis(in, out)
	o.StateRoot = t.TempDir()
	sb := newTestSandbox(t, o)
	res := run(t, sb, `
		[ "$(pwd)" = /output ] || echo "BAD cwd $(pwd)"
		touch /input/x 2>/dev/null && echo "BAD input writable"
		tail -n +2 /input/data.csv | awk -F, '{s += $1 + $2} END {print s}' >/output/sum.txt
	`)
	wantRunStatus(t, res, StatusOK)
	if len(res.Stdout) > 0 {
		t.Errorf("inside: %s", res.Stdout)
	}
	if b, err := os.ReadFile(filepath.Join(out, "sum.txt")); err != nil || string(b) != "10\n" {
		t.Errorf("result on the host: %q %v", b, err)
	}
	if ents, _ := os.ReadDir(in); len(ents) != 1 {
		t.Errorf("input changed: %v", ents)
	}
}
