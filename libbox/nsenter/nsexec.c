// The nsenter stage of "nanobox-runc init": a constructor that runs before
// the Go runtime starts (and so while the process is still single-threaded),
// joins and creates namespaces, and forks the container's init.
//
// It does nothing unless _NANOBOX_INITPIPE is set. The protocol over that
// fd (an AF_UNIX SOCK_SEQPACKET socket) is described in nsenter.go.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include "nb_args.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define NB_CLONE_INTO_CGROUP 0x200000000ULL
#ifdef SYS_clone3
#define NB_SYS_clone3 SYS_clone3
#else
#define NB_SYS_clone3 435
#endif
#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#endif

#define NANOBOX_ENV_INITPIPE "_NANOBOX_INITPIPE"
#define NANOBOX_ENV_NFDS "_NANOBOX_NFDS"
#define NANOBOX_MAX_BOOTSTRAP (64 * 1024)

#define NANOBOX_NS_FLAGS                                                   \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |       \
	 CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWCGROUP | CLONE_NEWTIME)

struct nb_kind {
	const char *name;
	int flag;
};

// Namespace kinds in the order they are joined within each of nb_join's
// passes (user has one of its own), mnt last (it changes path resolution;
// all paths are opened before any join anyway).
static const struct nb_kind nb_kinds[] = {
	{"user", CLONE_NEWUSER}, {"ipc", CLONE_NEWIPC},
	{"uts", CLONE_NEWUTS},   {"net", CLONE_NEWNET},
	{"pid", CLONE_NEWPID},   {"cgroup", CLONE_NEWCGROUP},
	{"time", CLONE_NEWTIME}, {"mnt", CLONE_NEWNS},
};
#define NB_NKINDS ((int)(sizeof(nb_kinds) / sizeof(nb_kinds[0])))
#define NB_USER 0

static int nb_pipe = -1;

// The RLIMIT_NOFILE this process was started with, saved before the Go
// runtime raises its soft limit (and then restores it in syscall.Exec with
// a setrlimit call that would run under the container's seccomp filter):
// init puts it back itself, before the filter (nsenter.go).
struct rlimit nb_orig_nofile;
int nb_orig_nofile_ok;

// The bootstrap message, one byte more than the limit so that the
// terminating NUL always fits. In .bss: costs nothing unless touched.
static char nb_msg[NANOBOX_MAX_BOOTSTRAP + 1];

