package libbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DefaultDevices are the device nodes every container gets in /dev (the
// OCI runtime spec's default devices), in addition to Config.Devices.
var DefaultDevices = []Device{
	{Type: 'c', Path: "/dev/null", Major: 1, Minor: 3, FileMode: 0o666},
	{Type: 'c', Path: "/dev/zero", Major: 1, Minor: 5, FileMode: 0o666},
	{Type: 'c', Path: "/dev/full", Major: 1, Minor: 7, FileMode: 0o666},
	{Type: 'c', Path: "/dev/random", Major: 1, Minor: 8, FileMode: 0o666},
	{Type: 'c', Path: "/dev/urandom", Major: 1, Minor: 9, FileMode: 0o666},
	{Type: 'c', Path: "/dev/tty", Major: 5, Minor: 0, FileMode: 0o666},
}

// needsSetupDev is false when the config bind-mounts something (the host's
// /dev, typically) on /dev: then /dev is the caller's business, as in runc.
func needsSetupDev(cfg *Config) bool {
	for i := range cfg.Mounts {
		m := &cfg.Mounts[i]
		if filepath.Join("/", m.Destination) == "/dev" && (m.IsBind() || m.Type == "bind" || m.Type == "rbind") {
			return false
		}
	}
	return true
}

// containerDevices is DefaultDevices then cfg.Devices, a config entry
// replacing the default one of the same path.
func containerDevices(cfg *Config) []Device {
	seen := map[string]bool{}
	for _, d := range cfg.Devices {
		seen[filepath.Join("/", d.Path)] = true
	}
	var devs []Device
	for _, d := range DefaultDevices {
		if !seen[d.Path] {
			devs = append(devs, d)
		}
	}
	return append(devs, cfg.Devices...)
}

// setupDev creates the devices, the /dev symlinks, /dev/ptmx and, for a
// terminal, the /dev/console placeholder, all inside the rootfs. A /dev that
// is a symlink in the image is followed inside the rootfs only, like every
// other path, so nothing is ever created on the host through it
// (CVE-2026-41579).
func (r *rootfsMounter) setupDev() error {
	// Device modes are exact: mknodat and mkfifoat apply the umask.
	old := unix.Umask(0)
	defer unix.Umask(old)
	// In a user namespace mknod of a device is refused; elsewhere an EPERM
	// (an unprivileged runtime, an LSM) falls back to the same bind.
	bindOnly := r.userns
	for _, d := range containerDevices(r.cfg) {
		if filepath.Clean(d.Path) == "/dev/ptmx" {
			// Always the symlink to the container's devpts below, as
			// runc's createDevices skips it; made first, a bind (user
			// namespace) could not be removed for it (EBUSY).
			continue
		}
		if err := r.createDevice(d, bindOnly); err != nil {
			return err
		}
	}
	dev, err := r.mkdirAll("/dev")
	if err != nil {
		return fmt.Errorf("create /dev: %w", err)
	}
	defer dev.Close()
	if err := setupDevSymlinks(dev); err != nil {
		return err
	}
	// /dev/ptmx must be the one of the container's devpts instance
	// (mounted with newinstance), not a node on the rootfs.
	if err := unix.Unlinkat(int(dev.Fd()), "ptmx", 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove /dev/ptmx: %w", err)
	}
	if err := unix.Symlinkat("pts/ptmx", int(dev.Fd()), "ptmx"); err != nil {
		return fmt.Errorf("symlink /dev/ptmx: %w", err)
	}
	if r.cfg.Process.Terminal {
		// mountConsole runs after / may have been made read-only; a
		// placeholder made now lets it bind the pty slave even then.
		if err := createEmptyFile(dev, "console", 0o600); err != nil {
			return fmt.Errorf("create /dev/console: %w", err)
		}
	}
	return nil
}

func setupDevSymlinks(dev *os.File) error {
	links := [][2]string{
		{"/proc/self/fd", "fd"},
		{"/proc/self/fd/0", "stdin"},
		{"/proc/self/fd/1", "stdout"},
		{"/proc/self/fd/2", "stderr"},
	}
	// Checked on the host, before pivot_root, as runc does.
	if _, err := os.Stat("/proc/kcore"); err == nil {
		links = append(links, [2]string{"/proc/kcore", "core"})
	}
	for _, l := range links {
		if err := unix.Symlinkat(l[0], int(dev.Fd()), l[1]); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("symlink /dev/%s: %w", l[1], err)
		}
	}
	return nil
}

func deviceFileType(t rune) (uint32, error) {
	switch t {
	case 'c', 'u':
		return unix.S_IFCHR, nil
	case 'b':
		return unix.S_IFBLK, nil
	case 'p':
		return unix.S_IFIFO, nil
	}
	return 0, fmt.Errorf("unknown device type %q", t)
}

