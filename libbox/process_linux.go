package libbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/moby/sys/user"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// defaultPath is the PATH searched for the program when its environment
// has none (runc, and the OCI runtime-spec's example config, use the same).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// setupProcess gives the calling process the identity, limits, privileges
// and working directory p asks for; it runs in the container's init
// (already inside the container's root) just before the user program is
// executed, and returns p.Env with HOME added when p.Env has none (or an
// empty one).
//
// Capabilities, the keep-caps flag, no_new_privs and the other thread-local
// credentials change on the calling thread only, so the caller must be locked
// to its OS thread (runtime.LockOSThread) and execve from that same thread.
// The uid, gid and groups change on every thread (Go's syscall package does
// that, so the runtime's other threads cannot be used to regain privilege).
//
// The order is runc's: rlimits and oom_score_adj while still privileged,
// then the scheduler and I/O priority (raising them needs CAP_SYS_NICE, or
// the RLIMIT_RTPRIO/RLIMIT_NICE just set; both are the calling thread's,
// the one that executes the program), bounding set, the cwd (entered while
// still privileged, so a cwd the user cannot traverse to works, as in
// runc; again as the user when only the user can reach it), user and
// groups (keeping the permitted set across the uid change), then the
// capability sets, umask and no_new_privs.
//
// With retainSysAdmin the effective and permitted sets also keep
// CAP_SYS_ADMIN, for a seccomp filter installed later without
// no_new_privs; final is then the sets to drop to afterwards (else nil).
func setupProcess(p *Process, rootless, retainSysAdmin bool) (env []string, final *capState, err error) {
	// Resolve and check the capability sets first, so a config the kernel
	// would refuse halfway through fails before anything has changed.
	plan, err := planCapabilities(p.Capabilities)
	if err != nil {
		return nil, nil, fmt.Errorf("set capabilities: %w", err)
	}
	old, err := capget()
	if err != nil {
		return nil, nil, fmt.Errorf("set capabilities: %w", err)
	}
	plan, missing := grantable(plan, old, readBoundingSet())
	if missing != 0 {
		logrus.Warnf("capabilities %s cannot be granted: the runtime does not hold them; the process runs without them",
			strings.Join(missing.names(), ", "))
	}
	// The soft RLIMIT_NOFILE the runtime was started with, which the Go
	// runtime raised; put back now, before the config's own rlimits, so
	// that syscall.Exec has nothing to restore (it would, with a setrlimit
	// call under the seccomp filter).
	if orig, ok := nsenter.OriginalNofile(); ok {
		if err := syscall.Setrlimit(unix.RLIMIT_NOFILE, &syscall.Rlimit{Cur: orig.Cur, Max: orig.Max}); err != nil {
			return nil, nil, fmt.Errorf("restore RLIMIT_NOFILE: %w", err)
		}
	}
	for _, rl := range p.Rlimits {
		if rl.Type == unix.RLIMIT_AS {
			// Set right before execve, by pendingExec.run.
			continue
		}
		if err := setRlimit(rl); err != nil {
			return nil, nil, err
		}
	}
	if p.OOMScoreAdj != nil {
		if err := setOOMScoreAdj(*p.OOMScoreAdj); err != nil {
			return nil, nil, fmt.Errorf("set oom_score_adj: %w", err)
		}
	}
	if p.Scheduler != nil {
		if err := setScheduler(p.Scheduler); err != nil {
			return nil, nil, fmt.Errorf("set process.scheduler: %w", err)
		}
	}
	if p.IOPriority != nil {
		if err := setIOPriority(p.IOPriority); err != nil {
			return nil, nil, fmt.Errorf("set process.ioPriority: %w", err)
		}
	}
	if err := dropBoundingSet(plan.bounding); err != nil {
		return nil, nil, fmt.Errorf("drop bounding capabilities: %w", err)
	}
	// HOME is looked up while still root: /etc/passwd may be unreadable for
	// the target user, and that must not change the result.
	env = withHome(dedupEnv(p.Env), p.User.UID, "/etc/passwd")
	cwdDone, err := enterCwd(p.Cwd, true)
	if err != nil {
		return nil, nil, err
	}
	if err := setupUser(p.User, rootless); err != nil {
		return nil, nil, fmt.Errorf("set user: %w", err)
	}
	if !cwdDone {
		if _, err := enterCwd(p.Cwd, false); err != nil {
			return nil, nil, err
		}
	}
	applied := plan
	if retainSysAdmin && !plan.effective.has(unix.CAP_SYS_ADMIN) {
		const sysAdmin = capMask(1) << unix.CAP_SYS_ADMIN
		applied.effective |= sysAdmin
		applied.permitted |= sysAdmin
		final = &capState{effective: plan.effective, permitted: plan.permitted, inheritable: plan.inheritable}
	}
	if err := applyCapabilities(applied); err != nil {
		return nil, nil, fmt.Errorf("set capabilities: %w", err)
	}
	if p.User.Umask != nil {
		unix.Umask(int(*p.User.Umask))
	}
	if p.NoNewPrivileges {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return nil, nil, fmt.Errorf("set no_new_privs: prctl PR_SET_NO_NEW_PRIVS: %w", err)
		}
	}
	return env, final, nil
}