static int nb_send(const char *buf, size_t len)
{
	ssize_t n;

	do
		n = send(nb_pipe, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

// nb_strerror is strerror in Go's style: "invalid argument", not
// "Invalid argument".
static const char *nb_strerror(int err)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s", strerror(err));
	if (buf[0] >= 'A' && buf[0] <= 'Z')
		buf[0] += 'a' - 'A';
	return buf;
}

// nb_fail sends "error=<text>" to the parent and exits 1. If the socket is
// unusable the text goes to stderr instead, the only place left.
static void nb_vfail(int err, const char *fmt, va_list ap)
	__attribute__((noreturn, format(printf, 2, 0)));
static void nb_vfail(int err, const char *fmt, va_list ap)
{
	char buf[8192];
	size_t n;

	n = (size_t)snprintf(buf, sizeof(buf), "error=");
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	n = strlen(buf);
	if (err != 0) {
		snprintf(buf + n, sizeof(buf) - n, ": %s", nb_strerror(err));
		n = strlen(buf);
	}
	if (nb_pipe < 0 || nb_send(buf, n) < 0) {
		ssize_t unused __attribute__((unused));
		unused = write(2, "nanobox-runc init: ", 19);
		unused = write(2, buf + 6, n - 6);
		unused = write(2, "\n", 1);
	}
	_exit(1);
}

static void nb_fail(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void nb_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nb_vfail(0, fmt, ap);
}

// nb_bail is nb_fail with ": <strerror(errno)>" appended.
static void nb_bail(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void nb_bail(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	nb_vfail(err, fmt, ap);
}

static const char *nb_kind_name(int flag)
{
	for (int i = 0; i < NB_NKINDS; i++)
		if (nb_kinds[i].flag == flag)
			return nb_kinds[i].name;
	return NULL;
}

// The timeoffset lines of the bootstrap message, "<clock> <secs> <nsecs>".
#define NB_MAX_OFFSETS 2
// nb_oom is the oom_score_adj to set ("oomscoreadj="), or NULL.
static const char *nb_oom;

static const char *nb_offsets[NB_MAX_OFFSETS];
static int nb_noffsets;

// The cgroupfd lines of the bootstrap message: a cgroup v1 "tasks" file the
// runtime opened for writing, and its path (for errors only).
#define NB_MAX_CGROUPS 32
static struct {
	int fd;
	const char *path;
} nb_cgroups[NB_MAX_CGROUPS];
static int nb_ncgroups;

// latecgroups=1: the cgroups come in a second message, after the namespaces
// are made (see nb_recv_cgroups); nb_cgroup_dir is then the cgroup2
// directory init is cloned into (clone3 CLONE_INTO_CGROUP), or -1.
static int nb_late;
static int nb_cgroup_dir = -1;
static const char *nb_cgroup_dir_path;

// nb_num_path splits val, "<decimal>:<path>", at its colon (val keeps the
// number's text, for errors) and returns the number, or -1 when it is not
// one; *path is NULL when there is no colon.
static long nb_num_path(char *val, char **path)
{
	char *end;
	long n;

	*path = strchr(val, ':');
	if (*path == NULL)
		return -1;
	*(*path)++ = '\0';
	errno = 0;
	n = strtol(val, &end, 10);
	if (*val < '0' || *val > '9' || *end != '\0' || errno != 0 || n > INT_MAX)
		return -1;
	return n;
}

static void nb_parse_cgroupfd(char *val)
{
	char *path;
	long fd = nb_num_path(val, &path);

	if (path == NULL)
		nb_fail("bootstrap: malformed cgroupfd \"%.200s\"", val);
	if (fd < 0 || fd == nb_pipe)
		nb_fail("bootstrap: bad cgroupfd %.64s for %.200s", val, path);
	if (fcntl((int)fd, F_GETFD) < 0)
		nb_bail("bootstrap: cgroupfd %ld for %.200s", fd, path);
	if (nb_ncgroups == NB_MAX_CGROUPS)
		nb_fail("bootstrap: more than %d cgroupfd lines", NB_MAX_CGROUPS);
	nb_cgroups[nb_ncgroups].fd = (int)fd;
	nb_cgroups[nb_ncgroups].path = path;
	nb_ncgroups++;
}

// nb_join_cgroups moves this process into the container's cgroup in each
// cgroup v1 hierarchy: "0" (the writer itself) to a tasks file moves one
// thread, which is all of us while we are single-threaded, and is the one
// move that does not take the kernel's global cgroup_threadgroup_rwsem for
// writing (whose RCU grace period made a runtime's write of a pid to
// cgroup.procs cost 10 ms and more). The files were opened by the runtime:
// the kernel checks the opener's credentials, so this works in a user
// namespace too. init, forked later, is born in those cgroups.
static void nb_join_cgroups(void)
{
	for (int i = 0; i < nb_ncgroups; i++) {
		ssize_t n;

		do
			n = write(nb_cgroups[i].fd, "0", 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			nb_bail("join cgroup %s", nb_cgroups[i].path);
		close(nb_cgroups[i].fd);
	}
}

// nb_next_kv cuts the next non-empty line of the NUL-terminated lines at
// *cur, "key=value", into *key and *val, and moves *cur past it; 0 at the
// end. A line without "=" fails, prefixed with what.
static int nb_next_kv(char **cur, char **key, char **val, const char *what)
{
	for (;;) {
		char *line = *cur, *nl;

		if (*line == '\0')
			return 0;
		nl = strchr(line, '\n');
		if (nl != NULL) {
			*nl = '\0';
			*cur = nl + 1;
		} else {
			*cur = line + strlen(line);
		}
		if (*line == '\0')
			continue;
		*val = strchr(line, '=');
		if (*val == NULL)
			nb_fail("%s: malformed line \"%.200s\"", what, line);
		*(*val)++ = '\0';
		*key = line;
		return 1;
	}
}

// The cgroups message of latecgroups=1, with the descriptors it carries
// (SCM_RIGHTS): "cgroups" on the first line, then "cgroupfd=<i>:<path>"
// (a cgroup v1 tasks file) and at most one "cgroupdir=<i>:<path>" (a
// cgroup2 directory), <i> the index of the descriptor in the message.
#define NB_MAX_LATE 8192
static char nb_late_msg[NB_MAX_LATE + 1];

// nb_late_fd returns descriptor i of the message for the line val names
// ("<i>:<path>", val cut at the colon, *path set), each one once.
static int nb_late_fd(char *val, const char **path, int *fds, int nfds, int *used)
{
	char *p;
	long i = nb_num_path(val, &p);

	if (p == NULL)
		nb_fail("cgroups: malformed line \"%.200s\"", val);
	if (i < 0 || i >= nfds || used[i])
		nb_fail("cgroups: bad descriptor index %.64s for %.200s", val, p);
	used[i] = 1;
	*path = p;
	return fds[i];
}

// nb_recv_cgroups reads the cgroups message into nb_cgroups and
// nb_cgroup_dir. A descriptor the message does not name is closed.
static void nb_recv_cgroups(void)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (NB_MAX_CGROUPS + 1))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = nb_late_msg, .iov_len = NB_MAX_LATE};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
	int fds[NB_MAX_CGROUPS + 1], used[NB_MAX_CGROUPS + 1] = {0}, nfds = 0;
	char *cur, *key, *val;
	ssize_t n;

	do
		n = recvmsg(nb_pipe, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		nb_bail("cgroups: read init pipe");
	if (n == 0)
		_exit(1); // the runtime gave up (its cgroup could not be made)
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int j = 0; j < k && nfds <= NB_MAX_CGROUPS; j++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + j * sizeof(int), sizeof(int));
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		nb_fail("cgroups: message or descriptors truncated");
	if (memchr(nb_late_msg, '\0', (size_t)n) != NULL)
		nb_fail("cgroups: message contains a NUL byte");
	nb_late_msg[n] = '\0';
	if (strncmp(nb_late_msg, "cgroups\n", 8) != 0 && strcmp(nb_late_msg, "cgroups") != 0)
		nb_fail("cgroups: unexpected message \"%.200s\"", nb_late_msg);
	cur = nb_late_msg + 7;
	while (nb_next_kv(&cur, &key, &val, "cgroups")) {
		if (strcmp(key, "cgroupfd") == 0) {
			if (nb_ncgroups == NB_MAX_CGROUPS)
				nb_fail("cgroups: more than %d cgroupfd lines", NB_MAX_CGROUPS);
			nb_cgroups[nb_ncgroups].fd = nb_late_fd(val, &nb_cgroups[nb_ncgroups].path, fds, nfds, used);
			nb_ncgroups++;
		} else if (strcmp(key, "cgroupdir") == 0 && nb_cgroup_dir < 0) {
			nb_cgroup_dir = nb_late_fd(val, &nb_cgroup_dir_path, fds, nfds, used);
		} else {
			nb_fail("cgroups: unexpected line \"%.200s=%.200s\"", key, val);
		}
	}
	for (int i = 0; i < nfds; i++)
		if (!used[i])
			close(fds[i]);
}

