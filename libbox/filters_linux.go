package libbox

import "golang.org/x/sys/unix"

// filters are a process's Landlock ruleset and seccomp filter: prepared
// (compiled, paths opened, kernel support checked) while errors can still
// fail create, and applied on the thread that executes the user program.
//
// The order, in init (and in exec, with the container's policies):
//
//  1. mounts, pivot_root, console, cwd
//  2. prepareFilters: Landlock ruleset built (container paths, as the
//     container's root), seccomp compiled; the seccomp filter is installed
//     here only when it cannot wait (below)
//  3. setupProcess: rlimits, user, capabilities, no_new_privs
//  4. chdir, lookPath, ready, wait for start, startContainer hooks, fds
//     marked close-on-exec
//  5. filters.apply: landlock_restrict_self, then seccomp, then execve
//
// So neither the runtime's own work nor the startContainer hooks run under
// the container's policies, and the filter sees nothing but execve. Two
// cases install seccomp in step 2 instead, as runc does:
//
//   - no_new_privs is off and no Landlock policy sets it: seccomp(2)
//     needs no_new_privs or CAP_SYS_ADMIN, which step 3 may drop;
//   - a rule uses notify: the listener fd must reach the runtime over the
//     sync socket, which closes at ready. The filter must then allow what
//     the runtime does in steps 3-5 (Docker's default profile does).
type filters struct {
	landlockFd    int
	landlockFlags uint32
	// seccomp is the filter still to install at apply (nil: none, or
	// already installed).
	seccomp *seccompProgram
}

// prepareFilters is step 2 above, for process p with the container's
// seccomp and Landlock policies (either may be nil). sock is the sync
// socket to the runtime, for the notify fd.
func prepareFilters(sock *syncSocket, p *Process, sc *Seccomp, ll *Landlock) (_ *filters, retErr error) {
	f := &filters{landlockFd: -1}
	if ll != nil {
		var err error
		if f.landlockFd, f.landlockFlags, err = prepareLandlock(ll); err != nil {
			return nil, err
		}
		defer func() {
			if retErr != nil && f.landlockFd >= 0 {
				unix.Close(f.landlockFd)
			}
		}()
	}
	if sc == nil {
		return f, nil
	}
	prog, err := compileSeccomp(sc)
	if err != nil {
		return nil, err
	}
	// Landlock sets no_new_privs in apply when the process needs it.
	if !prog.listener && (p.NoNewPrivileges || f.landlockFd >= 0) {
		f.seccomp = prog
		return f, nil
	}
	fd, err := prog.install()
	if err != nil {
		return nil, err
	}
	if fd >= 0 {
		if err := sendSeccompFd(sock, fd); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// apply is step 5: Landlock, then seccomp. Nothing but execve may follow.
func (f *filters) apply() error {
	if f == nil {
		return nil
	}
	if f.landlockFd >= 0 {
		fd := f.landlockFd
		f.landlockFd = -1
		if err := restrictLandlock(fd, f.landlockFlags); err != nil {
			return err
		}
	}
	if f.seccomp != nil {
		// No listener here: a filter with one was installed in
		// prepareFilters.
		if _, err := f.seccomp.install(); err != nil {
			return err
		}
	}
	return nil
}
