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
)