// nb_parse reads the bootstrap lines in nb_msg (NUL-terminated, len bytes).
static void nb_parse(size_t len, unsigned long *clone_flags, char *paths[NB_NKINDS])
{
	char *cur, *key, *val;
	int seen_clone = 0;

	if (memchr(nb_msg, '\0', len) != NULL)
		nb_fail("bootstrap: message contains a NUL byte");
	nb_msg[len] = '\0';
	cur = nb_msg;
	while (nb_next_kv(&cur, &key, &val, "bootstrap")) {
		if (strcmp(key, "clone") == 0) {
			char *end;
			unsigned long v;

			if (seen_clone++)
				nb_fail("bootstrap: clone given twice");
			errno = 0;
			v = strtoul(val, &end, 10);
			if (*val < '0' || *val > '9' || *end != '\0' || errno != 0)
				nb_fail("bootstrap: bad clone flags \"%.200s\"", val);
			if (v & ~(unsigned long)NANOBOX_NS_FLAGS)
				nb_fail("bootstrap: clone flags %#lx are not namespace flags",
					v & ~(unsigned long)NANOBOX_NS_FLAGS);
			*clone_flags = v;
		} else if (strcmp(key, "join") == 0) {
			char *path = strchr(val, ':');
			int i;

			if (path == NULL)
				nb_fail("bootstrap: malformed join \"%.200s\"", val);
			*path++ = '\0';
			for (i = 0; i < NB_NKINDS; i++)
				if (strcmp(val, nb_kinds[i].name) == 0)
					break;
			if (i == NB_NKINDS)
				nb_fail("bootstrap: unknown namespace kind \"%.200s\"", val);
			if (*path == '\0')
				nb_fail("bootstrap: empty path to join for %s", val);
			if (paths[i] != NULL)
				nb_fail("bootstrap: %s namespace joined twice", val);
			paths[i] = path;
		} else if (strcmp(key, "timeoffset") == 0) {
			if (nb_noffsets == NB_MAX_OFFSETS)
				nb_fail("bootstrap: more than %d time offsets", NB_MAX_OFFSETS);
			nb_offsets[nb_noffsets++] = val;
		} else if (strcmp(key, "oomscoreadj") == 0) {
			char *end;
			long v;

			errno = 0;
			v = strtol(val, &end, 10);
			if (nb_oom != NULL || *val == '\0' || *end != '\0' || errno != 0 ||
			    v < -1000 || v > 1000)
				nb_fail("bootstrap: bad oomscoreadj \"%.200s\"", val);
			nb_oom = val;
		} else if (strcmp(key, "cgroupfd") == 0) {
			nb_parse_cgroupfd(val);
		} else if (strcmp(key, "latecgroups") == 0) {
			if (strcmp(val, "1") != 0 || nb_late)
				nb_fail("bootstrap: bad latecgroups \"%.200s\"", val);
			nb_late = 1;
		} else if (strcmp(key, "invalid") == 0) {
			// Written by BootstrapMessage for input it cannot encode.
			nb_fail("bootstrap: %.4000s", val);
		} else {
			nb_fail("bootstrap: unknown key \"%.200s\"", key);
		}
	}
	if (nb_late && nb_ncgroups > 0)
		nb_fail("bootstrap: cgroupfd lines and latecgroups together");
}

