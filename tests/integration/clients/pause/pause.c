/*
 * pause: the init of a pod sandbox, for the CRI suite's locally built
 * sandbox image. It holds the pod's namespaces open, reaps the orphans that
 * are reparented to it (it is pid 1 of the pod's pid namespace when the pod
 * shares one), and exits 0 on SIGINT or SIGTERM. Built static, so the image
 * is this one file.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(int argc, char **argv)
{
	struct sigaction stop, child;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		puts("pause (nanobox-runc test image)");
		return 0;
	}
	if (getpid() != 1)
		fputs("pause: warning: not pid 1\n", stderr);

	memset(&stop, 0, sizeof(stop));
	stop.sa_handler = on_stop;
	if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0)
		return 1;
	memset(&child, 0, sizeof(child));
	child.sa_handler = on_child;
	child.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	if (sigaction(SIGCHLD, &child, NULL) < 0)
		return 2;

	for (;;)
		pause();
}
