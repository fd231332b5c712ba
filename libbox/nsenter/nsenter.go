// Package nsenter joins and creates namespaces for "nanobox-runc init" before
// the Go runtime starts: setns into user and mount namespaces and
// unshare(CLONE_NEWUSER) are refused to a multi-threaded process, and a Go
// process is multi-threaded from its first instruction.
//
// Importing the package (for its side effect, in the main package) links in
// a C constructor (nsexec.c) that runs before the Go runtime in every
// invocation of the binary. Unless the environment variable EnvInitPipe is
// set it returns at once. When it is set, its value is the number of an
// inherited AF_UNIX SOCK_SEQPACKET socket, and the constructor speaks this
// protocol over it (one message per line below; "parent" is the runtime
// process that started the binary):
//
//	parent -> bootstrap message (BootstrapMessage), at most MaxBootstrapSize
//	          bytes of "key=value\n" lines:
//	            clone=<decimal CLONE_NEW* flags of namespaces to create>
//	            join=<kind>:<path>    (zero or more; kinds as Kind returns)
//	            timeoffset=<clock> <secs> <nanosecs>  (zero or more; clock is
//	                                  monotonic or boottime)
//	            cgroupfd=<fd>:<path>  (zero or more; fd is an inherited cgroup
//	                                  v1 "tasks" file open for writing, path
//	                                  its name, for errors)
//	            latecgroups=1         (instead of cgroupfd lines: the cgroups
//	                                  come in step 3b)
//	0. "0" is written to every cgroupfd, which is then closed: the process
//	   moves into those cgroups (a tasks write of "0" moves the writer's
//	   one thread, without the global lock a cgroup.procs write takes), and
//	   init, forked in step 4, is born there.
//	   With timeoffset lines, /proc/self/timens_offsets is opened now, with
//	   the runtime's own credentials (open needs the file's owner, which a
//	   setresuid 0 in a user namespace can take away; write needs
//	   CAP_SYS_TIME over the new time namespace, checked with the opener's
//	   credentials).
//	1. every join path is opened, then joined with setns: user first (and
//	   then setresgid 0, setgroups none, setresuid 0), then ipc, uts, net,
//	   pid, cgroup, time, mnt. A user namespace we are already in is skipped.
//	   While joining, the process is non-dumpable (PR_SET_DUMPABLE 0).
//	2. if clone has CLONE_NEWUSER: unshare(CLONE_NEWUSER), then
//	   child  -> "usermap"     parent writes /proc/<pid>/{uid,gid}_map
//	                           of the process it started
//	   parent -> "usermap-ok"  anything else: the child exits 1 silently
//	   then setresgid 0, setgroups none (EPERM ignored), setresuid 0.
//	3. unshare(clone &^ CLONE_NEWUSER), if non-zero; then, for a new time
//	   namespace, the timeoffset lines are written to the file opened in
//	   step 0 (allowed only before any process is in it: init is forked
//	   next).
//	3b. with latecgroups=1: the cgroups message (CgroupsMessage), sent by the
//	   parent when it has made the container's cgroup (meanwhile this process
//	   made the namespaces: the two overlap), and with a new user namespace
//	   not before usermap-ok:
//	   parent -> "cgroups\n" and lines cgroupfd=<i>:<path> (a cgroup v1
//	             tasks file, joined as in step 0) and at most one
//	             cgroupdir=<i>:<path> (a cgroup2 directory for step 4), <i>
//	             the index of the line's descriptor among those the message
//	             carries (SCM_RIGHTS); EOF instead: exit 1 silently.
//	4. clone(CLONE_PARENT|SIGCHLD): init is a child of the parent, and pid 1
//	   of a new pid namespace if one was created in step 3; with a
//	   cgroupdir, clone3(CLONE_PARENT|CLONE_INTO_CGROUP) first, so that init
//	   is born in that cgroup, and the plain clone when clone3 fails, unless
//	   it refused the cgroup (not clone3 or its flags: ENOSYS, E2BIG,
//	   EINVAL, EPERM) after giving the first pid of a new pid namespace,
//	   which then takes no other: that is an error.
//	   child  -> "pid=<init's pid in the parent's pid namespace>", or
//	             "pid-outside=<pid> <why>" when clone3 failed (init is then
//	             in the v1 cgroups but not in the cgroupdir's: the parent
//	             moves it)
//	   and the process the parent started exits 0. Init waits until that
//	   message is sent, then returns from the constructor into the Go
//	   runtime, with the socket still open and its flags untouched.
//	on any failure:
//	   child  -> "error=<step>: <reason>", e.g.
//	             "error=setns net /proc/123/ns/net: invalid argument",
//	             and the process the parent started exits 1.
//
// The package also links in thp.c: in a binary linked with
// -Wl,--wrap=mmap, the Go runtime's heap mappings ask for transparent huge
// pages when NANOBOX_THP=1 is in the environment, and the binary's image
// is prefaulted when the Go runtime starts where a page fault is dear
// (see there).
//
// The Go side of the protocol is pure Go: BootstrapMessage, ParseReply and
// Kind. The package must be built with cgo; without it nothing would enter
// the namespaces, so a build without cgo fails instead.
package nsenter

