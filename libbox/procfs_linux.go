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
