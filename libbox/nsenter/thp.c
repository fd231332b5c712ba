// Transparent huge pages for the Go heap of the binary's own processes.
//
// A command of the runtime lives a few milliseconds, and a good part of
// them went to page faults: the Go runtime and the package initialisers
// touch a few hundred pages of the heap's first 4 MiB chunk one by one, and
// a first touch costs 10-16 µs in a VM. On a host whose THP mode is
// "madvise" (Debian's and Ubuntu's default) that heap gets no huge pages,
// because the Go runtime never asks for them; on an "always" host it has
// them already. Asking here makes the first touch of each 2 MiB of the heap
// the only fault there. The price is the untouched rest of each huge page
// in the process's RSS (a few MiB).
//
// How: in a binary built with cgo the Go runtime maps memory through cgo's
// x_cgo_mmap, which calls mmap. Linked with -Wl,--wrap=mmap (the Makefile's
// GO_LDFLAGS; a program that embeds libbox may add it too), that call comes
// to __wrap_mmap below, which advises MADV_HUGEPAGE for an anonymous,
// fixed, read-write mapping of 2 MiB or more: the runtime's sysMap of heap
// chunks (nothing else of the Go runtime maps that much at a fixed
// address). Linked without the flag, __wrap_mmap is never called.
//
// The Go runtime's GODEBUG=disablethp=1 undoes it: the runtime advises
// MADV_NOHUGEPAGE right after each such mapping. The runtime sets that in
// the environment it gives a container's init and exec'd processes (until
// they execute the program) unless the container's Config asks for huge
// pages (InitHugePages), since their memory is charged to the container,
// and the network allowlist's proxy, which lives as long as its sandbox.
// The processes it re-executes with another environment than its own (a
// pooled sandbox's waiter and resume have the program's, a confined
// command its caller's) are known here by argv[0] and never ask. When no
// huge page is free the kernel falls back to small pages.

#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

static int nb_thp = 1;

__attribute__((constructor)) static void nanobox_thp_choose(int argc, char **argv)
{
	static const char *const argv0s[] = {"nanobox-waiter", "nanobox-resume", "libbox-confine"};
	size_t i;

	for (i = 0; argc > 0 && i < sizeof(argv0s) / sizeof(argv0s[0]); i++)
		if (strcmp(argv[0], argv0s[i]) == 0)
			nb_thp = 0;
}

// __real_mmap is libc's mmap when the binary is linked with --wrap=mmap,
// the only case in which __wrap_mmap is called; weak, so that a link
// without the flag does not need it.
extern void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((weak));
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = __real_mmap(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && nb_thp && (flags & (MAP_FIXED | MAP_ANONYMOUS)) == (MAP_FIXED | MAP_ANONYMOUS) &&
	    prot == (PROT_READ | PROT_WRITE) && len >= (2UL << 20))
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}
