package libbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/console"
	"golang.org/x/sys/unix"
)

// spawn starts a shell script in sb and makes sure the child is killed and
// waited for when the test ends, whatever happened.
func spawn(t *testing.T, sb *Sandbox, stdio Stdio, script string) *Child {
	t.Helper()
	c, err := sb.Spawn(context.Background(), "/bin/sh", []string{"-c", script}, stdio)
	if err != nil {
		t.Fatalf("Spawn %q: %v", script, err)
	}
	t.Cleanup(func() {
		_ = c.Kill()
		if c.Stdout != nil {
			go func() { _, _ = io.Copy(io.Discard, c.Stdout) }()
		}
		if c.Stderr != nil {
			go func() { _, _ = io.Copy(io.Discard, c.Stderr) }()
		}
		_, _ = c.Wait()
	})
	return c
}

// reader keeps what expect read past a match for the next expect.
type reader struct {
	r       io.Reader
	pending []byte
}

var (
	readersMu sync.Mutex
	readers   = map[io.Reader]*reader{}
)

func readerOf(r io.Reader) *reader {
	readersMu.Lock()
	defer readersMu.Unlock()
	if rd, ok := readers[r]; ok {
		return rd
	}
	rd := &reader{r: r}
	readers[r] = rd
	return rd
}

// expect reads r until want has been seen, and returns what was read up to
// the end of it (the rest is kept for the next expect on r); the test
// fails, and the child is killed, if r ends first or nothing comes for a
// long while.
func expect(t *testing.T, c *Child, r io.Reader, want string) string {
	t.Helper()
	rd := readerOf(r)
	type result struct {
		got string
		err error
	}
	done := make(chan result, 1)
	go func() {
		got := rd.pending
		buf := make([]byte, 4096)
		for {
			if i := bytes.Index(got, []byte(want)); i >= 0 {
				end := i + len(want)
				rd.pending = append([]byte(nil), got[end:]...)
				done <- result{string(got[:end]), nil}
				return
			}
			n, err := rd.r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil && n == 0 {
				done <- result{string(got), err}
				return
			}
		}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("waiting for %q: %v; got %q; %s", want, res.err, res.got, outcome(c))
		}
		return res.got
	case <-time.After(60 * time.Second):
		_ = c.Kill()
		t.Fatalf("no %q from the program in 60s", want)
	}
	return ""
}

// outcome says how the program ended, for a failure message: whether the
// output stopped because it exited, was killed, or is still running.
func outcome(c *Child) string {
	done := make(chan string, 1)
	go func() {
		res, err := c.Wait()
		if err != nil {
			done <- fmt.Sprintf("Wait: %v", err)
			return
		}
		done <- fmt.Sprintf("the program ended: status %s, exit %d, signal %d, error %q", res.Report.Status, res.ExitCode, res.Signal, res.Report.Error)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(10 * time.Second):
		return "the program is still running"
	}
}

func wantResult(t *testing.T, c *Child, want RunStatus, code int) *Result {
	t.Helper()
	res, err := c.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if res.Report.Status != want || res.ExitCode != code {
		t.Fatalf("status %s exit %d (error %q), want %s exit %d", res.Report.Status, res.ExitCode, res.Report.Error, want, code)
	}
	return res
}

func TestSandboxSpawnPipes(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	c := spawn(t, sb, Stdio{Stdin: Pipe}, `read x; echo "got $x"; echo oops >&2; read y || echo eof`)
	if c.Pid() <= 0 || c.Pidfd() < 0 {
		t.Fatalf("pid %d pidfd %d", c.Pid(), c.Pidfd())
	}
	if err := unix.PidfdSendSignal(c.Pidfd(), 0, nil, 0); err != nil {
		t.Fatalf("pidfd: %v", err)
	}
	if _, err := io.WriteString(c.Stdin, "hello\n"); err != nil {
		t.Fatal(err)
	}
	expect(t, c, c.Stdout, "got hello\n")
	if err := c.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	var stderr []byte
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); stderr, _ = io.ReadAll(c.Stderr) }()
	rest, err := io.ReadAll(c.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	res := wantResult(t, c, StatusOK, 0)
	if string(rest) != "eof\n" || string(stderr) != "oops\n" {
		t.Errorf("stdout rest %q stderr %q", rest, stderr)
	}
	if res.Report.OutputBytes != int64(len("got hello\neof\noops\n")) || res.Report.WallTime <= 0 {
		t.Errorf("report: output %d wall %s", res.Report.OutputBytes, res.Report.WallTime)
	}
	if c.Report() != res.Report {
		t.Error("Report() is not Wait's report")
	}
	checkNothingLeft(t, sb, res.Report.ID)
}

