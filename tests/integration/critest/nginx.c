/*
 * The critest run's stand-in for the nginx image: what critest looks at
 * is "nginx: master process" in pid 1's command line, the pid in
 * /var/run/nginx.pid, a process named nginx, and a web server on $PORT
 * (default 80), here busybox httpd serving /www.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MASTER "nginx: master process nginx"

int main(int argc, char **argv)
{
	const char *port = getenv("PORT") ? getenv("PORT") : "80";
	FILE *f;

	(void)argc;
	if (strcmp(argv[0], MASTER) != 0) {
		execl("/usr/sbin/nginx", MASTER, (char *)NULL);
		perror("exec /usr/sbin/nginx");
		return 127;
	}
	f = fopen("/var/run/nginx.pid", "w");
	if (f) {
		fprintf(f, "%d\n", getpid());
		fclose(f);
	}
	if (fork() == 0) {
		execl("/bin/busybox", "httpd", "-f", "-p", port, "-h", "/www", (char *)NULL);
		_exit(127);
	}
	for (;;)
		pause();
}
