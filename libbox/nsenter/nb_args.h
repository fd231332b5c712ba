// nb_args.h: a constructor that sees the process's argc and argv, with any
// C library. glibc passes them to constructors (an extension of its own);
// musl calls constructors with no arguments. There they are found from
// environ: the System V ABI starts a process with argc, argv[0..argc-1],
// NULL and then the environment on its stack, and the C library points
// environ at that environment before it runs the constructors.
//
// Use: static void fn(int argc, char **argv) { ... } NB_CONSTRUCTOR(fn)
#ifndef NB_ARGS_H
#define NB_ARGS_H

#include <stdint.h>
#include <unistd.h>

#ifdef __GLIBC__
#define NB_CONSTRUCTOR(fn)                                                       \
	__attribute__((constructor)) static void fn##_ctor(int argc, char **argv) \
	{                                                                        \
		fn(argc, argv);                                                  \
	}
#else
extern char **environ;

// nb_initial_args walks back from environ over argv's terminating NULL and
// its entries to the word that holds their count (argv's entries are
// pointers, never that small).
static inline int nb_initial_args(char ***argvp)
{
	char **p = environ;
	uintptr_t n = 0;

	*argvp = NULL;
	if (p == NULL || p[-1] != NULL)
		return 0;
	for (p -= 2; (uintptr_t)*p != n; p--)
		if (++n > 1 << 20)
			return 0;
	*argvp = p + 1;
	return (int)n;
}

#define NB_CONSTRUCTOR(fn)                                     \
	__attribute__((constructor)) static void fn##_ctor(void) \
	{                                                      \
		char **argv;                                   \
		int argc = nb_initial_args(&argv);             \
		fn(argc, argv);                                \
	}
#endif

#endif
