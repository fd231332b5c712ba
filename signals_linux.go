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
import "C"

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

var sigPipeOnce sync.Once

// catchSignalsToPipe installs the handler for sigs, whose arrivals go to
// out. Once per process: a second call is an error.
func catchSignalsToPipe(out chan<- os.Signal, sigs []unix.Signal) error {
	err := fmt.Errorf("signals are already caught")
	sigPipeOnce.Do(func() {
		var p [2]int
		if err = unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
			err = fmt.Errorf("signal pipe: %w", err)
			return
		}
		nums := make([]C.int, len(sigs))
		for i, s := range sigs {
			nums[i] = C.int(s)
		}
		if e := C.nanobox_catch_signals(C.int(p[1]), &nums[0], C.int(len(nums))); e != 0 {
			// Handlers installed before the failure stay, writing
			// to a pipe nobody reads; signal.Notify takes over.
			err = fmt.Errorf("sigaction: %w", unix.Errno(e))
			return
		}
		r := os.NewFile(uintptr(p[0]), "signals")
		go func() {
			buf := make([]byte, 64)
			for {
				n, rerr := r.Read(buf)
				for _, b := range buf[:n] {
					out <- unix.Signal(b)
				}
				if rerr != nil {
					return
				}
			}
		}()
	})
	return err
}