// Wait on output nobody reads returns ErrUndrained instead of hanging; the
// program is still there, and finishes once the output is read.
func TestSandboxSpawnUndrained(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	const size = 1 << 20
	c := spawn(t, sb, Stdio{}, fmt.Sprintf("head -c %d /dev/zero; echo done >&2", size))
	_, err := c.Wait()
	if !errors.Is(err, ErrUndrained) || !strings.Contains(err.Error(), "stdout") {
		t.Fatalf("Wait on an undrained stdout: %v, want ErrUndrained naming stdout", err)
	}
	if c.Report() != nil {
		t.Fatal("the program ended while its output was not read")
	}
	res, err := c.WaitWithOutput()
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOK)
	if len(res.Stdout) != size || string(res.Stderr) != "done\n" || res.Report.OutputBytes != size+5 {
		t.Errorf("stdout %d bytes, stderr %q, report %d bytes", len(res.Stdout), res.Stderr, res.Report.OutputBytes)
	}
	checkNothingLeft(t, sb, res.Report.ID)
}

// What is left in a pipe when the program exits can be read after Wait.
func TestSandboxSpawnReadAfterWait(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	c := spawn(t, sb, Stdio{Stderr: Null}, "echo one; echo two")
	res := wantResult(t, c, StatusOK, 0)
	if c.Stderr != nil {
		t.Error("Stderr is set for a Null stream")
	}
	out, err := io.ReadAll(c.Stdout)
	if err != nil || string(out) != "one\ntwo\n" {
		t.Errorf("after Wait: %q %v", out, err)
	}
	if res.Report.OutputBytes != 8 {
		t.Errorf("report counts %d bytes", res.Report.OutputBytes)
	}
}

func TestSandboxSpawnOutputLimit(t *testing.T) {
	const limit = 64 << 10
	sb := newTestSandbox(t, Options{Limits: Limits{Output: limit, WallTime: 60 * time.Second}})
	c := spawn(t, sb, Stdio{}, "yes flood & yes flood >&2")
	res, err := c.WaitWithOutput()
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOutputLimit)
	wantLimit(t, res, LimitOutput, LimitEnforced, true)
	if n := len(res.Stdout) + len(res.Stderr); n > limit || n < limit/2 {
		t.Errorf("kept %d bytes, limit %d", n, limit)
	}
	if !res.OutputTruncated {
		t.Error("not marked truncated")
	}
	checkNothingLeft(t, sb, res.Report.ID)
}

// A caller's file, relayed through the output limit when there is one.
func TestSandboxSpawnFiles(t *testing.T) {
	for _, limit := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			sb := newTestSandbox(t, Options{Limits: Limits{Output: limit}})
			dir := t.TempDir()
			in, err := os.Create(filepath.Join(dir, "in"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.WriteString("from a file\n"); err != nil {
				t.Fatal(err)
			}
			if _, err := in.Seek(0, 0); err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			errf, err := os.Create(filepath.Join(dir, "err"))
			if err != nil {
				t.Fatal(err)
			}
			defer errf.Close()
			c := spawn(t, sb, Stdio{Stdin: File(in), Stdout: File(out), Stderr: File(errf)}, "cat; echo err >&2")
			if c.Stdin != nil || c.Stdout != nil || c.Stderr != nil {
				t.Fatal("the Child has pipes for files of the caller's")
			}
			wantResult(t, c, StatusOK, 0)
			// The caller's files are still open, and still the caller's.
			if _, err := out.WriteString("mine\n"); err != nil {
				t.Fatalf("caller's file closed: %v", err)
			}
			in.Close()
			out.Close()
			b, _ := os.ReadFile(filepath.Join(dir, "out"))
			e, _ := os.ReadFile(filepath.Join(dir, "err"))
			if string(b) != "from a file\nmine\n" || string(e) != "err\n" {
				t.Errorf("files hold %q and %q", b, e)
			}
		})
	}
}

// Kill ends the whole sandbox: the program and what it started.
func TestSandboxSpawnKill(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	marker := fmt.Sprintf("%d", 6000000+os.Getpid()%1000000)
	c := spawn(t, sb, Stdio{}, "sleep "+marker+" & sleep "+marker+" & echo ready; wait")
	expect(t, c, c.Stdout, "ready\n")
	if !markerAlive("sleep " + marker) {
		t.Fatal("the program's processes are not running")
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	res, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusCancelled)
	if !res.Report.Killed || res.Signal != unix.SIGKILL {
		t.Errorf("killed %v signal %d", res.Report.Killed, res.Signal)
	}
	if markerAlive("sleep " + marker) {
		t.Error("processes of the killed sandbox are still running")
	}
	if err := c.Signal(unix.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after the end: %v", err)
	}
	checkNothingLeft(t, sb, res.Report.ID)
}