static void nb_become_root(void)
{
	// EINVAL: the namespace maps no id 0 (a sandbox whose one mapped user
	// is not root). The process then keeps its ids, and the full
	// capabilities in the namespace that its creator, or a process that
	// joined it with setns, has; init sets the process's own ids later.
	if (setresgid(0, 0, 0) < 0 && errno != EINVAL)
		nb_bail("setresgid 0");
	// Denied (EPERM) when /proc/<pid>/setgroups is "deny": rootless.
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		nb_bail("setgroups");
	if (setresuid(0, 0, 0) < 0 && errno != EINVAL)
		nb_bail("setresuid 0");
}

static int nb_same_file(int fd, const char *path)
{
	struct stat a, b;

	if (fstat(fd, &a) < 0 || stat(path, &b) < 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// nb_setns joins the namespace of kind i through fd. With skip_eperm, a
// permission error leaves it for later (returns 0, fd kept open); any other
// failure is fatal. Returns 1 once joined (fd closed).
static int nb_setns(int i, int fd, const char *path, int skip_eperm)
{
	if (setns(fd, nb_kinds[i].flag) < 0) {
		int err = errno;
		int type, ioctl_err;
		const char *is;

		if (err == EPERM && skip_eperm)
			return 0;
		type = ioctl(fd, NS_GET_NSTYPE);
		ioctl_err = errno;
		is = type > 0 ? nb_kind_name(type) : NULL;
		// EINVAL alone does not say why: tell a file of another kind of
		// namespace, or no namespace at all, apart.
		if (err == EINVAL && is != NULL && type != nb_kinds[i].flag)
			nb_fail("setns %s %s: %s (it is a %s namespace)",
				nb_kinds[i].name, path, nb_strerror(err), is);
		if (err == EINVAL && type < 0 && ioctl_err == ENOTTY)
			nb_fail("setns %s %s: %s (not a namespace file)",
				nb_kinds[i].name, path, nb_strerror(err));
		errno = err;
		nb_bail("setns %s %s", nb_kinds[i].name, path);
	}
	close(fd);
	if (i == NB_USER)
		nb_become_root();
	return 1;
}

// nb_join joins the namespaces of paths, as runc's nsexec does: first every
// one but user that the runtime's credentials may join (a namespace made
// outside the container's user namespace, such as a netns of the host's,
// cannot be joined from inside it), then user, then the rest (which need
// the capabilities the user namespace gives: rootless).
static void nb_join(char *paths[NB_NKINDS])
{
	int fds[NB_NKINDS];

	// Open them all first: joining mnt (or user, for permissions) changes
	// what the remaining paths would resolve to.
	for (int i = 0; i < NB_NKINDS; i++) {
		fds[i] = -1;
		if (paths[i] == NULL)
			continue;
		fds[i] = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0)
			nb_bail("open %s %s", nb_kinds[i].name, paths[i]);
		// setns into the user namespace we are already in is EINVAL;
		// it is also a no-op, so skip it (and the credential change).
		// Checked now: /proc/self may mean another process once a
		// mount namespace is joined.
		if (i == NB_USER && nb_same_file(fds[i], "/proc/self/ns/user")) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < NB_NKINDS; i++) {
			if (fds[i] < 0 || (pass == 1) != (i == NB_USER))
				continue;
			if (nb_setns(i, fds[i], paths[i], pass == 0))
				fds[i] = -1;
		}
	}
}

