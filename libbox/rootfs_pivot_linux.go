package libbox

// The container's root becomes /: pivot_root(2), or MS_MOVE and chroot
// without it (NoPivotRoot).

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// pivotRootfs makes cfg.Rootfs the root of the mount namespace and leaves
// init in its /. The host's tree is detached, with its propagation made
// slave first so that the detach does not reach the host.
func pivotRootfs(cfg *Config) error {
	path, err := resolveRootfs(cfg.Rootfs)
	if err != nil {
		return err
	}
	if cfg.NoPivotRoot {
		if err := unix.Chdir(path); err != nil {
			return fmt.Errorf("chdir to rootfs: %w", err)
		}
		return msMoveRoot(path)
	}
	oldroot, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open old root: %w", err)
	}
	defer unix.Close(oldroot)
	newroot, err := unix.Open(path, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open new root: %w", err)
	}
	defer unix.Close(newroot)
	if err := unix.Fchdir(newroot); err != nil {
		return fmt.Errorf("chdir to rootfs: %w", err)
	}
	// pivot_root(".", ".") stacks the old root on top of the new one, with
	// no directory needed for it inside the rootfs; it is then unmounted
	// from under our cwd (runc's trick, see pivot_root(2)).
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root %s: %w", path, err)
	}
	if err := unix.Fchdir(oldroot); err != nil {
		return fmt.Errorf("chdir to old root: %w", err)
	}
	if err := unix.Mount("", ".", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return &mountError{op: "make slave", target: "the old root", err: err}
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return &mountError{op: "unmount", target: "the old root", err: err}
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir to /: %w", err)
	}
	return nil
}

// msMoveRoot is the NoPivotRoot path: the rootfs is moved over / and init
// chroots into it. The host's old tree stays in the namespace, so first the
// host's full procfs and sysfs mounts are detached (or, when that is
// refused, covered by a tmpfs): the kernel lets a namespace mount a fresh
// procfs or sysfs only if it can already see an unmasked one, and chroot
// does not hide them (runc's msMoveRoot).
func msMoveRoot(path string) error {
	infos, err := mountinfo.GetMounts(func(i *mountinfo.Info) (skip, stop bool) {
		return i.Root != "/" || (i.FSType != "proc" && i.FSType != "sysfs") ||
			i.Mountpoint == path || strings.HasPrefix(i.Mountpoint, path+"/"), false
	})
	if err != nil {
		return fmt.Errorf("read mountinfo: %w", err)
	}
	// Deepest first, so that a mount is never detached before one on it.
	slices.SortFunc(infos, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	for _, i := range infos {
		p := i.Mountpoint
		if err := unix.Mount("", p, "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return &mountError{op: "make slave", target: p, err: err}
		}
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
				return &mountError{op: "unmount", target: p, err: err}
			}
			if err := unix.Mount("tmpfs", p, "tmpfs", 0, ""); err != nil {
				return &mountError{op: "cover", target: p, err: err}
			}
		}
	}
	if err := unix.Mount(path, "/", "", unix.MS_MOVE, ""); err != nil {
		return &mountError{op: "move", source: path, target: "/", err: err}
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir to /: %w", err)
	}
	return nil
}
