package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// forwardedSignals are the signals run and exec pass on to the container:
// every one that can be caught, but those the Go runtime itself relies on
// (SIGURG for preemption, SIGPROF for profiling, SIGCHLD, the synchronous
// ones, and glibc's SIGCANCEL and SIGSETXID). SIGPIPE is caught, so that a
// closed stdout gives EPIPE rather than death, and not forwarded.
var forwardedSignals = func() []unix.Signal {
	sigs := []unix.Signal{
		unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGABRT, unix.SIGUSR1,
		unix.SIGUSR2, unix.SIGPIPE, unix.SIGALRM, unix.SIGTERM, unix.SIGCONT,
		unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGXCPU, unix.SIGXFSZ,
		unix.SIGVTALRM, unix.SIGWINCH, unix.SIGIO, unix.SIGPWR,
	}
	for s := sigRTMin; s <= sigRTMax; s++ {
		sigs = append(sigs, s)
	}
	return sigs
}()

// The real-time signals as glibc gives them to programs (32 and 33 are
// its own).
const (
	sigRTMin unix.Signal = 34
	sigRTMax unix.Signal = 64
)

// catchSignals starts catching sigs (forwardedSignals for run and exec,
// which forward them to the container) and returns the channel they arrive
// on. They are caught when it returns: callers call it before the process
// they act on exists, so that no signal is lost (or kills the runtime)
// between its start and the loop that reads them.
//
// Go's signal.Notify costs two handoffs between threads per signal (each
// one's mask goes through the runtime's signal thread, locked to its OS
// thread): 50 signals took 1 to 3 ms here, with a CPU waking from idle for
// each handoff, and run waited for it before it created init. A handler of
// our own (signals_linux.go: one sigaction per signal, and a byte per
// signal written to a pipe) costs a few microseconds; if it cannot be
// installed, signal.Notify does the catching.
//
// Nothing stops the catching: the callers exit when they are done. A
// later call for a signal sends it to its own channel instead.
func catchSignals(sigs []unix.Signal) chan os.Signal {
	ch := make(chan os.Signal, 32)
	if err := catchSignalsToPipe(ch, sigs); err != nil {
		ss := make([]os.Signal, len(sigs))
		for i, s := range sigs {
			ss[i] = s
		}
		signal.Notify(ch, ss...)
	}
	return ch
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