static void nb_unshare(unsigned long flags)
{
	char names[128] = "";

	if (unshare((int)flags) == 0)
		return;
	for (int i = 0; i < NB_NKINDS; i++) {
		if (!(flags & (unsigned long)nb_kinds[i].flag))
			continue;
		if (names[0] != '\0')
			strcat(names, ",");
		strcat(names, nb_kinds[i].name);
	}
	nb_bail("unshare %s", names);
}

// nb_set_oom_score_adj writes oom_score_adj before any namespace is joined
// or created (runc does the same), for the process and all it forks. Later
// it could not be written at all when there is a user namespace that maps 0
// to another id: setresuid 0 there makes us non-dumpable, and the /proc
// files of a non-dumpable task belong to host root. /proc is still the
// runtime's here.
static void nb_set_oom_score_adj(void)
{
	size_t len = strlen(nb_oom);
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		nb_bail("set oom_score_adj: open /proc/self/oom_score_adj");
	if (write(fd, nb_oom, len) != (ssize_t)len) {
		int err = errno;

		if (err == EACCES || err == EPERM)
			nb_fail("set oom_score_adj: write %s: %s: lowering oom_score_adj needs CAP_SYS_RESOURCE; "
				"raise or unset process.oomScoreAdj", nb_oom, nb_strerror(err));
		nb_bail("set oom_score_adj: write %s", nb_oom);
	}
	close(fd);
}

// nb_open_offsets opens /proc/self/timens_offsets before any namespace is
// joined or created, with the credentials the runtime started us with. Two
// checks guard the file, and only this order passes both when there is a
// user namespace: open(2) needs the file's owner, which stops being us once
// setresuid 0 in a user namespace that maps 0 to another id (rootful, 0 ->
// 100000) makes us non-dumpable (the owner of a non-dumpable task's /proc
// files is host root); write(2) needs CAP_SYS_TIME, checked with the
// opener's credentials, in the user namespace owning the new time namespace,
// and that is what the runtime's own credentials have: host root over every
// user namespace, and an unprivileged caller over the one it creates (it
// owns it). The write goes to the time namespace for children that exists
// at write time.
static int nb_open_offsets(void)
{
	int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		nb_bail("open /proc/self/timens_offsets");
	return fd;
}

// nb_write_offsets writes the clock offsets of the new time namespace,
// which no process is in yet (the kernel refuses them after), to fd, which
// nb_open_offsets opened; and closes fd.
static void nb_write_offsets(int fd)
{
	for (int i = 0; i < nb_noffsets; i++) {
		size_t len = strlen(nb_offsets[i]);

		if (write(fd, nb_offsets[i], len) != (ssize_t)len)
			nb_bail("set time namespace offset \"%s\"", nb_offsets[i]);
	}
	close(fd);
}

