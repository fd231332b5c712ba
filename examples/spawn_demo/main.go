// Command spawn_demo drives a shell in a sandbox through Spawn, as an agent
// loop does: it writes commands to the shell's stdin and reads their
// output, leaves a job running and kills it, waits, and prints the report.
// Then the same through a persistent sandbox (Start, Exec, Mount, Close).
// With -interactive, the shell gets a terminal (a PTY) relayed to yours
// instead: type exit to leave.
//
//	go run ./examples/spawn_demo [-interactive]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/containerd/console"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func main() {
	// The runtime starts each sandbox's init by running this binary again.
	libbox.Main()
	interactive := flag.Bool("interactive", false, "give the shell a terminal relayed to yours")
	flag.Parse()
	sb, err := libbox.New(libbox.Options{Limits: libbox.Limits{WallTime: 5 * time.Minute, Output: 16 * libbox.MB}})
	if err != nil {
		fail(err)
	}
	if *interactive {
		if err := shell(sb); err != nil {
			fail(err)
		}
		return
	}
	if err := scripted(sb); err != nil {
		fail(err)
	}
	if err := persistent(sb); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "spawn_demo:", err)
	os.Exit(1)
}

// shellSession is a shell whose stdin we write and whose stdout we read,
// command by command: each command's output ends with a marker line.
type shellSession struct {
	in  io.Writer
	out *bufio.Reader
	n   int
}

// run sends one command line and returns its output.
func (s *shellSession) run(cmd string) (string, error) {
	s.n++
	marker := fmt.Sprintf("--- done %d ---", s.n)
	if _, err := fmt.Fprintf(s.in, "%s\necho '%s'\n", cmd, marker); err != nil {
		return "", err
	}
	var b strings.Builder
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			return b.String(), fmt.Errorf("reading %q: %w", cmd, err)
		}
		if strings.TrimRight(line, "\n") == marker {
			return b.String(), nil
		}
		b.WriteString(line)
	}
}

func scripted(sb *libbox.Sandbox) error {
	ctx := context.Background()
	child, err := sb.Spawn(ctx, "/bin/sh", nil, libbox.Stdio{Stdin: libbox.Pipe, Stderr: libbox.Null})
	if err != nil {
		return err
	}
	sh := &shellSession{in: child.Stdin, out: bufio.NewReader(child.Stdout)}
	for _, cmd := range []string{"echo hello from pid $$ on $(hostname)", "cd /tmp && echo note >notes.txt && ls -l notes.txt | cut -c1-10", "cat notes.txt"} {
		out, err := sh.run(cmd)
		if err != nil {
			return err
		}
		fmt.Printf("$ %s\n%s", cmd, out)
	}
	// A job that would run for ever: Kill ends it, and the whole sandbox.
	if _, err := fmt.Fprintln(child.Stdin, "sleep 1000"); err != nil {
		return err
	}
	fmt.Printf("killing sandbox %d\n", child.Pid())
	if err := child.Kill(); err != nil {
		return err
	}
	res, err := child.Wait()
	if err != nil {
		return err
	}
	r := res.Report
	fmt.Printf("shell: status %s, signal %s, wall %s, output %d bytes\n", r.Status, r.SignalName, r.WallTime.Round(time.Millisecond), r.OutputBytes)
	return nil
}

// persistent runs several programs in one sandbox, adds a mount to it
// while it runs, and closes it.
func persistent(sb *libbox.Sandbox) error {
	ctx := context.Background()
	if err := sb.Start(ctx); err != nil {
		return err
	}
	defer sb.Close()
	dir, err := os.MkdirTemp("", "spawn-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dir+"/input.txt", []byte("data added while the sandbox runs\n"), 0o644); err != nil {
		return err
	}
	exec := func(script string) error {
		c, err := sb.Exec(ctx, "/bin/sh", []string{"-c", script}, libbox.Stdio{})
		if err != nil {
			return err
		}
		res, err := c.WaitWithOutput()
		if err != nil {
			return err
		}
		fmt.Printf("exec %q: %s %s", script, res.Report.Status, res.Stdout)
		return nil
	}
	if err := exec("echo kept >/tmp/state; echo wrote /tmp/state"); err != nil {
		return err
	}
	h, err := sb.Mount(libbox.Bind{Source: dir, Target: "/tmp/in", ReadOnly: true})
	if err != nil {
		return err
	}
	if err := exec("cat /tmp/state /tmp/in/input.txt"); err != nil {
		return err
	}
	if err := h.Unmount(); err != nil {
		return err
	}
	if err := exec("ls /tmp/in | wc -l"); err != nil {
		return err
	}
	if err := sb.Close(); err != nil {
		return err
	}
	r := sb.Report()
	fmt.Printf("persistent sandbox %s: status %s, wall %s, cpu %s (%s), peak memory %d KiB (%s)\n", r.ID, r.Status,
		r.WallTime.Round(time.Millisecond), r.CPUTime().Round(time.Millisecond), r.CPUSource, r.PeakMemory/1024, r.PeakMemorySource)
	return nil
}

// shell relays your terminal to a shell on a PTY in the sandbox.
func shell(sb *libbox.Sandbox) error {
	rows, cols := uint16(24), uint16(80)
	cur, err := console.ConsoleFromFile(os.Stdin)
	if err == nil {
		if ws, err := cur.Size(); err == nil {
			rows, cols = ws.Height, ws.Width
		}
		if err := cur.SetRaw(); err == nil {
			defer cur.Reset()
		}
	}
	term := libbox.PTY(rows, cols)
	child, err := sb.Spawn(context.Background(), "/bin/sh", nil, libbox.Stdio{Stdin: term})
	if err != nil {
		return err
	}
	go func() { _, _ = io.Copy(child.Stdin, os.Stdin) }()
	_, _ = io.Copy(os.Stdout, child.Stdout)
	res, err := child.Wait()
	if err != nil {
		return err
	}
	fmt.Printf("\r\nshell: status %s, exit %d\r\n", res.Report.Status, res.ExitCode)
	return nil
}
