package libbox

// After pivot_root: sysctls, read-only and masked paths, a read-only /.

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"
)

// finalizeRootfs runs after pivot_root: it writes cfg.Sysctl, makes
// cfg.ReadonlyPaths read-only, masks cfg.MaskedPaths, makes / read-only
// when cfg.Readonlyfs and applies cfg.RootPropagation to / again. Paths
// that do not exist are skipped.
func finalizeRootfs(cfg *Config) error {
	root, err := os.OpenFile("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /: %w", err)
	}
	defer root.Close()
	if err := writeSysctls(cfg.Sysctl); err != nil {
		return err
	}
	for _, p := range uniquePaths(cfg.ReadonlyPaths) {
		if err := readonlyPath(root, p); err != nil {
			return err
		}
	}
	if err := maskPaths(root, uniquePaths(cfg.MaskedPaths)); err != nil {
		return err
	}
	if cfg.Readonlyfs {
		// mount_setattr changes only the rdonly bit, so the flags a user
		// namespace inherits locked (nosuid, nodev...) stay as they are.
		if err := setReadonly(root, false); err != nil {
			return &mountError{op: "remount read-only", target: "/", err: err}
		}
	}
	if cfg.RootPropagation != 0 {
		if err := unix.Mount("", "/", "", uintptr(cfg.RootPropagation), ""); err != nil {
			return &mountError{op: "set propagation of", target: "/", err: err}
		}
	}
	return nil
}

// writeSysctls writes each sysctl, in key order.
func writeSysctls(sysctls map[string]string) error {
	for _, key := range slices.Sorted(maps.Keys(sysctls)) {
		if err := writeSysctl(key, sysctls[key]); err != nil {
			return err
		}
	}
	return nil
}

// sysctlPath turns a sysctl key into its path under /proc/sys: dots become
// slashes unless the key already has slashes (so "net/ipv4/conf/eth0.100/
// forwarding" can name a VLAN interface).
func sysctlPath(key string) (string, error) {
	p := key
	if !strings.Contains(p, "/") {
		p = strings.ReplaceAll(p, ".", "/")
	}
	p = strings.Trim(p, "/")
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return "", fmt.Errorf("invalid sysctl key %q", key)
		}
	}
	return p, nil
}

// writeSysctl writes a sysctl through a procfs handle that pathrs-lite made
// or checked (a private procfs instance where possible, never something the
// container mounted over /proc/sys), and checks with fstatfs that the file
// written really is on procfs (CVE-2019-19921, CVE-2025-52881). The lookup
// follows no symlinks; the re-open goes through the handle's own magic link.
func writeSysctl(key, value string) error {
	p, err := sysctlPath(key)
	if err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("write sysctl %s: %w", key, err) }
	proc, err := procfs.OpenProcRoot()
	if err != nil {
		return fail(fmt.Errorf("open procfs: %w", err))
	}
	defer proc.Close()
	h, err := proc.OpenRoot("sys/" + p)
	if err != nil {
		return fail(err)
	}
	defer h.Close()
	f, err := pathrs.Reopen(h, unix.O_WRONLY|unix.O_TRUNC)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	if err := checkProcfs(int(f.Fd()), "/proc/sys/"+p); err != nil {
		return fail(err)
	}
	if _, err := f.WriteString(value); err != nil {
		return fail(err)
	}
	return nil
}

// uniquePaths is paths in their order, each once by its lexically clean
// form ("/a/./b/" is "/a/b"; the paths are all relative to the root): a
// path listed twice in linux.maskedPaths or linux.readonlyPaths is masked
// or made read-only once, not under a second mount stacked on the first,
// as runc does.
func uniquePaths(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		c := filepath.Clean("/" + p)
		if !seen[c] {
			seen[c] = true
			out = append(out, p)
		}
	}
	return out
}

// readonlyPath binds p onto itself, recursively, and makes that tree
// read-only: stricter than runc, whose remount covers only the top mount.
func readonlyPath(root *os.File, p string) error {
	target, err := openInRoot(root, p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	defer target.Close()
	tree, err := openTree(target, unix.AT_RECURSIVE)
	if err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	defer tree.Close()
	if err := setReadonly(tree, true); err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	if err := moveMount(tree, target); err != nil {
		return &mountError{op: "make read-only", target: p, err: err}
	}
	return nil
}

// maskPaths hides each path: a directory under one shared read-only empty
// tmpfs (one superblock for all, as runc 1.3.6 does), anything else under
// the container's /dev/null, after checking that it really is char 1:3 so
// that a replaced /dev/null cannot turn the mask into a writable bind of
// something else (CVE-2025-31133).
func maskPaths(root *os.File, paths []string) error {
	var null, tmpfs *os.File
	defer func() {
		if null != nil {
			null.Close()
		}
		if tmpfs != nil {
			tmpfs.Close()
		}
	}()
	for _, p := range paths {
		target, err := openInRoot(root, p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return &mountError{op: "mask", target: p, err: err}
		}
		err = func() error {
			defer target.Close()
			st, err := fstatFile(target)
			if err != nil {
				return err
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				if tmpfs == nil {
					if tmpfs, err = newMaskTmpfs(); err != nil {
						return err
					}
					// The first attach uses the fsmount handle itself; after
					// it the handle is on an attached mount, which
					// open_tree can clone for the others.
					return moveMount(tmpfs, target)
				}
				return bindFd(tmpfs, target)
			}
			if null == nil {
				if null, err = openDevNull(root); err != nil {
					return err
				}
			}
			return bindFd(null, target)
		}()
		if err != nil {
			return &mountError{op: "mask", target: p, err: err}
		}
	}
	return nil
}

// newMaskTmpfs makes a detached empty tmpfs, read-only, nosuid, nodev and
// noexec.
func newMaskTmpfs() (*os.File, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fsopen tmpfs: %w", err)
	}
	defer unix.Close(fsfd)
	// Named like runc's masks in /proc/self/mountinfo; cosmetic.
	_ = unix.FsconfigSetString(fsfd, "source", "tmpfs")
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return nil, fmt.Errorf("fsconfig tmpfs: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC,
		unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fsmount tmpfs: %w", err)
	}
	return os.NewFile(uintptr(mfd), "masking tmpfs"), nil
}

// openDevNull opens the container's /dev/null and checks that it is the
// null device.
func openDevNull(root *os.File) (*os.File, error) {
	f, err := openInRoot(root, "/dev/null")
	if err != nil {
		return nil, fmt.Errorf("open /dev/null: %w", err)
	}
	if err := checkDevice(f, unix.S_IFCHR, 1, 3); err != nil {
		f.Close()
		return nil, fmt.Errorf("/dev/null: %w: refusing to bind it over masked paths", err)
	}
	return f, nil
}