// nb_clone_parent forks like fork(2) but makes the child a sibling of the
// caller (CLONE_PARENT): a raw clone, so no atfork handlers run, and no
// glibc function that caches the pid or tid may be trusted in the child
// afterwards (glibc >= 2.25 caches no pid; getpid() is a real syscall).
static pid_t nb_clone_parent(void)
{
#if defined(__s390__) || defined(__CRIS__)
	return (pid_t)syscall(SYS_clone, 0, CLONE_PARENT | SIGCHLD, 0, 0, 0);
#else
	return (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
#endif
}

// nb_clone_into forks as nb_clone_parent does, with the child born in the
// cgroup2 directory dir (clone3 CLONE_INTO_CGROUP, Linux 5.7): no move
// afterwards, and no charge of the child's first pages elsewhere. -1 with
// errno set when clone3 is refused (an older kernel, a seccomp filter
// around the runtime) or the cgroup is: no process was made, but see the
// caller about a new pid namespace.
static pid_t nb_clone_into(int dir)
{
	// struct clone_args up to cgroup (CLONE_ARGS_SIZE_VER2).
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
			stack_size, tls, set_tid, set_tid_size, cgroup;
	} args = {.flags = CLONE_PARENT | NB_CLONE_INTO_CGROUP, .cgroup = (uint64_t)dir};

	return (pid_t)syscall(NB_SYS_clone3, &args, sizeof(args));
}

// nb_close_from closes every descriptor from first up.
static void nb_close_from(int first)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned int)first, ~0U, 0) == 0)
		return;
#endif
	// close_range is Linux 5.9; before it, close them one by one.
	long max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 1 << 20)
		max = 1 << 20;
	for (int i = first; i < max; i++)
		close(i);
}

