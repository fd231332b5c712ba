package main

// One malloc arena for the whole process, set before the Go runtime
// starts. The binary is linked statically against glibc (cgo: libseccomp,
// libbox/nsenter), and every thread the Go runtime starts calls malloc
// once (pthread_getattr_np, from cgo's thread start), which makes glibc
// give it an arena of its own: a 128 MiB reservation trimmed by two
// munmaps, in a process whose other threads are running, so each is a
// TLB shootdown (an IPI to every CPU, costly in a VM). A command starts
// four or five threads; with one arena `state` and `kill` took 0.15 ms
// (5%) less. Nothing here mallocs from several threads at once (cgo
// calls are rare and short), so sharing one arena costs nothing. Set in
// the command, not in libbox: a program using the library keeps its own
// malloc policy.

// #include <malloc.h>
//
// __attribute__((constructor)) static void nanobox_one_arena(void)
// {
// #ifdef M_ARENA_MAX
// 	mallopt(M_ARENA_MAX, 1);
// #endif
// }
import "C"
