package libbox

import "errors"

// Sentinel errors; callers match them with errors.Is. They are phrased to
// follow a subject: wrapped as "container ID %w" they read "container abc
// does not exist" (containerd's shim looks for "does not exist").
var (
	ErrNotExist     = errors.New("does not exist")
	ErrExist        = errors.New("already exists")
	ErrInvalidID    = errors.New("invalid container id")
	ErrNotRunning   = errors.New("is not running")
	ErrRunning      = errors.New("is running")
	ErrNotCreated   = errors.New("is not in the created state")
	ErrStopped      = errors.New("is stopped")
	ErrPaused       = errors.New("is paused")
	ErrNotPaused    = errors.New("is not paused")
	ErrInvalidState = errors.New("invalid container state")
	// ErrNoCgroup: the container was created without a cgroup (by an
	// unprivileged user with no delegated cgroup v2 subtree), so what
	// needs one (stats, pause, a cgroup update) cannot be done.
	ErrNoCgroup = errors.New("has no cgroup")

	// ErrProgramNotFound and ErrProgramNotExecutable classify the error of
	// a create, exec or sandbox run whose program could not be started
	// (shells exit 127 and 126 for them).
	ErrProgramNotFound      = errors.New("program not found")
	ErrProgramNotExecutable = errors.New("program not executable")
)

// notRunningError is ErrNotRunning for a container that can no longer be
// signalled, worded as runc words it: containerd's shim tells a process that
// has already exited from a failed kill only by the text "container not
// running" (or "no such process") in the runtime's error, and reports any
// other text as a failure of the kill.
type notRunningError struct{ id string }

func (e *notRunningError) Error() string {
	return "container not running: " + e.id + " has stopped"
}

func (e *notRunningError) Is(target error) bool { return target == ErrNotRunning }
