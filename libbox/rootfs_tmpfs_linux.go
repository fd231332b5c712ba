package libbox

// A root filesystem made of nothing: a new tmpfs mounted on Config.Rootfs in
// the container's own mount namespace, before any other mount, for a
// sandbox that has no bundle. Its Mounts then bind the host's system
// directories into it. Nothing is created on the host: the directory the
// tmpfs covers stays as it was (it may be shared by every such container),
// and the tmpfs goes away with the mount namespace.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// TmpfsRoot describes the tmpfs that becomes a container's root.
type TmpfsRoot struct {
	// Size caps the tmpfs, in bytes; 0 means 1 MiB (it holds only the
	// directories mounts go on, and what Readonlyfs leaves writable).
	Size int64 `json:"size,omitempty"`
	// Symlinks are created at the top of the new root before the mounts,
	// e.g. bin -> usr/bin on a host with a merged /usr.
	Symlinks []Symlink `json:"symlinks,omitempty"`
}

// Symlink is a symbolic link at Path (one name at the top of the root, such
// as "/lib64") pointing to Target.
type Symlink struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

const defaultTmpfsRootSize = 1 << 20

// Validate checks the tmpfs root's form.
func (t *TmpfsRoot) Validate() error {
	if t.Size < 0 {
		return fmt.Errorf("tmpfs root: negative size %d", t.Size)
	}
	seen := map[string]bool{}
	for _, l := range t.Symlinks {
		name := strings.TrimPrefix(l.Path, "/")
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
			return fmt.Errorf("tmpfs root: symlink path %q must be one name at the top of the root, such as /lib64", l.Path)
		}
		if l.Target == "" || strings.IndexByte(l.Target, 0) >= 0 {
			return fmt.Errorf("tmpfs root: symlink %s has an invalid target %q", l.Path, l.Target)
		}
		if seen[name] {
			return fmt.Errorf("tmpfs root: duplicate symlink %s", l.Path)
		}
		seen[name] = true
	}
	return nil
}

// mountTmpfsRoot mounts the tmpfs on path (the resolved Rootfs) and makes
// its symlinks. It runs in the container's mount namespace once / is no
// longer shared with the host, so the mount is seen by nobody else.
func mountTmpfsRoot(path string, t *TmpfsRoot) error {
	if err := t.Validate(); err != nil {
		return err
	}
	size := t.Size
	if size == 0 {
		size = defaultTmpfsRootSize
	}
	data := "mode=755,size=" + strconv.FormatInt(size, 10)
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, data); err != nil {
		return &mountError{op: "mount", source: "tmpfs", target: "the root (" + path + ")", err: err}
	}
	root, err := os.OpenFile(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open tmpfs root: %w", err)
	}
	defer root.Close()
	// The handle must be on the tmpfs just made, not on whatever a race
	// could have put at path.
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(root.Fd()), &st); err != nil {
		return fmt.Errorf("tmpfs root: fstatfs: %w", err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		return errors.New("tmpfs root: the root is not the tmpfs just mounted")
	}
	for _, l := range t.Symlinks {
		name := strings.TrimPrefix(l.Path, "/")
		if err := unix.Symlinkat(l.Target, int(root.Fd()), name); err != nil {
			return fmt.Errorf("tmpfs root: symlink %s -> %s: %w", l.Path, l.Target, err)
		}
	}
	return nil
}
