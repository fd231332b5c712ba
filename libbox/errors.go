package libbox

import "errors"

// Sentinel errors; callers match them with errors.Is. Wrapping adds the
// container id or path, so messages read "container abc: does not exist".
var (
	ErrNotExist     = errors.New("container does not exist")
	ErrExist        = errors.New("container already exists")
	ErrInvalidID    = errors.New("invalid container id")
	ErrNotRunning   = errors.New("container is not running")
	ErrRunning      = errors.New("container is running")
	ErrNotCreated   = errors.New("container is not in the created state")
	ErrStopped      = errors.New("container is stopped")
	ErrPaused       = errors.New("container is paused")
	ErrInvalidState = errors.New("invalid container state")
)
