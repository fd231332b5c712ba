package libbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// checkProcfs fails unless fd is on a procfs: before the runtime trusts a
// /proc file (writes oom_score_adj or a sysctl, lists /proc/self/fd, mounts
// through a magic link), it makes sure nobody mounted something else there
// (CVE-2019-19921, CVE-2025-52881). name is the path, for the error.
func checkProcfs(fd int, name string) error {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return &os.PathError{Op: "fstatfs", Path: name, Err: err}
	}
	if st.Type != unix.PROC_SUPER_MAGIC {
		return fmt.Errorf("%s is not on procfs (filesystem type %#x)", name, st.Type)
	}
	return nil
}

// checkProcfsPath is checkProcfs for a path: it opens path (O_PATH, so
// nothing of the file is read) and checks the handle, not the name, which
// could be swapped between a check and a use.
func checkProcfsPath(path string) error {
	f, err := os.OpenFile(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkProcfs(int(f.Fd()), path)
}

// isProcRoot reports whether path is the root of a procfs mount (inode 1
// of a proc filesystem): a bind of the host's /proc, say.
func isProcRoot(path string) bool {
	f, err := os.OpenFile(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	var st unix.Stat_t
	return checkProcfs(int(f.Fd()), path) == nil && unix.Fstat(int(f.Fd()), &st) == nil && st.Ino == 1
}
