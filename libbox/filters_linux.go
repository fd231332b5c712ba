package libbox

import (
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// filters are a process's Landlock ruleset and seccomp filter: prepared
// (compiled, paths opened, kernel support checked) while errors can still
// fail create, and applied on the thread that executes the user program.
//
// The order, in init (and in exec, with the container's policies):
//
//  1. every inherited fd above the preserved ones marked close-on-exec
//  2. mounts, pivot_root, console
//  3. prepareFilters: Landlock ruleset built (container paths, as the
//     container's root), seccomp compiled
//  4. setupProcess: rlimits, cwd, user, capabilities, no_new_privs
//  5. lookPath; init: ready, wait for start
//  6. apply: landlock_restrict_self, seccomp(2), and, when CAP_SYS_ADMIN
//     was held only for seccomp(2), capset to the process's own sets
//  7. init: startContainer hooks (forked from this thread, so under both
//     filters, as runc runs them)
//  8. execve
//
// A profile may deny anything it does not list (a default action of
// ERRNO, KILL...), so nothing the runtime itself needs happens after step
// 6 but the capset of that step, the hooks the config asked for, and
// execve. seccomp(2) needs no_new_privs or CAP_SYS_ADMIN: with
// noNewPrivileges false and no Landlock policy (which sets no_new_privs
// itself), a process whose own sets lack CAP_SYS_ADMIN keeps it in its
// effective and permitted sets from step 4 to step 6 (runc installs the
// filter before the credentials change instead, and then needs every call
// of step 4 and 5 allowed). A failure after `start` (steps 6 to 8) is
// reported to `start` through the exec fifo (init_linux.go).
//
// One case installs seccomp at the end of step 4 instead: a rule uses
// notify, and the listener fd must reach the runtime over the sync socket,
// which init closes at ready. The filter must then allow what init does
// in steps 5 and 6 (write, close, read; Docker's default profile does).
type filters struct {
	landlockFd    int
	landlockFlags uint32
	// seccomp is the filter still to install (nil: none, or already
	// installed).
	seccomp *seccompProgram
	// noNewPrivs: the process sets no_new_privs in step 4.
	noNewPrivs bool
	// finalCaps, when set, are the process's own capability sets, to
	// return to once seccomp(2) no longer needs CAP_SYS_ADMIN.
	finalCaps *capState
}

// prepareFilters is step 3 above, for process p with the container's
// seccomp and Landlock policies (either may be nil).
func prepareFilters(p *Process, sc *Seccomp, ll *Landlock) (*filters, error) {
	return prepareFiltersCompiled(p, sc, nil, ll)
}

// prepareFiltersCompiled is prepareFilters with sc's filter, when not
// nil, compiled by the runtime already (compileSeccompCached, sent as
// initConfig.SeccompFilter): the same checks of sc, no compile.
func prepareFiltersCompiled(p *Process, sc *Seccomp, compiled []byte, ll *Landlock) (_ *filters, retErr error) {
	f := &filters{landlockFd: -1, noNewPrivs: p.NoNewPrivileges}
	if ll != nil {
		var err error
		if f.landlockFd, f.landlockFlags, err = prepareLandlock(ll); err != nil {
			return nil, err
		}
		defer func() {
			if retErr != nil {
				f.close()
			}
		}()
	}
	if sc == nil {
		return f, nil
	}
	var prog *seccompProgram
	var err error
	if compiled != nil {
		var filter []unix.SockFilter
		if filter, err = decodeSeccompFilter(compiled); err == nil {
			prog, err = seccompFromFilter(sc, filter)
		}
	} else {
		prog, err = compileSeccomp(sc)
	}
	if err != nil {
		return nil, err
	}
	f.seccomp = prog
	return f, nil
}

// needsSysAdmin reports whether seccomp(2) will need CAP_SYS_ADMIN when it
// is installed: no no_new_privs from the config, and none from Landlock.
func (f *filters) needsSysAdmin() bool {
	return f != nil && f.seccomp != nil && !f.noNewPrivs && f.landlockFd < 0
}

// listener reports whether the filter still to install returns a notify fd.
func (f *filters) listener() bool {
	return f != nil && f.seccomp != nil && f.seccomp.listener
}

// logSeccompFlags logs, at debug level, the flags argument seccomp(2) is
// given for the filter still to install: the program's own, which install
// passes unchanged (runc logs the same line, its suite and log readers
// look for it). Init calls it while its log still reaches the runtime,
// before ready (the filter may be installed after it, see above); an
// exec'd process before its last step. Not after: the socket is closed,
// or RLIMIT_AS may leave no memory for it.
func (f *filters) logSeccompFlags() {
	if f != nil && f.seccomp != nil {
		logrus.Debugf("seccomp filter flags: %d", f.seccomp.flags)
	}
}

// installSeccomp loads the seccomp filter now; a notify fd goes to the
// runtime over sock. Used for a notify filter in init, before ready.
func (f *filters) installSeccomp(sock *syncSocket) error {
	if f == nil || f.seccomp == nil {
		return nil
	}
	prog := f.seccomp
	f.seccomp = nil
	fd, err := prog.install()
	if err != nil {
		return err
	}
	if fd >= 0 {
		if sock == nil {
			unix.Close(fd)
			return errors.New("seccomp: no channel to the runtime for the notify fd")
		}
		if err := sendSeccompFd(sock, fd); err != nil {
			return err
		}
	}
	return f.restoreCaps()
}

// restoreCaps drops the CAP_SYS_ADMIN held for seccomp(2). It runs under
// the filter: a profile that denies capset fails the start instead of
// leaving the program a capability it was not given.
func (f *filters) restoreCaps() error {
	if f.finalCaps == nil {
		return nil
	}
	caps := *f.finalCaps
	f.finalCaps = nil
	if err := capset(caps); err != nil {
		return fmt.Errorf("drop CAP_SYS_ADMIN, held only to install the seccomp filter: %w: the seccomp profile must allow capset, or set process.noNewPrivileges", err)
	}
	return nil
}

// apply is step 6: Landlock, then seccomp, then the capabilities. sock
// carries a notify fd to the runtime (exec; nil in init, whose notify
// filter is installed before ready). Nothing but the startContainer hooks
// and execve may follow.
func (f *filters) apply(sock *syncSocket) error {
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
		return f.installSeccomp(sock)
	}
	return f.restoreCaps()
}

// close releases what prepareFilters opened, for a process that fails
// before apply.
func (f *filters) close() {
	if f != nil && f.landlockFd >= 0 {
		unix.Close(f.landlockFd)
		f.landlockFd = -1
	}
}
