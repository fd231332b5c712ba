// Package pause is the pid 1 of a persistent sandbox that runs no program
// of its own: importing it links in a C constructor (pause.c) that, in a
// process whose environment holds _NANOBOX_PAUSE=1, never returns to the Go
// runtime. It reaps the orphans of the sandbox's pid namespace, and exits
// on SIGTERM, SIGINT or SIGHUP sent from outside the sandbox (a sender in
// an ancestor pid namespace: si_pid 0), ignoring the same signals from the
// sandbox's own processes. In any other process it returns at once.
//
// libbox executes it (deferred_linux.go) as the last step of a persistent
// sandbox's init, from the runtime's own sealed binary: no Go runtime, no
// allocation, a handful of system calls (rt_sigprocmask, rt_sigtimedwait,
// wait4, prctl, exit_group) that every seccomp profile of libbox allows.
package pause

// The constructors take argc and argv with any C library (nb_args.h).

// #cgo CFLAGS: -I${SRCDIR}/../nsenter
import "C"

// The package also links in the waiter of a pooled sandbox (waiter.c,
// libbox/waiter_linux.go): a constructor that, in a process whose argv[0]
// is "nanobox-waiter", sends init's ready message, waits for the start
// message in the exec fifo and executes the program, or hands over to the
// resume (libbox.Main) when anything is out of the ordinary.