static void nanobox_nsenter(int argc, char **argv)
{
	const char *env = getenv(NANOBOX_ENV_INITPIPE);
	char *paths[NB_NKINDS] = {0};
	unsigned long clone_flags = 0;
	int any_join = 0, offsets_fd = -1, sync[2], outside_err = 0;
	char *end;
	long fd;
	ssize_t n;
	pid_t pid;

	if (env == NULL)
		return;
	// A pooled sandbox's waiter and resume (libbox/waiter_linux.go) have
	// the program's environment, which may hold anything.
	if (argc > 0 && (strcmp(argv[0], "nanobox-waiter") == 0 || strcmp(argv[0], "nanobox-resume") == 0))
		return;
	nb_orig_nofile_ok = getrlimit(RLIMIT_NOFILE, &nb_orig_nofile) == 0;

	errno = 0;
	fd = strtol(env, &end, 10);
	if (*env < '0' || *env > '9' || *end != '\0' || errno != 0 || fd > INT_MAX)
		nb_fail("bad %s=%.64s", NANOBOX_ENV_INITPIPE, env);
	if (fcntl((int)fd, F_GETFD) < 0)
		nb_bail("%s=%ld", NANOBOX_ENV_INITPIPE, fd);
	nb_pipe = (int)fd;

	// Descriptors the runtime's caller left inheritable, beyond those
	// passed on purpose (0..NFDS-1), must not reach the container
	// (CVE-2024-21626 class): close them before anything else.
	env = getenv(NANOBOX_ENV_NFDS);
	if (env != NULL) {
		long nfds;

		errno = 0;
		nfds = strtol(env, &end, 10);
		if (*env < '0' || *env > '9' || *end != '\0' || errno != 0 ||
		    nfds <= fd || nfds > INT_MAX)
			nb_fail("bad %s=%.64s", NANOBOX_ENV_NFDS, env);
		nb_close_from((int)nfds);
	}

	// One message; MSG_TRUNC makes recv return its real length.
	do
		n = recv(nb_pipe, nb_msg, sizeof(nb_msg), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		nb_bail("bootstrap: read init pipe");
	if (n == 0)
		nb_fail("bootstrap: empty message or init pipe closed");
	if (n > NANOBOX_MAX_BOOTSTRAP)
		nb_fail("bootstrap: message of %zd bytes is over the limit of %d",
			n, NANOBOX_MAX_BOOTSTRAP);
	nb_parse((size_t)n, &clone_flags, paths);
	// Step 0: the container's cgroups, before anything is done in them
	// (and charged to them) or any namespace is entered.
	nb_join_cgroups();
	if (nb_oom != NULL)
		nb_set_oom_score_adj();

	if (nb_noffsets > 0) {
		if (!(clone_flags & CLONE_NEWTIME))
			nb_fail("bootstrap: time offsets without a new time namespace");
		offsets_fd = nb_open_offsets();
	}

	// Step 1: join. While in namespaces owned by someone else (the
	// container), nobody there may ptrace us or open our /proc files.
	for (int i = 0; i < NB_NKINDS; i++)
		any_join |= paths[i] != NULL;
	if (any_join && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		nb_bail("prctl set non-dumpable");
	nb_join(paths);

	// Step 2: a new user namespace, mapped by the parent.
	if (clone_flags & CLONE_NEWUSER) {
		char reply[16];

		if (unshare(CLONE_NEWUSER) < 0)
			nb_bail("unshare user");
		// The parent opens /proc/<pid>/uid_map: it must be ours to open.
		if (any_join && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
			nb_bail("prctl set dumpable");
		if (nb_send("usermap", 7) < 0)
			_exit(1);
		do
			n = recv(nb_pipe, reply, sizeof(reply), MSG_TRUNC);
		while (n < 0 && errno == EINTR);
		if (n != 10 || memcmp(reply, "usermap-ok", 10) != 0)
			_exit(1);
		if (any_join && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
			nb_bail("prctl set non-dumpable");
		nb_become_root();
	}

	// Step 3: the other new namespaces (pid and time apply to children).
	if (clone_flags & ~(unsigned long)CLONE_NEWUSER)
		nb_unshare(clone_flags & ~(unsigned long)CLONE_NEWUSER);
	if (offsets_fd >= 0)
		nb_write_offsets(offsets_fd);

	// Step 3b (latecgroups): the container's cgroups, which the runtime
	// made while this process made the namespaces.
	if (nb_late) {
		nb_recv_cgroups();
		nb_join_cgroups();
	}

	// Step 4: fork init as a child of our parent. init waits until the
	// parent has its pid, so that "pid=" comes before anything init sends.
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0)
		nb_bail("socketpair");
	pid = -1;
	if (nb_cgroup_dir >= 0) {
		pid = nb_clone_into(nb_cgroup_dir);
		if (pid < 0) {
			outside_err = errno;
			// The kernel refuses clone3 or the flag before it makes
			// anything; a refusal of the cgroup comes after the new
			// process has its pid, and when that was the first pid
			// of a new pid namespace, the namespace takes no other
			// (every later fork: ENOMEM). Then this is the error.
			if ((clone_flags & CLONE_NEWPID) && outside_err != ENOSYS && outside_err != E2BIG &&
			    outside_err != EINVAL && outside_err != EPERM) {
				errno = outside_err;
				nb_bail("clone init into cgroup %s", nb_cgroup_dir_path);
			}
		}
	}
	if (pid < 0)
		pid = nb_clone_parent();
	if (pid < 0 && outside_err != 0)
		nb_bail("clone init (after clone3 into cgroup %s: %s)", nb_cgroup_dir_path, nb_strerror(outside_err));
	if (pid < 0)
		nb_bail("clone init");
	if (pid == 0) {
		char c;

		// A cgroup2 directory must not reach the container.
		if (nb_cgroup_dir >= 0)
			close(nb_cgroup_dir);
		close(sync[1]);
		do
			n = read(sync[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(1); // the intermediate could not report our pid
		close(sync[0]);
		return; // on to the Go runtime, as init
	}
	close(sync[0]);
	{
		char buf[320];
		int len;

		if (outside_err != 0)
			len = snprintf(buf, sizeof(buf), "pid-outside=%d clone3 into %.200s: %s", (int)pid,
				       nb_cgroup_dir_path, nb_strerror(outside_err));
		else
			len = snprintf(buf, sizeof(buf), "pid=%d", (int)pid);
		if (len < 0 || (size_t)len >= sizeof(buf))
			len = (int)sizeof(buf) - 1;

		if (nb_send(buf, (size_t)len) < 0)
			_exit(1); // init reads EOF on sync and exits too
	}
	if (send(sync[1], "1", 1, MSG_NOSIGNAL) != 1)
		_exit(1);
	_exit(0);
}

NB_CONSTRUCTOR(nanobox_nsenter)
