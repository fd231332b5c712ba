package specconv

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// hostProbe holds the few questions FromSpec asks of the running host, so
// that tests can answer them without root or a particular kernel.
type hostProbe struct {
	// capLastCap returns the highest capability number the kernel knows.
	capLastCap func() (int, error)
	// appArmorEnabled and seLinuxEnabled report whether the LSM is active.
	appArmorEnabled func() bool
	seLinuxEnabled  func() bool
	// isRuntimeNamespace reports whether the namespace file at path is the
	// runtime's own namespace of that kind ("net", "ipc", "uts").
	isRuntimeNamespace func(kind, path string) (bool, error)
	// cgroup2Unified reports whether /sys/fs/cgroup is a cgroup2 mount.
	cgroup2Unified func() bool
}

var host = hostProbe{
	capLastCap:         readCapLastCap,
	appArmorEnabled:    libbox.AppArmorEnabled,
	seLinuxEnabled:     seLinuxEnabled,
	isRuntimeNamespace: isRuntimeNamespace,
	cgroup2Unified:     cgroup2Unified,
}

func readCapLastCap() (int, error) {
	const path = "/proc/sys/kernel/cap_last_cap"
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return n, nil
}

// seLinuxEnabled is true when selinuxfs is mounted at its usual place (or
// the pre-3.0 one), which is what libselinux checks too.
func seLinuxEnabled() bool {
	for _, p := range []string{"/sys/fs/selinux/enforce", "/selinux/enforce"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func isRuntimeNamespace(kind, path string) (bool, error) {
	own := "/proc/self/ns/" + kind
	var a, b unix.Stat_t
	if err := unix.Stat(own, &a); err != nil {
		return false, &os.PathError{Op: "stat", Path: own, Err: err}
	}
	if err := unix.Stat(path, &b); err != nil {
		return false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return a.Dev == b.Dev && a.Ino == b.Ino, nil
}

func cgroup2Unified() bool {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return false
	}
	return st.Type == unix.CGROUP2_SUPER_MAGIC
}
