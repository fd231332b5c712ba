package libbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// sealedSelfExe returns an fd of the runtime binary for init (or an exec'd
// process) to be executed from, such that no container process can write
// the host's binary through /proc/PID/exe (CVE-2019-5736: a container whose
// program is "#!/proc/self/exe" runs the runtime binary itself).
//
// Copying the binary into a sealed memfd, as runc 1.1 does, costs a copy of
// the whole binary per container; cheaper ways are tried first:
//   - when no container process can write the file anyway (it belongs to
//     a host uid the container does not map, and is not group- or
//     world-writable), the binary is used as it is;
//   - with CAP_SYS_ADMIN, a detached read-only bind mount of the file:
//     writes through it fail with EROFS, and nothing in the container can
//     reach the mount to make it writable;
//   - otherwise a sealed memfd copy.
func sealedSelfExe(cfg *Config) (*os.File, error) {
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("open own binary: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(self.Fd()), &st); err != nil {
		self.Close()
		return nil, fmt.Errorf("stat own binary: %w", err)
	}
	if st.Mode&0o022 == 0 && !containerMapsHostUID(cfg, st.Uid) {
		return self, nil
	}
	if f, err := roBindSelfExe(); err == nil {
		self.Close()
		return f, nil
	}
	defer self.Close()
	return memfdCopy(self)
}

// containerMapsHostUID reports whether some process of the container may
// run as host uid: any uid without a user namespace, the mapped ranges with
// one.
func containerMapsHostUID(cfg *Config, uid uint32) bool {
	if _, ok := cfg.NamespaceOf(NEWUSER); !ok {
		return true
	}
	if len(cfg.UIDMappings) == 0 {
		return true // joined namespace: its maps are not known here
	}
	for _, m := range cfg.UIDMappings {
		if uid >= m.HostID && uid-m.HostID < m.Size {
			return true
		}
	}
	return false
}

// roBindSelfExe clones a bind mount of the binary that is attached nowhere
// and marks it read-only.
func roBindSelfExe() (*os.File, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, "/proc/self/exe", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return nil, err
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "nanobox-runc:init"), nil
}

// memfdCopy copies the binary into a sealed memfd.
func memfdCopy(src *os.File) (*os.File, error) {
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

// initGODEBUG is init's whole Go runtime configuration. Go 1.25+ sizes
// GOMAXPROCS from the cgroup's CPU limit and keeps cpu.cfs_quota_us and
// cpu.cfs_period_us open to re-read them: in init those would be host
// cgroup files held open inside the container, and reading them costs
// start-up time for a process that lives a few milliseconds. Without
// hugePages (Config.InitHugePages), disablethp=1 makes the Go runtime
// undo the huge-page advice of nsenter/thp.c for init's heap.
func initGODEBUG(hugePages bool) string {
	const base = "GODEBUG=containermaxprocs=0,updatemaxprocs=0"
	if hugePages {
		return base
	}
	return base + "," + noHugePages
}

// noHugePages is the Go runtime's own switch that undoes nsenter/thp.c's
// huge-page advice, for the binary's processes that should not have them.
const noHugePages = "disablethp=1"

// envHugePages=1 in a process's environment makes nsenter/thp.c ask for
// transparent huge pages for its Go heap (off without it; see there why).
const envHugePages = "NANOBOX_THP"

// envPrefault=1 (or 0) in a process's environment makes nsenter/thp.c
// prefault the binary's image always (or never); without it, where a page
// fault is dear. The runtime passes it on from its own environment.
const envPrefault = "NANOBOX_PREFAULT"

// initEnv is the environment of a container's init or exec'd process
// until it executes the program: its fds (syncFd, the size of its fd
// table), its Go runtime's configuration, and the runtime's own
// NANOBOX_PREFAULT.
func initEnv(syncFd, nfds int, hugePages bool) []string {
	env := []string{
		nsenter.EnvInitPipe + "=" + strconv.Itoa(syncFd),
		nsenter.EnvNFds + "=" + strconv.Itoa(nfds),
		initGODEBUG(hugePages),
		initGOMAXPROCS,
	}
	if hugePages {
		env = append(env, envHugePages+"=1")
	}
	if v, ok := os.LookupEnv(envPrefault); ok {
		env = append(env, envPrefault+"="+v)
	}
	return env
}

// initGOMAXPROCS: init's work is one sequence of system calls; with one P
// its Go runtime starts fewer threads, each a clone at its start and one
// more for the kernel to kill and wait for at its execve.
const initGOMAXPROCS = "GOMAXPROCS=1"

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
