// Transparent huge pages for the Go heap of the binary's own processes,
// when asked for (NANOBOX_THP=1 in the environment).
//
// A command of the runtime lives a few milliseconds; the Go runtime and
// the package initialisers touch a few hundred pages of the heap's first
// 4 MiB chunk one by one. On a host whose THP mode is "madvise" (Debian's
// and Ubuntu's default) that heap gets no huge pages, because the Go
// runtime never asks for them; on an "always" host it has them already.
// Asking makes the first touch of each 2 MiB of the heap the only fault
// there, which pays where a fault is dear (10-16 µs in a VM whose page
// tables the hypervisor shadows). Where it is not it costs: zeroing a
// 2 MiB page takes 0.1-0.7 ms, and 2.5 ms in a VM that gives free 2 MiB
// blocks back to its host (virtio-balloon free page reporting: the page
// is faulted in again on the host), against 200 faults of 1.6 µs in
// that VM; a process started now and then, or twenty at once, gets cold
// pages every time. So it is off unless NANOBOX_THP=1 is in the
// environment; the price is the untouched rest of each huge page in the
// process's RSS (a few MiB).
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
// MADV_NOHUGEPAGE right after each such mapping. The runtime gives a
// container's init and exec'd processes (until they execute the program)
// an environment of its own, with NANOBOX_THP=1 only when the container's
// Config asks for huge pages (InitHugePages) and disablethp=1 otherwise,
// since their memory is charged to the container; the network allowlist's
// proxy, which lives as long as its sandbox, has disablethp=1. The
// processes it re-executes with another environment than its own (a
// pooled sandbox's waiter and resume have the program's, a confined
// command its caller's) are known here by argv[0] and never ask, nor are
// prefaulted (below). When no huge page is free the kernel falls back to
// small pages.
//
// The same link flag prefaults the binary's image when its Go runtime
// starts (the first mapping through __wrap_mmap, which is after the
// nsenter stage's forks, in the process that runs Go), where a page fault
// is dear: the read-only segments (code, read-only data, the pc tables)
// with MADV_POPULATE_READ, and the initialised data with the first 256 KiB
// of the zero-initialised data (where the Go runtime's, the C library's
// and the nsenter stage's own state lives) with MADV_POPULATE_WRITE. A
// process of the runtime takes a fault on each of 300-400 of those pages,
// the read-only ones 16 at a time (the kernel's fault-around), the written
// ones one at a time. In a VM whose page tables the hypervisor shadows a
// fault costs 10 µs and more, and one call maps a page for less than 1 µs:
// there it saved 6 ms of CPU per `run`. In a VM with hardware-assisted
// paging (or on bare metal) a fault costs 1-2 µs, and mapping the whole
// image (2,500 read-only pages, where the faults map 600-900) costs more
// than the faults it saves: 0.4 to 0.9 ms per command. So the process
// times its first write to a page of its own (two pages, the faster
// counts; see nb_fault_dear) and prefaults when that took more than 5 µs; NANOBOX_PREFAULT=1
// prefaults always, NANOBOX_PREFAULT=0 never (the runtime passes it on to
// the container processes it starts). The read-only pages are the
// file's, shared with every other process that runs the binary and not
// charged to a container's memory (the page cache holds them already),
// but counted in the process's RSS; the written ones, about 0.5 MiB here,
// are the process's. A binary whose read-only segments exceed 32 MiB (a
// large program that embeds libbox) gets only the written part. Kernels
// before 5.14 refuse both advices, which changes nothing.
#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include "nb_args.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// nb_prefault: 0 never (the processes known by argv[0], see above, and
// NANOBOX_PREFAULT=0), 1 always (NANOBOX_PREFAULT=1), -1 where a fault is
// dear (nb_fault_dear). nb_thp is 1 when NANOBOX_THP=1 asks for huge pages
// in a process not known by argv[0].
static int nb_prefault = -1;
static int nb_thp;
static int nb_populated;

// NB_DEAR_FAULT_NS: above it, a fault is dear. A first write costs 1.5-2.5
// µs in a VM with hardware-assisted paging, 10-16 µs under shadow paging;
// an interrupt in the timed window only makes a process prefault.
#define NB_DEAR_FAULT_NS 5000L

