package main

// A timer slack of 1 ms for the Go runtime's sysmon thread, and for no
// other thread.
//
// While a process is busy, sysmon sleeps 20 µs at a time (usleep). With
// the default timer slack of 50 µs each of those sleeps lasts about 90 µs
// on the VM this project is measured on, and costs about 8 µs of CPU and
// two context switches: in a `run`, sysmon woke 120-160 times in each of
// the two Go processes (the runtime and the re-executed init), half of
// their context switches. With a slack of 1 ms it wakes about once a
// millisecond; what sysmon does (take a P back from a thread blocked in a
// system call, preempt a goroutine that ran 10 ms, poll the network when
// nobody did for 10 ms) tolerates that, and nothing else changes.
//
// How: the Go runtime of a cgo binary starts its threads through
// pthread_create (runtime/cgo), and the first thread it starts is sysmon
// (runtime.main, before any package's init). Linked with
// --wrap=pthread_create (the directive below, so every link of this
// package has it), those calls come to __wrap_pthread_create, which
// gives the first new thread the slack, by setting it on the creating
// thread around the creation (a new thread inherits its creator's), and
// makes sure that every later thread starts with the process's own slack
// even when sysmon creates it (sysmon starts a thread to hand a P over).
// So the threads that run Go code, and the processes they start (init,
// hooks, the container's program through init), keep the slack the
// runtime was started with; lifecycle.bats checks both. Here, not in
// libbox: a program that embeds the library keeps its own.

// #cgo LDFLAGS: -Wl,--wrap=pthread_create
// #include <pthread.h>
// #include <sys/prctl.h>
//
// #define NANOBOX_SYSMON_SLACK_NS 1000000
//
// int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
// int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
//
// static int nanobox_threads;
// static long nanobox_slack = -1;
//
// int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
// {
// 	long cur, want;
// 	int r;
//
// 	// The first call is the Go runtime starting sysmon, before any other
// 	// thread exists: no race on these two. A process whose slack cannot
// 	// be read (or is 0, a real-time one) is left as it is.
// 	cur = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
// 	if (__atomic_fetch_add(&nanobox_threads, 1, __ATOMIC_RELAXED) == 0) {
// 		__atomic_store_n(&nanobox_slack, cur, __ATOMIC_RELAXED);
// 		want = cur > 0 ? NANOBOX_SYSMON_SLACK_NS : -1;
// 	} else {
// 		want = __atomic_load_n(&nanobox_slack, __ATOMIC_RELAXED);
// 	}
// 	if (want <= 0 || cur <= 0 || cur == want)
// 		return __real_pthread_create(t, attr, fn, arg);
// 	prctl(PR_SET_TIMERSLACK, want, 0, 0, 0);
// 	r = __real_pthread_create(t, attr, fn, arg);
// 	prctl(PR_SET_TIMERSLACK, cur, 0, 0, 0);
// 	return r;
// }
import "C"