// enterCwd changes to the process's cwd. Tried first with the runtime's
// privileges (privileged true), a permission error is not final: the
// process's own user may be the one allowed in, and the caller tries again
// once it is that user.
func enterCwd(cwd string, privileged bool) (done bool, err error) {
	err = unix.Chdir(cwd)
	switch {
	case err == nil:
		return true, nil
	case privileged && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)):
		return false, nil
	}
	return false, fmt.Errorf("chdir to cwd %q set in config.json: %w", cwd, err)
}

// rlimitNames are the RLIMIT_* names by number, for error messages.
var rlimitNames = [...]string{
	unix.RLIMIT_CPU:     "RLIMIT_CPU",
	unix.RLIMIT_FSIZE:   "RLIMIT_FSIZE",
	unix.RLIMIT_DATA:    "RLIMIT_DATA",
	unix.RLIMIT_STACK:   "RLIMIT_STACK",
	unix.RLIMIT_CORE:    "RLIMIT_CORE",
	unix.RLIMIT_RSS:     "RLIMIT_RSS",
	unix.RLIMIT_NPROC:   "RLIMIT_NPROC",
	unix.RLIMIT_NOFILE:  "RLIMIT_NOFILE",
	unix.RLIMIT_MEMLOCK: "RLIMIT_MEMLOCK",
	unix.RLIMIT_AS:      "RLIMIT_AS",
	10:                  "RLIMIT_LOCKS",
	11:                  "RLIMIT_SIGPENDING",
	12:                  "RLIMIT_MSGQUEUE",
	13:                  "RLIMIT_NICE",
	14:                  "RLIMIT_RTPRIO",
	unix.RLIMIT_RTTIME:  "RLIMIT_RTTIME",
}

func rlimitName(t int) string {
	if t >= 0 && t < len(rlimitNames) {
		return rlimitNames[t]
	}
	return "rlimit " + strconv.Itoa(t)
}

func rlimitValue(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// setRlimit applies one rlimit. unix.Setrlimit also tells Go's syscall.Exec
// not to restore the RLIMIT_NOFILE the runtime started with.
func setRlimit(rl Rlimit) error {
	err := unix.Setrlimit(rl.Type, &unix.Rlimit{Cur: rl.Soft, Max: rl.Hard})
	if err == nil {
		return nil
	}
	err = fmt.Errorf("setrlimit %s %s/%s: %w", rlimitName(rl.Type), rlimitValue(rl.Soft), rlimitValue(rl.Hard), err)
	switch {
	case errors.Is(err, unix.EPERM):
		var cur unix.Rlimit
		if unix.Getrlimit(rl.Type, &cur) == nil && rl.Hard > cur.Max {
			return fmt.Errorf("%w: the hard limit cannot be raised without CAP_SYS_RESOURCE; lower process.rlimits", err)
		}
	case errors.Is(err, unix.EINVAL) && rl.Soft > rl.Hard:
		return fmt.Errorf("%w: the soft limit is above the hard limit", err)
	}
	return err
}

// setOOMScoreAdj writes v to /proc/self/oom_score_adj, after checking that
// the file really is on procfs (a container could have mounted something
// else over /proc; CVE-2025-52881).
// A container's init and exec'd processes never get here: the nsenter
// stage sets theirs (nsenter.Bootstrap.OOMScoreAdj) before any namespace,
// where a user namespace cannot stand in the way.
func setOOMScoreAdj(v int) error {
	const path = "/proc/self/oom_score_adj"
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if err := checkProcfs(fd, path); err != nil {
		return err
	}
	if _, err := unix.Write(fd, []byte(strconv.Itoa(v))); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return fmt.Errorf("write %d: %w: lowering oom_score_adj needs CAP_SYS_RESOURCE; raise or unset process.oomScoreAdj", v, err)
		}
		return fmt.Errorf("write %d: %w", v, err)
	}
	return nil
}

