package libbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveStale removes the directory of a container that has no state.json:
// what a create killed before it finished leaves behind. The directory is
// opened under the root's lock (see newStateDir), so one that a create has
// just made is already locked by it; its own lock is then waited for, so a
// create still in progress is never pulled out from under. If the
// container turns out to exist after all, ErrExist is returned and nothing
// is removed.
func (r *Runtime) RemoveStale(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	dir := r.dir(id)
	rootLock, err := r.lockRoot()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("state root %s: %w", r.Root, err)
	}
	d, err := openDir(dir)
	rootLock.Close()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	lock, err := lockOpenDir(d, dir)
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