// createDevice makes d inside the rootfs: mknod as root, or, when bindOnly
// (rootless, or in a user namespace, where mknod of devices is refused) or
// when mknod fails with EPERM, a bind mount of the host's node of the same
// path (checked to be the same device first) on an empty file. A fifo is
// always made with mkfifo. An entry the image already has is kept when it
// is the right node; a regular file or a wrong node is covered by a bind of
// the host's device rather than deleted; a symlink or a directory is
// refused.
func (r *rootfsMounter) createDevice(d Device, bindOnly bool) error {
	p := filepath.Join("/", d.Path)
	if d.Path == "" || p == "/" {
		return fmt.Errorf("device %q: invalid path", d.Path)
	}
	ifmt, err := deviceFileType(d.Type)
	if err != nil {
		return fmt.Errorf("device %s: %w", p, err)
	}
	d.Path = p
	fail := func(err error) error { return fmt.Errorf("device %s: %w", p, err) }
	dir, err := r.mkdirAll(filepath.Dir(p))
	if err != nil {
		return fail(err)
	}
	defer dir.Close()
	dirfd := int(dir.Fd())
	base := filepath.Base(p)
	perm := uint32(d.FileMode.Perm())

	var st unix.Stat_t
	err = unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil:
		have := st.Mode & unix.S_IFMT
		if have == unix.S_IFLNK || have == unix.S_IFDIR {
			return fail(fmt.Errorf("the rootfs has a %s there", fileTypeName(have)))
		}
		if ifmt == unix.S_IFIFO {
			if have != unix.S_IFIFO {
				return fail(fmt.Errorf("the rootfs has a %s there", describeStat(&st)))
			}
			return nil
		}
		if !bindOnly && have == ifmt && int64(unix.Major(st.Rdev)) == d.Major && int64(unix.Minor(st.Rdev)) == d.Minor {
			return nil
		}
		return bindDevice(dir, base, d, ifmt)
	case !errors.Is(err, unix.ENOENT):
		return fail(err)
	}

	if ifmt == unix.S_IFIFO {
		if err := unix.Mkfifoat(dirfd, base, perm); err != nil {
			return fail(fmt.Errorf("mkfifo: %w", err))
		}
		return chownDevice(dirfd, base, d, bindOnly)
	}
	if !bindOnly {
		err := unix.Mknodat(dirfd, base, ifmt|perm, int(unix.Mkdev(uint32(d.Major), uint32(d.Minor))))
		if err == nil {
			return chownDevice(dirfd, base, d, false)
		}
		if !errors.Is(err, unix.EPERM) {
			return fail(fmt.Errorf("mknod: %w", err))
		}
		// mknod is refused in a user namespace we did not know of, or by
		// an LSM: bind the host's node like a rootless container does.
	}
	if err := createEmptyFile(dir, base, 0); err != nil {
		return fail(err)
	}
	return bindDevice(dir, base, d, ifmt)
}

func chownDevice(dirfd int, base string, d Device, bestEffort bool) error {
	err := unix.Fchownat(dirfd, base, int(d.UID), int(d.GID), unix.AT_SYMLINK_NOFOLLOW)
	if err != nil && !bestEffort {
		return fmt.Errorf("device %s: chown: %w", d.Path, err)
	}
	return nil
}

// bindDevice bind-mounts the host's d.Path on dir/base, after checking
// that the host's node is the device d names: a bind must not expose some
// other host file under a device's name.
func bindDevice(dir *os.File, base string, d Device, ifmt uint32) error {
	fail := func(err error) error {
		return &mountError{op: "bind-mount", source: "host " + d.Path, target: d.Path, err: err}
	}
	host, err := os.OpenFile(d.Path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer host.Close()
	if err := checkDevice(host, ifmt, d.Major, d.Minor); err != nil {
		return fail(fmt.Errorf("host node: %w", err))
	}
	target, err := openatFile(dir, base, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fail(err)
	}
	defer target.Close()
	st, err := fstatFile(target)
	if err != nil {
		return fail(err)
	}
	if t := st.Mode & unix.S_IFMT; t == unix.S_IFDIR || t == unix.S_IFLNK {
		return fail(fmt.Errorf("the rootfs has a %s there", fileTypeName(t)))
	}
	if err := mountFd("", host, target, "", unix.MS_BIND, ""); err != nil {
		return fail(err)
	}
	return nil
}

// mountConsole binds the pty slave at slavePath (inside the container,
// after pivot_root) on /dev/console, creating /dev/console as an empty file
// (mode 0600) if it is missing and replacing a symlink there.
func mountConsole(slavePath string) error {
	fail := func(err error) error {
		return &mountError{op: "bind-mount", source: slavePath, target: "/dev/console", err: err}
	}
	root, err := os.OpenFile("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	slave, err := openInRoot(root, slavePath)
	if err != nil {
		return fail(err)
	}
	defer slave.Close()
	if st, err := fstatFile(slave); err != nil {
		return fail(err)
	} else if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return fail(fmt.Errorf("%s is not a character device (found %s)", slavePath, describeStat(&st)))
	}
	dev, err := mkdirAllInRoot(root, "/dev", 0o755)
	if err != nil {
		return fail(err)
	}
	defer dev.Close()
	console, err := openPlaceholder(dev, "console", 0o600)
	if err != nil {
		return fail(err)
	}
	defer console.Close()
	if err := bindFd(slave, console); err != nil {
		return fail(err)
	}
	return nil
}
