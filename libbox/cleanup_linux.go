package libbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveStale removes the directory of a container that has no state.json:
// what a create killed before it finished leaves behind. The lock is taken
// first, so a create still in progress is waited for, never pulled out from
// under; if the container turns out to exist after all, ErrExist is
// returned and nothing is removed.
func (r *Runtime) RemoveStale(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	dir := r.dir(id)
	lock, err := lockDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer lock.Close()
	if _, err := os.Lstat(filepath.Join(dir, stateFile)); err == nil {
		return fmt.Errorf("container %s %w", id, ErrExist)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove stale state of %s: %w", id, err)
	}
	return nil
}
