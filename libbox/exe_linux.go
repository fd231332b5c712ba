package libbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// cloneSelfExe copies the running binary into a sealed memfd, which init is
// executed from. A container process that reaches init's /proc/PID/exe (for
// instance by exec'ing a "#!/proc/self/exe" script) then finds a sealed
// in-memory copy it cannot write, not the host's binary (CVE-2019-5736).
func cloneSelfExe() (*os.File, error) {
	src, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("open own binary: %w", err)
	}
	defer src.Close()
	flags := unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING | unix.MFD_EXEC
	fd, err := unix.MemfdCreate("nanobox-runc:init", flags)
	if errors.Is(err, unix.EINVAL) {
		// MFD_EXEC is new in 6.3; older kernels make memfds executable anyway.
		fd, err = unix.MemfdCreate("nanobox-runc:init", flags&^unix.MFD_EXEC)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	dst := os.NewFile(uintptr(fd), "nanobox-runc:init")
	if err := sendfileAll(fd, int(src.Fd())); err != nil {
		dst.Close()
		return nil, fmt.Errorf("copy own binary to memfd: %w", err)
	}
	const seals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		dst.Close()
		return nil, fmt.Errorf("seal memfd: %w", err)
	}
	return dst, nil
}

// sendfileAll copies all of in to out in the kernel. copy_file_range
// refuses memfds (EXDEV across filesystems) and io.Copy would then fall
// back to a user-space buffer; sendfile copies page-cache pages directly.
func sendfileAll(out, in int) error {
	for {
		n, err := unix.Sendfile(out, in, nil, 1<<30)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// lookPathHost finds a helper program on the host.
func lookPathHost(name string) (string, error) {
	for _, dir := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"} {
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

func execOutput(path string, args ...string) (string, error) {
	out, err := exec.Command(path, args...).CombinedOutput()
	return string(out), err
}
