package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// catchSignals starts catching every signal on a new buffered channel, for
// run and exec to forward to the container, and returns the channel and a
// function that waits until the catching is in place. Go's signal.Notify
// costs two thread handoffs per signal (each one's mask goes through the
// runtime's signal thread, locked to its OS thread: ~60 round trips for
// all of them), latency that the caller overlaps with its own set-up by
// waiting only before the process it forwards to exists.
//
// Nothing stops the catching: the callers exit when the process ends, and
// signal.Stop would cost as many round trips again for nothing.
func catchSignals() (chan os.Signal, func()) {
	sigs := make(chan os.Signal, 32)
	ready := make(chan struct{})
	go func() {
		signal.Notify(sigs)
		close(ready)
	}()
	return sigs, func() { <-ready }
}

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
