package libbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Detach creates a sandbox as the container id under the sandbox's state
// root (Options.StateRoot), starts args in it as its pid 1, and returns
// once the program runs. Nothing supervises it and nothing of this process
// holds it: it is a container like any other, which Runtime.Load, and
// `nanobox-runc exec, ps, kill, delete, mount` with --root set to that
// state root, manage (`nanobox-runc sandbox --detach --name ID`). It is
// removed by Delete, not when it ends.
//
// The limits that only a supervisor enforces are refused: wall time,
// output, and the CPU time of the sandbox as a whole (the per-process
// RLIMIT_CPU remains when cpuTime is in AllowDegraded); so is a network
// allowlist, which the runtime's process serves. stdin, stdout and stderr
// are passed to the program as they are (nil: /dev/null).
func (s *Sandbox) Detach(id string, args []string, stdin, stdout, stderr *os.File) (*Container, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if len(args) == 0 || args[0] == "" {
		return nil, fmt.Errorf("detach: no program given")
	}
	l := s.opts.Limits
	const fix = "run the sandbox attached (without --detach), or drop the limit"
	switch {
	case l.WallTime != 0:
		return nil, &LimitError{Limit: LimitWallTime, Reason: "a detached sandbox has no supervisor to end it at the wall time limit", Fix: fix}
	case l.Output != 0:
		return nil, &LimitError{Limit: LimitOutput, Reason: "a detached sandbox's output is not read by the runtime, which cannot count it", Fix: fix}
	case l.CPUTime != 0 && !s.opts.allowsDegraded(LimitCPUTime):
		return nil, &LimitError{Limit: LimitCPUTime, Reason: "a detached sandbox has no supervisor to end it at the CPU time of the sandbox as a whole (RLIMIT_CPU holds each process only)", Fix: "add cpuTime to allowDegraded to keep RLIMIT_CPU per process, or run the sandbox attached"}
	}
	if s.net != nil {
		return nil, &OptionError{Field: "network", Err: fmt.Errorf("an allowlist is served by the runtime's own process, and a detached sandbox outlives it: use none or host, or run the sandbox attached")}
	}
	rio := runIO{stdin: stdin, stdoutFile: stdout, stderrFile: stderr, detachedID: id}
	in, err := s.create(args, &rio)
	if err != nil {
		_ = in.destroy()
		return nil, err
	}
	if err := in.start(); err != nil {
		_ = in.destroy()
		return nil, err
	}
	// The container is the caller's now; this handle's pidfd is not.
	if in.pidfd >= 0 {
		unix.Close(in.pidfd)
		in.pidfd = -1
	}
	return in.ctr, nil
}