/*
#cgo CFLAGS: -Wall -Wextra -Wno-unused-parameter
#include <sys/resource.h>
extern struct rlimit nb_orig_nofile;
extern int nb_orig_nofile_ok;
*/
import "C"

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	// EnvInitPipe names the environment variable holding the fd number of
	// the init socket.
	EnvInitPipe = "_NANOBOX_INITPIPE"
	// EnvNFds, when set to N, makes the constructor close every fd >= N
	// first: 0..N-1 are what the runtime passed, anything above is an fd
	// its caller left inheritable by mistake.
	EnvNFds = "_NANOBOX_NFDS"
	// MaxBootstrapSize is the largest bootstrap message accepted.
	MaxBootstrapSize = 64 << 10

	// Messages and reply kinds.
	MsgUsermap   = "usermap"
	MsgUsermapOK = "usermap-ok"
	MsgPid       = "pid"
	// MsgPidOutside is MsgPid when clone3 could not start init in the
	// cgroupdir of the cgroups message; the value is "<pid> <reason>".
	MsgPidOutside = "pid-outside"
	MsgError      = "error"
)

// Join is a namespace to join: Kind as returned by Kind ("net", "mnt", ...)
// and the path of a namespace file such as /proc/123/ns/net.
type Join struct {
	Kind, Path string
}

type nsType struct {
	kind string
	flag uintptr
}

var ociTypes = map[string]nsType{
	"network": {"net", unix.CLONE_NEWNET},
	"mount":   {"mnt", unix.CLONE_NEWNS},
	"pid":     {"pid", unix.CLONE_NEWPID},
	"ipc":     {"ipc", unix.CLONE_NEWIPC},
	"uts":     {"uts", unix.CLONE_NEWUTS},
	"user":    {"user", unix.CLONE_NEWUSER},
	"cgroup":  {"cgroup", unix.CLONE_NEWCGROUP},
	"time":    {"time", unix.CLONE_NEWTIME},
}

// Kind maps an OCI namespace type ("network", "mount", ...) to the kind used
// in Join ("net", "mnt", ...) and its CLONE_NEW* flag.
func Kind(ociType string) (kind string, flag uintptr, ok bool) {
	t, ok := ociTypes[ociType]
	return t.kind, t.flag, ok
}

func validKind(kind string) bool {
	for _, t := range ociTypes {
		if t.kind == kind {
			return true
		}
	}
	return false
}

// TimeOffset is the offset of one clock ("monotonic" or "boottime") in a
// new time namespace.
type TimeOffset struct {
	Clock    string
	Secs     int64
	Nanosecs uint32
}

// CgroupFd is a cgroup v1 "tasks" file for the child to join (see
// Bootstrap.Cgroups): Fd is its number in the child, Path its name, for
// error messages.
type CgroupFd struct {
	Fd   int
	Path string
}

// Bootstrap is the content of the bootstrap message.
type Bootstrap struct {
	// Clone is the CLONE_NEW* flags of the namespaces to create.
	Clone uintptr
	// Joins are the namespaces to join, in any order.
	Joins []Join
	// Offsets are the clock offsets of a new time namespace.
	Offsets []TimeOffset
	// Cgroups are the cgroup v1 tasks files the child joins first.
	Cgroups []CgroupFd
	// LateCgroups: the cgroups come in a message of their own after the
	// namespaces are made (CgroupsMessage), not in Cgroups.
	LateCgroups bool
	// OOMScoreAdj, when not nil, is the oom_score_adj the child sets right
	// after joining the cgroups, before any namespace: in a user namespace
	// it could not (see nb_set_oom_score_adj in nsexec.c).
	OOMScoreAdj *int
}

