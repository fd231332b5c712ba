package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "create and start a container, and by default wait for it in the foreground",
		ArgsUsage: "<container-id>",
		Description: `In the foreground, signals sent to nanobox-runc are forwarded to the
	container's init, and nanobox-runc exits with the container's exit status
	(128+N when it was killed by signal N). The container is deleted when it
	exits, unless --keep is given.`,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "start the container and exit without waiting"},
			&cli.BoolFlag{Name: "keep", Usage: "do not delete the container after it exits"},
			// runc makes a foreground run a child subreaper unless it is
			// given; nanobox-runc never does, so the flag changes nothing.
			&cli.BoolFlag{Name: "no-subreaper", Usage: "accepted for runc's command lines: nanobox-runc is never a subreaper"},
		}, createFlags()...),
		Action: func(c *cli.Context) error {
			code, err := runContainer(c)
			var pe *libbox.ProgramError
			if errors.As(err, &pe) {
				// What init reported, as runc's init prints it on the
				// container's stderr: one line, no prefix.
				fatalLine(err, pe.Err.Error(), 1)
			}
			failSetup("run", err)
			if err != nil {
				return err
			}
			os.Exit(code)
			return nil
		},
	}
}

// runContainer is create + start (+ wait, delete) and returns the exit code.
func runContainer(c *cli.Context) (int, error) {
	detach := c.Bool("detach")
	// A foreground container with a terminal and no console socket gets a
	// pty that this process relays to its own stdio.
	var ttyPeer, ttyChild *os.File
	if !detach && c.String("console-socket") == "" {
		var err error
		if ttyPeer, ttyChild, err = consolePair(); err != nil {
			return 0, err
		}
		defer ttyPeer.Close()
	}
	// Signals are caught before init exists so that none is lost between
	// create and the forwarding loop.
	var sigs chan os.Signal
	if !detach {
		sigs = catchSignals(forwardedSignals)
	}
	ctr, pipes, err := createContainer(c, ttyChild, !detach && !c.Bool("keep"), !detach)
	if ttyChild != nil {
		ttyChild.Close()
	}
	if err != nil {
		return 0, err
	}
	if detach {
		if err := warnOrFail(ctr.Start()); err != nil {
			_ = ctr.Delete(true)
			return 0, err
		}
		return 0, nil
	}
	var tty *ttyRelay
	if ctr.Config().Process.Terminal {
		if tty, err = startTTYRelay(ttyPeer); err != nil {
			_ = ctr.Delete(true)
			return 0, err
		}
		defer tty.restore()
	}
	if pipes != nil {
		pipes.start()
	}
	if err := warnOrFail(ctr.Start()); err != nil {
		_ = ctr.Delete(true)
		return 0, err
	}
	ws, err := forwardAndWait(ctr.Pid(), sigs, tty, func(s unix.Signal) { _ = ctr.Signal(s, false) })
	if err != nil {
		return 0, err
	}
	warnOOM(ctr) // before delete removes the cgroup that counted it
	if !c.Bool("keep") {
		if err := warnOrFail(ctr.Delete(true)); err != nil {
			return 0, err
		}
	}
	if pipes != nil {
		// After delete, as runc: what is left of the container is
		// gone, and its output with it.
		pipes.wait()
	}
	return libbox.ExitCode(ws), nil
}
