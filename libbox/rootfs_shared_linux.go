package libbox

// A container without a mount namespace of its own shares the runtime's
// (OCI: a namespace type absent from linux.namespaces is inherited). runc
// 1.1.5 then makes the config's mounts in that namespace, under the
// rootfs, and chroots into the rootfs instead of pivot_root; so does this
// runtime, and it goes on from there:
//
//   - nothing is done to the namespace's own root: no propagation change,
//     no bind of the rootfs onto itself (runc does both, in the host's
//     namespace);
//   - a rootfs of / (the host's own root, the usual reason to share the
//     mount namespace) takes no mounts and no /dev set-up: they would cover
//     the host's own /proc and /dev;
//   - masked and read-only paths, a read-only root and rootfsPropagation
//     are refused (specconv and checkSharedMountNS): they would change the
//     host's mounts, and runc refuses the first two too;
//   - the mounts made under the rootfs are unmounted when the container is
//     deleted, or its create fails (runc leaves them on the host).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// hasMountNS reports whether the container has a mount namespace of its
// own, made for it or joined by path.
func (c *Config) hasMountNS() bool {
	_, ok := c.NamespaceOf(NEWNS)
	return ok
}

// checkSharedMountNS refuses what a container sharing the runtime's mount
// namespace cannot have without changing the runtime's own mounts.
func checkSharedMountNS(cfg *Config) error {
	if cfg.hasMountNS() {
		return nil
	}
	need := func(what string) error {
		return fmt.Errorf("%s needs a mount namespace: add {\"type\": \"mount\"} to linux.namespaces", what)
	}
	switch {
	case len(cfg.MaskedPaths) > 0:
		return need("linux.maskedPaths")
	case len(cfg.ReadonlyPaths) > 0:
		return need("linux.readonlyPaths")
	case cfg.Readonlyfs:
		return need("root.readonly")
	case cfg.RootPropagation != 0:
		return need("linux.rootfsPropagation")
	case cfg.RootfsTmpfs != nil:
		return need("a tmpfs root")
	}
	path, err := filepath.EvalSymlinks(cfg.Rootfs)
	if err != nil {
		return fmt.Errorf("rootfs: %w", err)
	}
	if path == "/" && len(cfg.Mounts) > 0 {
		return errors.New("mounts with the host's / as rootfs need a mount namespace: they would cover the host's own paths; add {\"type\": \"mount\"} to linux.namespaces")
	}
	return nil
}

// prepareSharedRootfs is prepareRootfs for a container in the runtime's
// mount namespace: the mounts and /dev under the rootfs, nothing else. It
// returns the rootfs's path, symlinks resolved. trees are as for
// prepareRootfs.
func prepareSharedRootfs(cfg *Config, trees *mountTrees) (string, error) {
	if err := checkSharedMountNS(cfg); err != nil {
		return "", err
	}
	path, err := filepath.EvalSymlinks(cfg.Rootfs)
	if err != nil {
		return "", fmt.Errorf("rootfs: %w", err)
	}
	if path == "/" {
		return path, nil
	}
	if err := checkProcfsPath("/proc"); err != nil {
		return "", fmt.Errorf("host /proc: %w", err)
	}
	root, err := os.OpenFile(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open rootfs: %w", err)
	}
	defer root.Close()
	if err := mountAll(cfg, path, root, trees); err != nil {
		return "", err
	}
	return path, nil
}

// chrootRootfs makes the rootfs init's root directory, as runc does
// without a mount namespace (pivot_root would move the runtime's own root).
func chrootRootfs(path string) error {
	if path != "/" {
		if err := unix.Chroot(path); err != nil {
			return fmt.Errorf("chroot %s: %w", path, err)
		}
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir to /: %w", err)
	}
	return nil
}

// unmountShared detaches what a container without a mount namespace
// mounted under its rootfs, deepest first; nothing for one with a mount
// namespace (its mounts went with it), or with / as rootfs (it has none).
// It runs in the runtime's own mount namespace, once the container's
// processes are gone.
func unmountShared(cfg *Config) error {
	if cfg == nil || cfg.hasMountNS() {
		return nil
	}
	path, err := filepath.EvalSymlinks(cfg.Rootfs)
	if err != nil || path == "/" {
		return nil
	}
	infos, err := mountinfo.GetMounts(mountinfo.PrefixFilter(path))
	if err != nil {
		return fmt.Errorf("read mountinfo: %w", err)
	}
	slices.SortFunc(infos, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	var errs []error
	for _, i := range infos {
		if !strings.HasPrefix(i.Mountpoint, path+"/") {
			continue // the rootfs itself, if it is a mount point, is the caller's
		}
		if err := unix.Unmount(i.Mountpoint, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, &mountError{op: "unmount", target: i.Mountpoint, err: err})
		}
	}
	return errors.Join(errs...)
}
