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
//
// The same link flag prefaults the binary's image when its Go runtime
// starts (the first mapping through __wrap_mmap, which is after the
// nsenter stage's forks, in the process that runs Go): the read-only
// segments (code, read-only data, the pc tables) with MADV_POPULATE_READ,
// and the initialised data with the first 256 KiB of the zero-initialised
// data (where the Go runtime's, the C library's and the nsenter stage's
// own state lives) with MADV_POPULATE_WRITE. One call maps a page for
// less than 1 µs; a fault costs 10 µs and more in a VM, and a process of
// the runtime took one on each of 300-400 of those pages, the read-only
// ones 16 at a time (the kernel's fault-around), the written ones one at
// a time. The read-only pages are the file's, shared with every other
// process that runs the binary and not charged to a container's memory
// (the page cache holds them already); the written ones, about 0.5 MiB
// here, are the process's. A binary whose read-only segments exceed
// 32 MiB (a large program that embeds libbox) gets only the written part.
// Kernels before 5.14 refuse both advices, which changes nothing.
#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// nb_thp is 0 in the processes that never ask (see above): no huge pages,
// no prefaulting.
static int nb_thp = 1;
static int nb_populated;

#define NB_PAGE_DOWN(a) ((uintptr_t)(a) & ~(uintptr_t)4095)
#define NB_PAGE_UP(a) (((uintptr_t)(a) + 4095) & ~(uintptr_t)4095)
#define NB_MAX_POPULATE_RO (32UL << 20)
#define NB_POPULATE_BSS (256UL << 10)

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
		// The part that relocation made read-only again refuses a write.
		start = NB_PAGE_DOWN(start);
		if (relro_end > start && relro_end < end)
			start = relro_end;
		if (ph->p_filesz + NB_POPULATE_BSS < ph->p_memsz)
			end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz + NB_POPULATE_BSS;
		end = NB_PAGE_UP(end);
		if (end > start)
			madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	}
	return 1;
}

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
	void *p;

	if (nb_thp && !__atomic_exchange_n(&nb_populated, 1, __ATOMIC_RELAXED))
		dl_iterate_phdr(nb_populate_image, NULL);
	p = __real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && nb_thp && (flags & (MAP_FIXED | MAP_ANONYMOUS)) == (MAP_FIXED | MAP_ANONYMOUS) &&
	    prot == (PROT_READ | PROT_WRITE) && len >= (2UL << 20))
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}
