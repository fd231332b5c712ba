// The waiter of a pooled sandbox: see waiter.go.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "nb_args.h"

// Keep in sync with deferred_linux.go.
#define NB_WAITER_ARGV0 "nanobox-waiter"
#define NB_RESUME_ARGV0 "nanobox-resume"
#define NB_START_WITH_PROGRAM '2'
#define NB_MAX_START_MESSAGE (8 << 20)

extern char **environ;

static int nb_atoi(const char *s)
{
	int n = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > 100000000)
			return -1;
		n = n * 10 + (*s - '0');
	}
	return n;
}

static int nb_write_all(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

// nb_read_full reads exactly n bytes; it returns how many it got.
static size_t nb_read_full(int fd, char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

// nb_clean is whether p is an absolute path that Go's filepath.Clean leaves
// as it is: no empty, "." or ".." element, no trailing slash (but "/").
static int nb_clean(const char *p, size_t n)
{
	size_t i, start;

	if (n == 0 || p[0] != '/')
		return 0;
	if (n == 1)
		return 1;
	if (p[n - 1] == '/')
		return 0;
	for (i = 1, start = 1; i <= n; i++) {
		if (i == n || p[i] == '/') {
			size_t len = i - start;

			if (len == 0 || (len == 1 && p[start] == '.') ||
			    (len == 2 && p[start] == '.' && p[start + 1] == '.'))
				return 0;
			start = i + 1;
		}
	}
	return 1;
}

// nb_check is checkExecutable (process_linux.go): 0 when path is a regular
// file the effective ids may execute, -1 otherwise.
static int nb_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	if (syscall(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS) != 0)
		return -1;
	return 0;
}

// nb_resume gives up: the Go runtime's init code takes over (libbox.Main),
// with what was read from the fifo in the memfd, and reports the error (or
// runs the program) exactly as init does.
static void nb_resume(char **argv, int memfd, const char *buf, size_t n)
{
	int exefd = nb_atoi(argv[3]);
	char *rargv[8];
	int i;

	// The memfd is empty: this is its one write.
	if (nb_write_all(memfd, buf, n) == 0 &&
	    fcntl(nb_atoi(argv[1]), F_SETFD, 0) == 0 && fcntl(memfd, F_SETFD, 0) == 0) {
		rargv[0] = NB_RESUME_ARGV0;
		for (i = 1; i < 7; i++)
			rargv[i] = argv[i];
		rargv[7] = NULL;
		syscall(SYS_execveat, exefd, "", rargv, environ, AT_EMPTY_PATH);
	}
	{
		static const char msg[] = "start: the sandbox's init cannot resume after its waiter";
		nb_write_all(nb_atoi(argv[1]), msg, sizeof(msg) - 1);
	}
	_exit(1);
}

static int nb_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

// nb_unhex decodes the hex string s into out (at most cap bytes): the
// ready message is in the runtime's binary codec, whose bytes include NUL,
// so argv carries it in hex. -1 when s is not lowercase hex that fits.
static ssize_t nb_unhex(const char *s, char *out, size_t cap)
{
	size_t n = strlen(s), i;

	if (n % 2 != 0 || n / 2 > cap)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = nb_hexval(s[2 * i]), lo = nb_hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (char)(hi << 4 | lo);
	}
	return (ssize_t)i;
}