// BootstrapMessage encodes the bootstrap message: the namespaces to create
// (CLONE_NEW* flags) and those to join, in any order, and the clock offsets
// of a new time namespace. It is Bootstrap.Message.
func BootstrapMessage(cloneFlags uintptr, joins []Join, offsets ...TimeOffset) []byte {
	return Bootstrap{Clone: cloneFlags, Joins: joins, Offsets: offsets}.Message()
}

// Message encodes b. A join or cgroup file the protocol cannot carry
// (unknown kind, empty path, a path with a newline or NUL, a negative fd)
// is encoded so that the child fails with a "bootstrap: ..." error naming
// it, which comes back like any other error.
func (bs Bootstrap) Message() []byte {
	var b strings.Builder
	b.WriteString("clone=")
	b.WriteString(strconv.FormatUint(uint64(bs.Clone), 10))
	b.WriteByte('\n')
	for _, c := range bs.Cgroups {
		switch {
		case c.Fd < 0:
			b.WriteString("invalid=negative fd " + strconv.Itoa(c.Fd) + " for cgroup " + strconv.Quote(c.Path) + "\n")
		case strings.ContainsAny(c.Path, "\n\x00"):
			b.WriteString("invalid=cgroup path " + strconv.Quote(c.Path) + " contains a newline or NUL\n")
		default:
			b.WriteString("cgroupfd=" + strconv.Itoa(c.Fd) + ":" + c.Path + "\n")
		}
	}
	if bs.LateCgroups {
		b.WriteString("latecgroups=1\n")
	}
	if bs.OOMScoreAdj != nil {
		b.WriteString("oomscoreadj=" + strconv.Itoa(*bs.OOMScoreAdj) + "\n")
	}
	for _, j := range bs.Joins {
		switch {
		case !validKind(j.Kind):
			b.WriteString("invalid=unknown namespace kind " + strconv.Quote(j.Kind) + "\n")
		case j.Path == "":
			b.WriteString("invalid=empty path to join for " + j.Kind + "\n")
		case strings.ContainsAny(j.Path, "\n\x00"):
			b.WriteString("invalid=path to join for " + j.Kind + " " + strconv.Quote(j.Path) + " contains a newline or NUL\n")
		default:
			b.WriteString("join=" + j.Kind + ":" + j.Path + "\n")
		}
	}
	for _, o := range bs.Offsets {
		if o.Clock != "monotonic" && o.Clock != "boottime" {
			b.WriteString("invalid=unknown clock " + strconv.Quote(o.Clock) + " for a time namespace offset\n")
			continue
		}
		b.WriteString("timeoffset=" + o.Clock + " " + strconv.FormatInt(o.Secs, 10) + " " + strconv.FormatUint(uint64(o.Nanosecs), 10) + "\n")
	}
	return []byte(b.String())
}

// CgroupsMessage encodes the cgroups message of a LateCgroups bootstrap:
// the descriptors that go with it (SCM_RIGHTS) are the tasks files named
// by tasks, in order, then the cgroup2 directory named by dir unless dir is
// empty. A path the protocol cannot carry makes the child fail naming it.
func CgroupsMessage(tasks []string, dir string) []byte {
	var b strings.Builder
	b.WriteString("cgroups\n")
	line := func(key string, i int, path string) {
		if strings.ContainsAny(path, "\n\x00") {
			// Not an index: the child refuses the line, quoting it.
			b.WriteString(key + "=bad path " + strconv.Quote(path) + "\n")
			return
		}
		b.WriteString(key + "=" + strconv.Itoa(i) + ":" + path + "\n")
	}
	for i, t := range tasks {
		line("cgroupfd", i, t)
	}
	if dir != "" {
		line("cgroupdir", len(tasks), dir)
	}
	return []byte(b.String())
}

// ParseReply splits a message from the child into its kind and value:
// "usermap" gives ("usermap", ""), "pid=123" gives ("pid", "123") and
// "error=text" gives ("error", "text").
func ParseReply(msg []byte) (kind string, value string) {
	kind, value, _ = strings.Cut(string(msg), "=")
	return kind, value
}

// OriginalNofile returns the RLIMIT_NOFILE the process was started with,
// read by the constructor before the Go runtime raised the soft limit, and
// false outside of "nanobox-runc init".
func OriginalNofile() (unix.Rlimit, bool) {
	if C.nb_orig_nofile_ok == 0 {
		return unix.Rlimit{}, false
	}
	return unix.Rlimit{Cur: uint64(C.nb_orig_nofile.rlim_cur), Max: uint64(C.nb_orig_nofile.rlim_max)}, true
}