// setupUser switches to u's gid, groups and uid, keeping the permitted
// capability set across the change so applyCapabilities can pick from it.
func setupUser(u User, rootless bool) error {
	if err := checkMapped("uid", u.UID, "/proc/self/uid_map", rootless); err != nil {
		return err
	}
	if err := checkMapped("gid", u.GID, "/proc/self/gid_map", rootless); err != nil {
		return err
	}
	for _, g := range u.AdditionalGids {
		if err := checkMapped("additional gid", g, "/proc/self/gid_map", rootless); err != nil {
			return err
		}
	}
	// In a user namespace made by an unprivileged user with a single gid
	// mapping, /proc/self/setgroups is "deny" and setgroups(2) fails with
	// EPERM whatever the arguments.
	groupsAllowed := setgroupsAllowed()
	if !groupsAllowed && len(u.AdditionalGids) > 0 {
		return fmt.Errorf("additional gids %v cannot be set: setgroups is denied in this user namespace (rootless with a single gid mapped); map a gid range (newgidmap with /etc/subgid) or drop process.user.additionalGids", u.AdditionalGids)
	}

	if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_KEEPCAPS: %w", err)
	}
	if groupsAllowed {
		gids := make([]int, len(u.AdditionalGids))
		for i, g := range u.AdditionalGids {
			gids[i] = int(g)
		}
		// Always called, even with no gids: it clears the groups the
		// runtime itself had on the host.
		if err := syscall.Setgroups(gids); err != nil {
			return fmt.Errorf("setgroups %v: %w", u.AdditionalGids, err)
		}
	}
	if err := unix.Setresgid(int(u.GID), int(u.GID), int(u.GID)); err != nil {
		return fmt.Errorf("setresgid %d: %w", u.GID, err)
	}
	if err := unix.Setresuid(int(u.UID), int(u.UID), int(u.UID)); err != nil {
		return fmt.Errorf("setresuid %d: %w", u.UID, err)
	}
	if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_KEEPCAPS: %w", err)
	}
	return nil
}

// checkMapped fails when id has no mapping in mapFile (/proc/self/uid_map or
// gid_map), where set*id(2) would fail with a bare EINVAL. An unreadable map
// is not an error: the syscall then has the last word.
func checkMapped(kind string, id uint32, mapFile string, rootless bool) error {
	f, err := os.Open(mapFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var inside, outside, size uint64
		if n, _ := fmt.Sscan(sc.Text(), &inside, &outside, &size); n != 3 {
			continue
		}
		if uint64(id) >= inside && uint64(id) < inside+size {
			return nil
		}
	}
	if sc.Err() != nil {
		return nil
	}
	err = fmt.Errorf("%s %d is not mapped in the container's user namespace", kind, id)
	if rootless {
		err = fmt.Errorf("%w: a rootless container maps only the caller's own id unless /etc/subuid and /etc/subgid grant a range", err)
	}
	return err
}

// setgroupsAllowed reports whether setgroups(2) may be called in this user
// namespace; kernels before 3.19 have no /proc/self/setgroups and allow it.
func setgroupsAllowed() bool {
	b, err := os.ReadFile("/proc/self/setgroups")
	return err != nil || strings.TrimSpace(string(b)) != "deny"
}

// dedupEnv keeps one entry per variable: the last value, at the place of
// the first, as runc does (it Setenv's each entry in turn). A variable set
// twice, in config.json or by `exec --env` over the container's
// environment, would otherwise reach the program twice, and getenv(3)
// returns the first, the one the user meant to replace.
func dedupEnv(env []string) []string {
	idx := make(map[string]int, len(env))
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// withHome returns env with HOME set to the home directory of uid in the
// passwd file, or "/" when the uid has no entry or the file is missing or
// unreadable. A HOME that env sets to something is kept; an empty one is
// replaced in place, as runc does (it checks getenv("HOME") == "").
func withHome(env []string, uid uint32, passwd string) []string {
	empty := -1
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			if v != "" {
				return env
			}
			empty = i
		}
	}
	home := "/"
	users, err := user.ParsePasswdFileFilter(passwd, func(u user.User) bool { return u.Uid == int(uid) })
	if err == nil && len(users) > 0 && users[0].Home != "" {
		home = users[0].Home
	}
	if empty >= 0 {
		out := slices.Clone(env)
		out[empty] = "HOME=" + home
		return out
	}
	return append(slices.Clip(env), "HOME="+home)
}

