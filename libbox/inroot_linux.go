package libbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// In-root lookups for building the rootfs, on openat2(2) alone.
//
// The kernel confines a RESOLVE_IN_ROOT lookup to the root by itself: ".."
// stops at the root, absolute symlinks restart there, and a rename or mount
// racing the walk makes it fail with EAGAIN (or EXDEV from its final check)
// rather than escape. pathrs-lite makes the same call and then, for the
// handle's name only, reads it back through a private procfs instance
// (fstatfs, fstat, two statx, an openat2 probe and a readlink per lookup:
// a dozen syscalls, most of a default sandbox's rootfs set-up). These
// helpers keep the kernel's confinement and drop the naming; where openat2
// is missing (kernels before 5.6, or a seccomp filter of the caller's that
// refuses it) they hand the lookup to pathrs-lite, whose fallback resolves
// in user space.

// inRootRetries bounds the retries of a scoped lookup that a concurrent
// rename or mount interrupted, as pathrs-lite does: an attacker who keeps
// renaming gets EAGAIN, not an endless loop.
const inRootRetries = 128

// openat2 is unix.Openat2; tests replace it to take the fallback.
var openat2 = unix.Openat2

// openat2Missing reports an openat2 error that means the syscall itself is
// unavailable, not that the lookup failed.
func openat2Missing(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
}

// openat2Retry is openat2(dir, p, how), retried while a scoped lookup was
// interrupted by a concurrent rename or mount. O_CLOEXEC is always set.
func openat2Retry(dir *os.File, p string, how *unix.OpenHow) (int, error) {
	how.Flags |= unix.O_CLOEXEC
	for tries := 0; ; tries++ {
		fd, err := openat2(int(dir.Fd()), p, how)
		runtime.KeepAlive(dir)
		if err == nil {
			return fd, nil
		}
		if errors.Is(err, unix.EINTR) ||
			(tries < inRootRetries && (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EXDEV))) {
			continue
		}
		return -1, err
	}
}

// lookupInRoot is an O_PATH descriptor of what p leads to inside root,
// symlinks followed as if root were "/", magic links refused.
func lookupInRoot(root *os.File, p string) (int, error) {
	return openat2Retry(root, p, &unix.OpenHow{
		Flags:   unix.O_PATH,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// openInRoot is pathrs.OpenatInRoot: lookupInRoot as a handle.
func openInRoot(root *os.File, p string) (*os.File, error) {
	fd, err := lookupInRoot(root, p)
	if err != nil {
		if openat2Missing(err) {
			return pathrs.OpenatInRoot(root, p)
		}
		return nil, &os.PathError{Op: "openat2", Path: inRootName(root, p), Err: err}
	}
	return os.NewFile(uintptr(fd), inRootName(root, p)), nil
}

// mkdirAllInRoot is pathrs.MkdirAllHandle(root, p, mode): the directory p
// inside root, made where missing, as a handle. The deepest part of p that
// exists is looked up in the root (its symlinks followed there); every
// directory below it is made with mkdirat and entered without following
// any symlink or crossing a mount, so a symlink planted in the new part
// fails the call (ENOTDIR or ELOOP) instead of leading anywhere. A ".."
// in the part still to be made is refused, as pathrs-lite refuses it.
func mkdirAllInRoot(root *os.File, p string, mode uint32) (*os.File, error) {
	dir, rest, err := partialLookupInRoot(root, p)
	if err != nil {
		if openat2Missing(err) {
			return pathrs.MkdirAllHandle(root, p, os.FileMode(mode))
		}
		return nil, fmt.Errorf("find existing subpath of %q: %w", p, err)
	}
	st, err := fstatFile(dir)
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("stat %s: %w", dir.Name(), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		dir.Close()
		return nil, fmt.Errorf("cannot create subdirectories in %q: %w", dir.Name(), unix.ENOTDIR)
	}
	parts := strings.Split(rest, "/")
	if slices.Contains(parts, "..") {
		dir.Close()
		return nil, fmt.Errorf("%w: yet-to-be-created path %q contains '..' components", unix.ENOENT, rest)
	}
	for _, part := range parts {
		if part == "" || part == "." {
			continue
		}
		// mkdirat never follows a symlink in its last component; EEXIST
		// is someone else's mkdir (or anything else), which the open
		// below accepts only if it is a directory on this mount.
		err := unix.Mkdirat(int(dir.Fd()), part, mode)
		runtime.KeepAlive(dir)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			dir.Close()
			return nil, &os.PathError{Op: "mkdirat", Path: dir.Name() + "/" + part, Err: err}
		}
		fd, err := openat2Retry(dir, part, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_XDEV,
		})
		name := dir.Name() + "/" + part
		dir.Close()
		if err != nil {
			return nil, &os.PathError{Op: "openat2", Path: name, Err: err}
		}
		dir = os.NewFile(uintptr(fd), name)
	}
	return dir, nil
}

// partialLookupInRoot opens the deepest existing prefix of p inside root
// and returns it with the rest of p (the part to be made). ENOENT and
// ENOTDIR move one component up; any other error ends the search.
func partialLookupInRoot(root *os.File, p string) (*os.File, string, error) {
	p = strings.TrimLeft(filepath.ToSlash(p), "/")
	end := len(p)
	for end > 0 {
		sub := p[:end]
		fd, err := lookupInRoot(root, sub)
		if err == nil {
			return os.NewFile(uintptr(fd), inRootName(root, sub)), strings.TrimPrefix(p[end:], "/"), nil
		}
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) {
			return nil, "", err
		}
		end = max(strings.LastIndexByte(sub, '/'), 0)
	}
	// Nothing of p exists: start at (a copy of) the root itself.
	fd, err := unix.FcntlInt(root.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	runtime.KeepAlive(root)
	if err != nil {
		return nil, "", fmt.Errorf("dup root: %w", err)
	}
	return os.NewFile(uintptr(fd), root.Name()), p, nil
}

// inRootName names a handle on p inside root for error messages: the
// root's name and p, which is what the caller asked for (symlinks on the
// way are not spelled out).
func inRootName(root *os.File, p string) string {
	return filepath.Join(root.Name(), filepath.Join("/", p))
}
