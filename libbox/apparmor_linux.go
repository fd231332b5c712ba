package libbox

// AppArmor, as runc applies it: init (or an exec'd process) asks for its
// profile to be changed at the next execve by writing "exec PROFILE" to its
// own attr/apparmor/exec file, what libapparmor's aa_change_onexec does. The
// write is made before the credentials change and before the filters (as
// runc does it), so neither a dropped capability nor a seccomp profile that
// denies open or write can stand in its way; the profile takes effect only
// at the execve of the program.

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// AppArmorEnabledFile is the kernel parameter that reads "Y" when AppArmor
// is enabled on the host (runc and libapparmor read it too).
const AppArmorEnabledFile = "/sys/module/apparmor/parameters/enabled"

// AppArmorEnabled reports whether AppArmor is enabled on the host: its
// securityfs directory is there and AppArmorEnabledFile reads "Y", runc's
// test.
func AppArmorEnabled() bool {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		return false
	}
	b, err := os.ReadFile(AppArmorEnabledFile)
	return err == nil && len(b) > 0 && b[0] == 'Y'
}

// threadAttrDir is the LSM attribute directory of the calling thread: init
// runs locked to the OS thread that execs (runtime.LockOSThread), and the
// attribute is the thread's.
const threadAttrDir = "/proc/thread-self/attr"

// applyAppArmorProfile has the next execve of this thread confine the
// program by profile.
func applyAppArmorProfile(profile string) error {
	return writeAppArmorExec(threadAttrDir, profile, checkProcfs)
}

// writeAppArmorExec writes "exec PROFILE" to attrDir's apparmor/exec, or to
// attrDir/exec on kernels without the per-LSM directory (before Linux 5.8),
// after verify has checked that the opened file is procfs's: a fake /proc
// mounted by the container would otherwise swallow the write and leave the
// program unconfined (CVE-2019-16884).
func writeAppArmorExec(attrDir, profile string, verify func(fd int, name string) error) error {
	if profile == "" {
		return nil
	}
	path := attrDir + "/apparmor/exec"
	f, err := os.OpenFile(path, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		path = attrDir + "/exec"
		f, err = os.OpenFile(path, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return fmt.Errorf("apparmor profile %q: %w", profile, err)
	}
	defer f.Close()
	if err := verify(int(f.Fd()), path); err != nil {
		return fmt.Errorf("apparmor profile %q: %w", profile, err)
	}
	if _, err := f.WriteString("exec " + profile); err != nil {
		return fmt.Errorf("apply apparmor profile %q: %w: load it first (apparmor_parser -r), or pick a loaded one (/sys/kernel/security/apparmor/profiles)", profile, err)
	}
	return nil
}