func TestSandboxSpawnSignalAndContext(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	c := spawn(t, sb, Stdio{Stdin: Pipe}, `trap 'echo term; exit 3' TERM; echo ready; read x`)
	expect(t, c, c.Stdout, "ready\n")
	if err := c.Signal(unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res, err := c.WaitWithOutput()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "term\n" {
		t.Errorf("exit %d stdout %q", res.ExitCode, res.Stdout)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c2, err := sb.Spawn(ctx, "/bin/sh", []string{"-c", "echo ready; exec sleep 1000"}, Stdio{})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, c2, c2.Stdout, "ready\n")
	cancel()
	res, err = c2.Wait()
	if !errors.Is(err, context.Canceled) || res == nil || res.Report.Status != StatusCancelled {
		t.Fatalf("Wait after cancel: %v %+v", err, res)
	}
}

func TestSandboxSpawnErrors(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	if _, err := sb.Spawn(context.Background(), "/no/such/program", nil, Stdio{}); !errors.Is(err, ErrProgramNotFound) {
		t.Errorf("missing program: %v", err)
	}
	t1, t2 := PTY(24, 80), PTY(24, 80)
	for _, tc := range []struct {
		stdio Stdio
		want  string
	}{
		{Stdio{Stdin: t1, Stdout: t2}, "two different Terminals"},
		{Stdio{Stdout: t1, Stderr: Pipe}, "stderr is pipe"},
		{Stdio{Stdin: File(nil)}, "File(nil)"},
	} {
		if _, err := sb.Spawn(context.Background(), "/bin/true", nil, tc.stdio); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("stdio %+v: %v, want %q", tc.stdio, err, tc.want)
		}
	}
	if ents, err := stateRootEntries(sb.StateRoot()); err != nil || len(ents) != 0 {
		t.Errorf("state root after failed spawns: %v %v", ents, err)
	}
}

// A PTY made by libbox: the window size seen inside, resize (SIGWINCH),
// line editing, and ^C reaching the program's foreground job.
func TestSandboxSpawnPTY(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	term := PTY(24, 80)
	c := spawn(t, sb, Stdio{Stdout: term}, `
		trap 'echo "winch $(stty size)"' WINCH
		trap 'echo got-int' INT
		stty size; tty; echo ready
		# A WINCH interrupts read: read again.
		until read a; do :; done; echo "line:$a"
		# The job says it runs; ^C kills it before or after its exec.
		sh -c 'echo job; exec sleep 1000' || echo "job $?"
		read b`)
	out := expect(t, c, c.Stdout, "ready")
	if !strings.Contains(out, "24 80") || !strings.Contains(out, "/dev/pts/0") {
		t.Fatalf("inside the pty: %q", out)
	}
	if err := term.Resize(30, 100); err != nil {
		t.Fatal(err)
	}
	expect(t, c, c.Stdout, "winch 30 100")
	// The terminal's line discipline edits the line: DEL erases a char.
	if _, err := io.WriteString(c.Stdin, "abx\x7fc\r"); err != nil {
		t.Fatal(err)
	}
	expect(t, c, c.Stdout, "line:abc")
	expect(t, c, c.Stdout, "job")
	// ^C: SIGINT to the foreground process group: the shell's trap, and
	// sleep killed.
	if _, err := io.WriteString(c.Stdin, "\x03"); err != nil {
		t.Fatal(err)
	}
	if out := expect(t, c, c.Stdout, "job 130"); !strings.Contains(out, "got-int") {
		t.Errorf("^C did not reach the shell: %q", out)
	}
	if _, err := io.WriteString(c.Stdin, "bye\r"); err != nil {
		t.Fatal(err)
	}
	res, err := c.WaitWithOutput()
	if err != nil {
		t.Fatal(err)
	}
	wantRunStatus(t, res, StatusOK)
	checkNothingLeft(t, sb, res.Report.ID)
}

// A pty of the caller's, its slave passed as a File: the program's
// controlling terminal.
func TestSandboxSpawnCallerPTY(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	master, slavePath, err := console.NewPty()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	if err := master.Resize(console.WinSize{Height: 33, Width: 120}); err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(slavePath, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	// The program waits for a last line before it exits: output the
	// slave wrote just before its last holder closed it may reach the
	// master after the master's read has seen the hang-up (EIO), and was
	// lost that way under load.
	c := spawn(t, sb, Stdio{Stdin: File(slave), Stdout: File(slave), Stderr: File(slave)}, `
		trap 'echo got-int' INT
		stty size; echo ready; sh -c 'echo job; exec sleep 1000' || echo "job $?"; read x`)
	// Only the master is read from here on: the program holds the slave.
	slave.Close()
	r := &fdReader{master}
	if out := expect(t, c, r, "job"); !strings.Contains(out, "33 120") {
		t.Errorf("size inside: %q", out)
	}
	if _, err := master.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	if out := expect(t, c, r, "job 130"); !strings.Contains(out, "got-int") {
		t.Errorf("^C did not reach the shell: %q", out)
	}
	if _, err := master.Write([]byte("end\n")); err != nil {
		t.Fatal(err)
	}
	wantResult(t, c, StatusOK, 0)
}

// fdReader reads a console, returning EOF for EIO (the slave closed).
type fdReader struct{ c console.Console }

func (r *fdReader) Read(p []byte) (int, error) {
	n, err := r.c.Read(p)
	if errors.Is(err, unix.EIO) {
		err = io.EOF
	}
	return n, err
}