// argv: NB_WAITER_ARGV0 fifo-fd memfd exe-fd sync-fd cwd ready-message
// (the message in hex)
static void nanobox_waiter(int argc, char **argv)
{
	int fifo, memfd, exefd, sock, i;
	char hdr[5], ready[256], *buf, *p, *end, *strs, *path, **args, *pathenv = NULL;
	size_t n, total, count, flen;
	ssize_t rn;

	if (argc != 7 || strcmp(argv[0], NB_WAITER_ARGV0) != 0)
		return;
	// As init was: nothing may ptrace pid 1 or open its /proc files;
	// execve made it dumpable again. The program's execve resets it.
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	fifo = nb_atoi(argv[1]);
	memfd = nb_atoi(argv[2]);
	exefd = nb_atoi(argv[3]);
	sock = nb_atoi(argv[4]);
	// None of them may reach the program.
	fcntl(fifo, F_SETFD, FD_CLOEXEC);
	fcntl(memfd, F_SETFD, FD_CLOEXEC);
	fcntl(exefd, F_SETFD, FD_CLOEXEC);
	// Ready: the parent now takes the sandbox as made.
	rn = nb_unhex(argv[6], ready, sizeof(ready));
	if (rn <= 0 || write(sock, ready, (size_t)rn) != rn)
		_exit(1);
	close(sock);

	total = nb_read_full(fifo, hdr, 1);
	if (total != 1)
		_exit(1); // as init: the parent is gone
	if (hdr[0] != NB_START_WITH_PROGRAM)
		nb_resume(argv, memfd, hdr, 1);
	total += nb_read_full(fifo, hdr + 1, 4);
	if (total != 5)
		nb_resume(argv, memfd, hdr, total);
	n = ((size_t)(unsigned char)hdr[1] << 24) | ((size_t)(unsigned char)hdr[2] << 16) |
	    ((size_t)(unsigned char)hdr[3] << 8) | (size_t)(unsigned char)hdr[4];
	if (n > NB_MAX_START_MESSAGE)
		nb_resume(argv, memfd, hdr, 5);
	buf = mmap(NULL, n + 5 + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		nb_resume(argv, memfd, hdr, 5);
	memcpy(buf, hdr, 5);
	total = 5 + nb_read_full(fifo, buf + 5, n);
	if (total != n + 5)
		nb_resume(argv, memfd, buf, total);
	buf[total] = '\0';

	// The message: <uint32 count> then count times <uint32 length> <bytes>
	// (encodeStartMessage). The arguments are copied out as C strings: buf
	// stays as read, for the resume.
	p = buf + 5;
	end = buf + total;
	if (end - p < 4)
		nb_resume(argv, memfd, buf, total);
	count = ((size_t)(unsigned char)p[0] << 24) | ((size_t)(unsigned char)p[1] << 16) |
		((size_t)(unsigned char)p[2] << 8) | (size_t)(unsigned char)p[3];
	p += 4;
	if (count == 0 || count > (size_t)(end - p) / 4)
		nb_resume(argv, memfd, buf, total);
	args = mmap(NULL, (count + 1) * sizeof(char *) + n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (args == MAP_FAILED)
		nb_resume(argv, memfd, buf, total);
	strs = (char *)(args + count + 1);
	for (i = 0; (size_t)i < count; i++) {
		size_t len;

		if (end - p < 4)
			nb_resume(argv, memfd, buf, total);
		len = ((size_t)(unsigned char)p[0] << 24) | ((size_t)(unsigned char)p[1] << 16) |
		      ((size_t)(unsigned char)p[2] << 8) | (size_t)(unsigned char)p[3];
		if (len > (size_t)(end - p) - 4)
			nb_resume(argv, memfd, buf, total);
		p += 4;
		// An argument with a NUL, which execve cannot pass: init says so.
		if (memchr(p, '\0', len) != NULL)
			nb_resume(argv, memfd, buf, total);
		args[i] = strs;
		memcpy(strs, p, len);
		strs[len] = '\0';
		strs += len + 1;
		p += len;
	}
	if (p != end)
		nb_resume(argv, memfd, buf, total);
	args[count] = NULL;

	// lookPath (process_linux.go), for the cases whose answer needs no
	// cleaning of a path: anything else, and every failure, is init's.
	flen = strlen(args[0]);
	if (flen == 0)
		nb_resume(argv, memfd, buf, total);
	if (strchr(args[0], '/') != NULL) {
		if (!nb_clean(args[0], flen) || nb_check(args[0]) != 0)
			nb_resume(argv, memfd, buf, total);
		path = args[0];
	} else {
		char *dir, *next;

		if ((flen == 1 && args[0][0] == '.') || (flen == 2 && args[0][0] == '.' && args[0][1] == '.'))
			nb_resume(argv, memfd, buf, total);
		for (i = 0; environ[i] != NULL; i++) {
			if (strncmp(environ[i], "PATH=", 5) == 0)
				pathenv = environ[i] + 5; // the last one, as lookPath
		}
		if (pathenv == NULL || *pathenv == '\0')
			nb_resume(argv, memfd, buf, total);
		path = mmap(NULL, strlen(pathenv) + flen + 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (path == MAP_FAILED)
			nb_resume(argv, memfd, buf, total);
		for (dir = pathenv;; dir = next + 1) {
			size_t dlen;

			next = strchr(dir, ':');
			dlen = next ? (size_t)(next - dir) : strlen(dir);
			if (!nb_clean(dir, dlen))
				nb_resume(argv, memfd, buf, total);
			memcpy(path, dir, dlen);
			if (dlen > 1)
				path[dlen++] = '/';
			memcpy(path + dlen, args[0], flen + 1);
			if (nb_check(path) == 0)
				break;
			// Not this one: whatever it was, init tells what a failed
			// search found (a program denied, or none).
			if (next == NULL)
				nb_resume(argv, memfd, buf, total);
		}
	}
	execve(path, args, environ);
	nb_resume(argv, memfd, buf, total);
}

NB_CONSTRUCTOR(nanobox_waiter)
