package libbox

// Confinement: libbox's child-side primitives (rlimits, no capabilities,
// no_new_privs, Landlock, seccomp) applied to a process the caller starts
// itself with os/exec, without namespaces. The child is the calling
// program's own binary again: libbox.Main, run first in main, applies the
// confinement to itself and executes the target, so the caller keeps the
// whole exec.Cmd (stdio, environment, directory, context, pipes) and
// confines nothing of its own process.
//
// This is weaker than a sandbox: the process sees the caller's mounts,
// processes and network, under the caller's uid; Landlock is then what
// keeps it to the files it may use.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// confineArgv0 marks the re-executed binary as a confined child: argv is
// [confineArgv0, spec JSON, target path, target argv...].
const confineArgv0 = "libbox-confine"

// Confinement is what Command applies to the process it starts.
type Confinement struct {
	// Limits: the rlimit ones apply per process (Memory as RLIMIT_AS,
	// Pids as RLIMIT_NPROC, which counts every process of the caller's
	// uid, CPUTime, OpenFiles, FileSize). WallTime and Output are the
	// caller's to enforce (exec.CommandContext, its own pipes); CPUs is
	// not available without a cgroup. Those are refused when set.
	Limits Limits `json:"limits"`
	// Landlock restricts the files (and TCP ports) the process may use.
	Landlock *Landlock `json:"landlock,omitempty"`
	// Seccomp is the system call filter; the zero value is the default
	// profile.
	Seccomp SeccompProfile `json:"seccomp"`
}

type confineSpec struct {
	Rlimits  []Rlimit  `json:"rlimits,omitempty"`
	Landlock *Landlock `json:"landlock,omitempty"`
	Seccomp  *Seccomp  `json:"seccomp,omitempty"`
}

// Command returns an exec.Cmd that runs name with args under c. The
// calling program must call libbox.Main first in main: the command
// re-executes it (/proc/self/exe), and Main, seeing the confinement,
// applies it and executes name. The caller may set Stdin, Stdout, Stderr,
// Env, Dir, ExtraFiles and the like; Path and Args belong to the
// confinement. name is resolved in the child's PATH, as exec.Command does.
// The child's exit status is the program's, or 126/127 (with a message on
// its stderr) when it could not be confined or executed.
func (c Confinement) Command(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	l := c.Limits
	switch {
	case l.WallTime != 0:
		return nil, errors.New("confinement: limits.wallTime is enforced by the caller here: use exec.CommandContext's context")
	case l.Output != 0:
		return nil, errors.New("confinement: limits.output is enforced by the caller here: read the pipes with a cap")
	case l.CPUs != 0:
		return nil, errors.New("confinement: limits.cpus needs a cgroup: use a Sandbox")
	}
	if err := l.validate(); err != nil {
		return nil, fmt.Errorf("confinement: %w", err)
	}
	spec := confineSpec{Landlock: c.Landlock}
	add := func(res int, v uint64) { spec.Rlimits = append(spec.Rlimits, Rlimit{Type: res, Soft: v, Hard: v}) }
	if l.Memory != 0 {
		add(unix.RLIMIT_AS, uint64(l.Memory))
	}
	if l.Pids != 0 {
		add(unix.RLIMIT_NPROC, uint64(l.Pids))
	}
	if l.CPUTime != 0 {
		secs := uint64(math.Ceil(l.CPUTime.Seconds()))
		spec.Rlimits = append(spec.Rlimits, Rlimit{Type: unix.RLIMIT_CPU, Soft: secs, Hard: secs + 1})
	}
	if l.OpenFiles != 0 {
		add(unix.RLIMIT_NOFILE, uint64(l.OpenFiles))
	}
	if l.FileSize != 0 {
		add(unix.RLIMIT_FSIZE, uint64(l.FileSize))
	}
	if c.Landlock != nil {
		if _, err := CheckLandlock(c.Landlock); err != nil {
			return nil, fmt.Errorf("confinement: %w", err)
		}
	}
	if p := c.Seccomp; p.Custom != nil {
		if err := p.Custom.Validate(); err != nil {
			return nil, fmt.Errorf("confinement: %w", err)
		}
		spec.Seccomp = p.Custom
	} else {
		var err error
		if spec.Seccomp, err = SandboxSeccomp(p.name()); err != nil {
			return nil, fmt.Errorf("confinement: %w", err)
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("confinement: %w", err)
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = append([]string{confineArgv0, string(b), name}, args...)
	return cmd, nil
}

// runConfined is the child side of Command; it never returns.
func runConfined() {
	runtime.LockOSThread()
	fail := func(code int, err error) {
		fmt.Fprintln(os.Stderr, "libbox confine:", err)
		os.Exit(code)
	}
	if len(os.Args) < 3 {
		fail(126, errors.New("no program to run"))
	}
	var spec confineSpec
	if err := json.Unmarshal([]byte(os.Args[1]), &spec); err != nil {
		fail(126, fmt.Errorf("bad confinement: %w", err))
	}
	path, err := exec.LookPath(os.Args[2])
	if err != nil {
		code := 127
		if errors.Is(err, os.ErrPermission) {
			code = 126
		}
		fail(code, err)
	}
	if err := confineSelf(&spec); err != nil {
		fail(126, err)
	}
	err = unix.Exec(path, os.Args[2:], os.Environ())
	fail(126, fmt.Errorf("exec %s: %w", path, err))
}

// confineSelf applies spec to the calling thread, which then executes the
// program: rlimits, every capability dropped, no_new_privs, Landlock, then
// seccomp last (nothing but execve runs under the filter).
func confineSelf(spec *confineSpec) error {
	for _, rl := range spec.Rlimits {
		if err := setRlimit(rl); err != nil {
			return err
		}
	}
	plan, err := planCapabilities(&Capabilities{})
	if err != nil {
		return err
	}
	// Only a privileged caller has capabilities to drop; dropping the
	// bounding set needs CAP_SETPCAP, which an unprivileged one lacks
	// (and has nothing in it to gain back).
	if err := dropBoundingSet(plan.bounding); err != nil && !errors.Is(err, unix.EPERM) {
		return err
	}
	if err := applyCapabilities(plan); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if spec.Landlock != nil {
		fd, flags, err := prepareLandlock(spec.Landlock)
		if err != nil {
			return err
		}
		if fd >= 0 {
			if err := restrictLandlock(fd, flags); err != nil {
				return err
			}
		}
	}
	if spec.Seccomp != nil {
		prog, err := compileSeccomp(spec.Seccomp)
		if err != nil {
			return err
		}
		if prog.listener {
			return errors.New("seccomp: a notify rule needs a listener, which a confined command has not")
		}
		if _, err := prog.install(); err != nil {
			return err
		}
	}
	return nil
}
