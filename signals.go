package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// forwardAndWait reaps pid (a child of this process) while forwarding the
// signals arriving on sigs to it, and resizing the pty on SIGWINCH.
func forwardAndWait(pid int, sigs chan os.Signal, tty *ttyRelay, forward func(unix.Signal)) (unix.WaitStatus, error) {
	type result struct {
		ws  unix.WaitStatus
		err error
	}
	done := make(chan result, 1)
	go func() {
		var ws unix.WaitStatus
		for {
			_, err := unix.Wait4(pid, &ws, 0, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			done <- result{ws, err}
			return
		}
	}()
	for {
		select {
		case s := <-sigs:
			switch sig := s.(unix.Signal); sig {
			case unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE:
				// SIGURG is the Go runtime's preemption signal, not the user's.
			case unix.SIGWINCH:
				if tty != nil {
					tty.resize()
				}
			default:
				forward(sig)
			}
		case r := <-done:
			if r.err != nil {
				return 0, fmt.Errorf("wait for process %d: %w", pid, r.err)
			}
			if tty != nil {
				tty.wait()
			}
			return r.ws, nil
		}
	}
}