// lookPath resolves the program file the way execvp(3) does, inside the
// calling process's root: a name with a slash is taken as is (relative to
// cwd), any other is searched in the PATH of env (defaultPath when env has
// none; an empty or relative entry is relative to cwd). The result is an
// absolute path when cwd is. Errors are *exec.Error, so a missing program
// reads `exec: "foo": executable file not found in $PATH` and matches
// exec.ErrNotFound; a missing path with a slash matches fs.ErrNotExist.
func lookPath(file string, env []string, cwd string) (string, error) {
	if file == "" {
		return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
	}
	if strings.Contains(file, "/") {
		path := file
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		if err := checkExecutable(path); err != nil {
			return "", &exec.Error{Name: file, Err: err}
		}
		return path, nil
	}

	pathEnv, ok := "", false
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			pathEnv, ok = v, true // the last one wins, as with getenv after a merge
		}
	}
	if !ok {
		pathEnv = defaultPath
	}
	var denied error
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		path := filepath.Join(dir, file)
		err := checkExecutable(path)
		if err == nil {
			return path, nil
		}
		// Like execvp, a program found but not executable is reported as
		// such when nothing later in PATH does better; directories are
		// skipped without a word, as Go's exec.LookPath does.
		if errors.Is(err, fs.ErrPermission) && !errors.Is(err, errIsDir) && denied == nil {
			denied = err
		}
	}
	if denied != nil {
		return "", &exec.Error{Name: file, Err: denied}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// errIsDir is what execve(2) says of a directory (EACCES), with the reason.
// (A type, not fmt.Errorf: package initialisation runs in every process.)
var errIsDir error = isDirError{}

type isDirError struct{}

func (isDirError) Error() string { return "is a directory: " + fs.ErrPermission.Error() }
func (isDirError) Unwrap() error { return fs.ErrPermission }

// checkExecutable fails unless path (symlinks followed) is a regular file
// the calling process may execute.
func checkExecutable(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return errIsDir
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("not a regular file: %w", fs.ErrPermission)
	}
	// AT_EACCESS: the check is for the effective ids, which are the ones
	// execve uses.
	if err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return fs.ErrPermission
		}
		return err
	}
	return nil
}

// closeExtraFDs marks every descriptor above 2+keep close-on-exec, so that
// nothing the runtime had open (its state dir, the host's cwd, sockets)
// reaches the user program (CVE-2024-21626). Descriptors 3..2+keep are the
// ones passed on on purpose (preserved fds, socket activation). Setting
// CLOEXEC on the Go runtime's own descriptors is harmless because execve
// follows right after.
func closeExtraFDs(keep int) error {
	if keep < 0 {
		return fmt.Errorf("close extra fds: negative count of fds to keep: %d", keep)
	}
	first := 3 + keep
	err := unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// close_range is Linux 5.9, CLOSE_RANGE_CLOEXEC 5.11 (EINVAL before).
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("close extra fds: close_range: %w", err)
	}
	if err := cloexecFromProc(first); err != nil {
		return fmt.Errorf("close extra fds: %w", err)
	}
	return nil
}

// cloexecFromProc marks every fd >= first close-on-exec, listing them from
// /proc/self/fd, which must really be procfs: a fake one could hide fds.
func cloexecFromProc(first int) error {
	const dir = "/proc/self/fd"
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	d := os.NewFile(uintptr(fd), dir)
	defer d.Close()
	if err := checkProcfs(fd, dir); err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return &os.PathError{Op: "readdir", Path: dir, Err: err}
	}
	for _, name := range names {
		n, err := strconv.Atoi(name)
		if err != nil || n < first || n == fd {
			continue
		}
		// An fd closed since the listing (EBADF) is fine.
		if _, err := unix.FcntlInt(uintptr(n), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("fcntl fd %d FD_CLOEXEC: %w", n, err)
		}
	}
	return nil
}

// finalExec replaces the process with the user program; it returns only when
// execve fails.
func finalExec(path string, args, env []string) error {
	err := unix.Exec(path, args, env)
	return fmt.Errorf("exec %s: %w", path, err)
}

// preparedExecve is an execve whose arguments are already in the form the
// kernel reads, so that exec allocates nothing of the Go runtime's.
type preparedExecve struct {
	path       string
	argv0      *byte
	argv, envv []*byte
}

func prepareExecve(path string, args, env []string) (*preparedExecve, error) {
	argv0, err := unix.BytePtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", path, err)
	}
	argv, err := syscall.SlicePtrFromStrings(args)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", path, err)
	}
	envv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", path, err)
	}
	return &preparedExecve{path: path, argv0: argv0, argv: argv, envv: envv}, nil
}

// exec is finalExec with the prepared arguments: execve, as syscall.Exec
// makes it (the thread is locked; RLIMIT_NOFILE needs no restoring, see
// setupProcess).
func (e *preparedExecve) exec() error {
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(e.argv0)),
		uintptr(unsafe.Pointer(&e.argv[0])), uintptr(unsafe.Pointer(&e.envv[0])))
	return fmt.Errorf("exec %s: %w", e.path, errno)
}

// setDumpable sets the process's dumpable flag. Init runs non-dumpable so
// that the container cannot open /proc/<init>/exe and overwrite the runtime
// binary (CVE-2019-5736); execve of the user program resets the flag from
// the program's own file and credentials.
func setDumpable(dumpable bool) error {
	var v uintptr
	if dumpable {
		v = 1
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, v, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_DUMPABLE %d: %w", v, err)
	}
	return nil
}
