package main

// The long-lived faces of `nanobox-runc sandbox`: --detach (a sandbox that
// outlives the command, managed by exec, ps, kill, delete and mount) and
// --tty (an interactive terminal).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/containerd/console"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// checkLiveFlags refuses the combinations of --detach, --name and --tty
// that cannot work, and points a detached sandbox's state at the runtime's
// state root (--root, or its default): the root that exec, ps, kill,
// delete, list and mount read.
func checkLiveFlags(c *cli.Context, opts *libbox.Options) error {
	detach := c.Bool("detach")
	switch {
	case detach && c.String("name") == "":
		return errors.New("--detach needs --name ID: the id that exec, ps, kill, delete and mount take")
	case !detach && c.IsSet("name"):
		return errors.New("--name names a --detach sandbox: add --detach, or drop --name")
	case detach && c.Bool("tty"):
		return errors.New("--tty and --detach: nobody would hold the terminal; detach without it, then nanobox-runc exec -t ID CMD")
	case detach && c.Bool("die-with-parent"):
		return errors.New("--die-with-parent and --detach: a detached sandbox outlives this command by design; drop one")
	case c.IsSet("tty-size") && !c.Bool("tty"):
		return errors.New("--tty-size is the size of --tty's terminal: add --tty, or drop --tty-size")
	case detach && c.IsSet("report"):
		return errors.New("--report and --detach: nothing supervises a detached sandbox to the end; the report is for a sandbox run attached")
	}
	if c.IsSet("tty-size") {
		if _, _, err := parseTTYSize(c.String("tty-size")); err != nil {
			return err
		}
	}
	if !detach {
		return nil
	}
	if opts.StateRoot == "" {
		root, err := stateRoot(c)
		if err != nil {
			return err
		}
		opts.StateRoot = root
	}
	return libbox.ValidateID(c.String("name"))
}

// runDetached creates and starts the sandbox, and returns: the program
// keeps this command's stdin, stdout and stderr, as `runc run --detach`.
func runDetached(c *cli.Context, sb *libbox.Sandbox, args []string) error {
	_, err := sb.Detach(c.String("name"), args, os.Stdin, os.Stdout, os.Stderr)
	return err
}

// runTTY runs the program on a terminal of its own, inside the sandbox,
// relayed to this process's: raw mode on the caller's terminal (restored
// on the way out, whatever ended the program), SIGWINCH forwarded as the
// pty's size. Keys go to the program as typed, ^C included.
func runTTY(ctx context.Context, sb *libbox.Sandbox, args []string, size string) (*libbox.Result, error) {
	rows, cols := uint16(24), uint16(80)
	var caller console.Console
	if con, err := console.ConsoleFromFile(os.Stdin); err == nil {
		caller = con
		if ws, err := con.Size(); err == nil && ws.Height > 0 && ws.Width > 0 {
			rows, cols = ws.Height, ws.Width
		}
	}
	if size != "" {
		// Checked by checkLiveFlags already.
		r, c, err := parseTTYSize(size)
		if err != nil {
			return nil, err
		}
		rows, cols = r, c
	}
	term := libbox.PTY(rows, cols)
	child, err := sb.Spawn(ctx, args[0], args[1:], libbox.Stdio{Stdin: term})
	if err != nil {
		rep := libbox.SetupErrorReport(err)
		return &libbox.Result{ExitCode: rep.ExitCode, Report: rep}, err
	}
	if caller != nil {
		if err := caller.SetRaw(); err == nil {
			defer func() { _ = caller.Reset() }()
		}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, unix.SIGWINCH)
	defer signal.Stop(winch)
	go func() {
		for range winch {
			if caller == nil {
				continue
			}
			if ws, err := caller.Size(); err == nil {
				_ = term.Resize(ws.Height, ws.Width)
			}
		}
	}()
	// The copy from stdin ends with this process: a read of the caller's
	// terminal cannot be interrupted.
	go func() { _, _ = io.Copy(child.Stdin, os.Stdin) }()
	out := make(chan struct{})
	go func() {
		_, _ = io.Copy(os.Stdout, child.Stdout)
		close(out)
	}()
	// The output ends when the program's sandbox is gone; Wait then has
	// nothing left to wait for (and no stream this process is slow to
	// write out can make it think nobody reads).
	<-out
	return child.Wait()
}

// parseTTYSize reads --tty-size's ROWSxCOLS.
func parseTTYSize(s string) (rows, cols uint16, err error) {
	r, c, ok := strings.Cut(s, "x")
	if ok {
		var rn, cn uint64
		rn, err = strconv.ParseUint(r, 10, 16)
		if err == nil {
			cn, err = strconv.ParseUint(c, 10, 16)
		}
		if err == nil && rn > 0 && cn > 0 {
			return uint16(rn), uint16(cn), nil
		}
	}
	return 0, 0, fmt.Errorf("--tty-size %q: want ROWSxCOLS, each 1 to 65535 (24x80)", s)
}
