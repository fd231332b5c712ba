// The pause of a persistent sandbox: see pause.go.

#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "nb_args.h"

static void nb_reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void nanobox_pause(int argc, char **argv)
{
	const char *v = getenv("_NANOBOX_PAUSE");
	sigset_t all;
	siginfo_t si;

	// The pause's argv is its name alone (pauseArgv0): a waiter's
	// environment is the program's, which may hold anything.
	if (v == NULL || strcmp(v, "1") != 0 || argc != 1 || strcmp(argv[0], "nanobox-pause") != 0)
		return;
	// Nothing in the sandbox may ptrace pid 1 or open its /proc files;
	// execve made it dumpable again.
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	// Every signal is taken synchronously: a blocked signal is queued even
	// to the init of a pid namespace, which drops those it has no handler
	// for (and so could not tell who sent them).
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	nb_reap();
	for (;;) {
		int sig = sigwaitinfo(&all, &si);

		if (sig < 0)
			continue;
		if (sig == SIGCHLD) {
			nb_reap();
			continue;
		}
		// The sandbox is ended from outside (kill, Close): si_pid is 0
		// for a sender the sandbox's pid namespace cannot see.
		if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && si.si_pid == 0)
			_exit(0);
	}
}

NB_CONSTRUCTOR(nanobox_pause)
