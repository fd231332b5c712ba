package libbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// copyTree copies the contents of directory src into directory dst, both
// open handles, keeping modes, owners and symlinks. Nothing is followed:
// entries are opened relative to their parent with O_NOFOLLOW, so a symlink
// in the image is copied as a symlink and can never lead the copy outside
// the rootfs. It serves tmpcopyup: src is the directory a tmpfs was just
// mounted over (the handle still names the covered directory), dst is the
// new tmpfs.
func copyTree(src, dst *os.File) error {
	// The handles may be O_PATH (pathrs-lite's); listing needs a real open.
	dir, err := openatFile(src, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", src.Name(), err)
	}
	sfd, dfd := int(src.Fd()), int(dst.Fd())
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("stat %s: %w", name, err)
		}
		perm := st.Mode & 0o7777
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if err := unix.Mkdirat(dfd, name, perm); err != nil {
				return fmt.Errorf("mkdir %s: %w", name, err)
			}
			s, err := openatFile(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			if err != nil {
				return err
			}
			d, err := openatFile(dst, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			if err != nil {
				s.Close()
				return err
			}
			err = copyTree(s, d)
			if err == nil {
				err = fixOwnerMode(int(d.Fd()), &st)
			}
			s.Close()
			d.Close()
			if err != nil {
				return err
			}
		case unix.S_IFREG:
			if err := copyFile(src, dst, name, &st); err != nil {
				return err
			}
		case unix.S_IFLNK:
			target := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(sfd, name, target)
			if err != nil {
				return fmt.Errorf("readlink %s: %w", name, err)
			}
			if err := unix.Symlinkat(string(target[:n]), dfd, name); err != nil {
				return fmt.Errorf("symlink %s: %w", name, err)
			}
			if err := unix.Fchownat(dfd, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("chown %s: %w", name, err)
			}
		default: // device nodes, fifos, sockets
			if err := unix.Mknodat(dfd, name, st.Mode, int(st.Rdev)); err != nil {
				return fmt.Errorf("mknod %s: %w", name, err)
			}
			if err := unix.Fchownat(dfd, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("chown %s: %w", name, err)
			}
		}
	}
	return nil
}

func copyFile(src, dst *os.File, name string, st *unix.Stat_t) error {
	in, err := openatFile(src, name, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := openatFile(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := sendfileAll(int(out.Fd()), int(in.Fd())); err != nil {
		return fmt.Errorf("copy %s: %w", name, err)
	}
	return fixOwnerMode(int(out.Fd()), st)
}

// fixOwnerMode gives a copy its original's owner, then its mode (chown
// clears the setuid bits, so the mode comes last).
func fixOwnerMode(fd int, st *unix.Stat_t) error {
	if err := unix.Fchown(fd, int(st.Uid), int(st.Gid)); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("chown: %w", err)
	}
	if err := unix.Fchmod(fd, st.Mode&0o7777); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	return nil
}
