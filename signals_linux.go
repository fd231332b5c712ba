package main

// A signal handler of our own for the signals run and exec forward (see
// catchSignals). The handler writes the signal's number, one byte, to a
// non-blocking pipe that a goroutine reads; if the pipe is full the byte
// is dropped, as the kernel itself merges a pending signal. It runs on the
// thread's alternate signal stack (SA_ONSTACK), which the Go runtime gives
// every thread it starts, as the Go runtime requires of C handlers, and
// saves errno. The Go runtime installed its own handlers at start-up and
// does not install them again (os/signal keeps out of these signals here).

// #include <errno.h>
// #include <signal.h>
// #include <string.h>
// #include <sys/syscall.h>
// #include <unistd.h>
//
// static int nanobox_sig_fd = -1;
//
// static void nanobox_sig_handler(int sig)
// {
// 	int saved = errno;
// 	unsigned char b = (unsigned char)sig;
// 	if (write(nanobox_sig_fd, &b, 1) < 0) {
// 		/* a full pipe: the signal is already pending there */
// 	}
// 	errno = saved;
// }
//
// static int nanobox_catch_signals(int fd, const int *sigs, int n)
// {
// 	struct sigaction sa;
// 	memset(&sa, 0, sizeof sa);
// 	sa.sa_handler = nanobox_sig_handler;
// 	sa.sa_flags = SA_ONSTACK | SA_RESTART;
// 	sigfillset(&sa.sa_mask);
// 	nanobox_sig_fd = fd;
// 	for (int i = 0; i < n; i++)
// 		if (sigaction(sigs[i], &sa, NULL) != 0)
// 			return errno;
// 	return 0;
// }
//
// static int nanobox_sigrtmin(void)
// {
// 	return SIGRTMIN;
// }
//
// // The kernel's struct sigaction (x86-64, arm64).
// struct nanobox_ksigaction {
// 	void (*handler)(int);
// 	unsigned long flags;
// 	void (*restorer)(void);
// 	unsigned long mask;
// };
//
// // nanobox_catch_reserved installs the handler for sig, a real-time signal
// // the C library keeps for itself and refuses a handler for (musl's 34),
// // with the system call: the same handler, flags, mask and restorer as
// // ref's, installed before through sigaction (the kernel needs the C
// // library's restorer to return from the handler).
// static int nanobox_catch_reserved(int sig, int ref)
// {
// #if defined(__x86_64__) || defined(__aarch64__)
// 	struct nanobox_ksigaction ka;
// 	if (syscall(SYS_rt_sigaction, ref, NULL, &ka, sizeof ka.mask) != 0)
// 		return errno;
// 	if (ka.handler != nanobox_sig_handler)
// 		return EINVAL;
// 	if (syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof ka.mask) != 0)
// 		return errno;
// 	return 0;
// #else
// 	return EINVAL;
// #endif
// }
import "C"

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// sigPipe is the process's one pipe of caught signals, and where each
// signal read from it goes.
var sigPipe struct {
	mu     sync.Mutex
	w      int // the write end, -1 before the first catch
	routes map[unix.Signal]chan<- os.Signal
}

// catchSignalsToPipe installs the handler for sigs and sends their
// arrivals to out from now on (a signal caught before for another channel
// goes to out instead).
func catchSignalsToPipe(out chan<- os.Signal, sigs []unix.Signal) error {
	sigPipe.mu.Lock()
	defer sigPipe.mu.Unlock()
	if sigPipe.routes == nil {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
			return fmt.Errorf("signal pipe: %w", err)
		}
		sigPipe.w, sigPipe.routes = p[1], map[unix.Signal]chan<- os.Signal{}
		go readSignalPipe(os.NewFile(uintptr(p[0]), "signals"))
	}
	// Routed first: should a sigaction fail, the handlers installed
	// before it still deliver to out, and the caller's signal.Notify
	// (which never reinstalls the Go runtime's handler over ours) takes
	// the rest. The real-time signals the C library keeps for itself
	// refuse a handler through sigaction (glibc's 32 and 33 are not
	// forwarded at all; musl also keeps 34, which glibc gives programs):
	// those get the same handler with the system call. (musl takes 34
	// back only for its set*id and setrlimit calls, which the processes
	// that catch, run's and exec's, never make.)
	nums := make([]C.int, 0, len(sigs))
	var reserved []unix.Signal
	rtmin := unix.Signal(C.nanobox_sigrtmin()) // glibc 34, musl 35
	for _, s := range sigs {
		sigPipe.routes[s] = out
		if s >= 32 && s < rtmin {
			reserved = append(reserved, s)
		} else {
			nums = append(nums, C.int(s))
		}
	}
	if len(nums) > 0 {
		if e := C.nanobox_catch_signals(C.int(sigPipe.w), &nums[0], C.int(len(nums))); e != 0 {
			return fmt.Errorf("sigaction: %w", unix.Errno(e))
		}
	}
	for _, s := range reserved {
		if len(nums) == 0 {
			return fmt.Errorf("signal %d: no handler to copy", s)
		}
		if e := C.nanobox_catch_reserved(C.int(s), nums[0]); e != 0 {
			return fmt.Errorf("rt_sigaction %d: %w", s, unix.Errno(e))
		}
	}
	return nil
}

func readSignalPipe(r *os.File) {
	buf := make([]byte, 64)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			s := unix.Signal(b)
			sigPipe.mu.Lock()
			out := sigPipe.routes[s]
			sigPipe.mu.Unlock()
			if out != nil {
				out <- s
			}
		}
		if err != nil {
			return
		}
	}
}