#define NB_PAGE_DOWN(a) ((uintptr_t)(a) & ~(uintptr_t)4095)
#define NB_PAGE_UP(a) (((uintptr_t)(a) + 4095) & ~(uintptr_t)4095)
#define NB_MAX_POPULATE_RO (32UL << 20)
#define NB_POPULATE_BSS (256UL << 10)

// __real_mmap is libc's mmap when the binary is linked with --wrap=mmap,
// the only case in which __wrap_mmap is called; weak, so that a link
// without the flag does not need it.
extern void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((weak));

// nb_fault_dear reports whether a page fault costs more than
// NB_DEAR_FAULT_NS here: the faster of two first writes, timed, to a
// mapping of two small pages of its own (too small for a huge page, which
// a host in THP "always" mode would give the zero-initialised data).
static int nb_fault_dear(void)
{
	long best = -1;
	char *probe;
	int i;

	probe = __real_mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED)
		return 1;
	for (i = 0; i < 2; i++) {
		struct timespec a, b;
		long ns;

		if (clock_gettime(CLOCK_MONOTONIC, &a) != 0)
			break;
		*(volatile char *)(probe + i * 4096) = 1;
		if (clock_gettime(CLOCK_MONOTONIC, &b) != 0)
			break;
		ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
		if (best < 0 || ns < best)
			best = ns;
	}
	munmap(probe, 2 * 4096);
	return best < 0 || best > NB_DEAR_FAULT_NS;
}

// nb_populate_image prefaults the main program's image (the first object
// dl_iterate_phdr reports); see the top of the file.
static int nb_populate_image(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t relro_end = 0, ro = 0;
	int i;

	(void)size;
	(void)data;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_RELRO)
			relro_end = NB_PAGE_DOWN(info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
		else if (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W))
			ro += NB_PAGE_UP(info->dlpi_addr + ph->p_vaddr + ph->p_memsz) - NB_PAGE_DOWN(info->dlpi_addr + ph->p_vaddr);
	}
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!(ph->p_flags & PF_W)) {
			if (ro <= NB_MAX_POPULATE_RO)
				madvise((void *)NB_PAGE_DOWN(start), NB_PAGE_UP(end) - NB_PAGE_DOWN(start), MADV_POPULATE_READ);
			continue;
		}
		// The part that relocation made read-only again refuses a write,
		// and is asked apart: glibc's static start protects it, musl's
		// leaves it writable (there the kernel refuses at once).
		start = NB_PAGE_DOWN(start);
		if (relro_end > start && relro_end < end) {
			madvise((void *)start, relro_end - start, MADV_POPULATE_WRITE);
			start = relro_end;
		}
		if (ph->p_filesz + NB_POPULATE_BSS < ph->p_memsz)
			end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz + NB_POPULATE_BSS;
		end = NB_PAGE_UP(end);
		if (end > start)
			madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	}
	return 1;
}

static void nanobox_thp_choose(int argc, char **argv)
{
	static const char *const argv0s[] = {"nanobox-waiter", "nanobox-resume", "libbox-confine"};
	const char *thp = getenv("NANOBOX_THP"), *prefault = getenv("NANOBOX_PREFAULT");
	size_t i;

	for (i = 0; argc > 0 && i < sizeof(argv0s) / sizeof(argv0s[0]); i++)
		if (strcmp(argv[0], argv0s[i]) == 0) {
			nb_prefault = 0;
			return;
		}
	nb_thp = thp != NULL && strcmp(thp, "1") == 0;
	if (prefault != NULL && strcmp(prefault, "1") == 0)
		nb_prefault = 1;
	else if (prefault != NULL && strcmp(prefault, "0") == 0)
		nb_prefault = 0;
}

NB_CONSTRUCTOR(nanobox_thp_choose)

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (nb_prefault != 0 && !__atomic_load_n(&nb_populated, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&nb_populated, 1, __ATOMIC_RELAXED) && (nb_prefault == 1 || nb_fault_dear()))
		dl_iterate_phdr(nb_populate_image, NULL);
	p = __real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && nb_thp && (flags & (MAP_FIXED | MAP_ANONYMOUS)) == (MAP_FIXED | MAP_ANONYMOUS) &&
	    prot == (PROT_READ | PROT_WRITE) && len >= (2UL << 20))
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}
