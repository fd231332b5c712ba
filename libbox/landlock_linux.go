package libbox

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock access rights, by what the policy grants.
const (
	llRead  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// llFile are the rights that mean something on a file that is not a
	// directory; the kernel refuses the others in a rule for one.
	llFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llTCP = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
)

// landlockFeatures are the parts of a policy, with the ABI that brought
// them. Rights of a newer ABI are simply not handled on an older kernel,
// which allows what they would restrict: that is the degradation.
var landlockFeatures = []struct {
	abi  int
	fs   uint64
	net  uint64
	what string
}{
	{1, llRead | llWrite, 0, "filesystem access"},
	// Without refer (ABI 1) the kernel denies every rename or link across
	// directories: stricter, not weaker, so it is not reported.
	{2, unix.LANDLOCK_ACCESS_FS_REFER, 0, ""},
	{3, unix.LANDLOCK_ACCESS_FS_TRUNCATE, 0, "truncation"},
	{4, 0, llTCP, "TCP bind and connect"},
	{5, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, 0, "ioctl on device files"},
}

// landlockABI returns the running kernel's Landlock ABI version, 0 when
// it has none (not built, or not in the lsm= boot list). A variable so
// tests can play older kernels.
var landlockABI = func() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// LandlockABI returns the running kernel's Landlock ABI version, 0 when it
// has no Landlock.
func LandlockABI() int { return landlockABI() }

// landlockPlan decides what of l the kernel with Landlock ABI abi
// enforces: the rights to handle, and the report.
func landlockPlan(l *Landlock, abi int) (fs, net uint64, r LandlockReport) {
	r = LandlockReport{ABI: abi, Status: LandlockEnforced}
	for _, f := range landlockFeatures {
		wantFS, wantNet := uint64(0), uint64(0)
		if l.restrictsFS() {
			wantFS = f.fs
		}
		if l.RestrictNetwork {
			wantNet = f.net
		}
		if wantFS|wantNet == 0 {
			continue
		}
		if abi >= f.abi {
			fs |= wantFS
			net |= wantNet
		} else if f.what != "" {
			r.NotEnforced = append(r.NotEnforced, fmt.Sprintf("%s (needs Landlock ABI %d)", f.what, f.abi))
		}
	}
	switch {
	case abi <= 0:
		r.Status = LandlockUnavailable
	case len(r.NotEnforced) > 0:
		r.Status = LandlockDegraded
	}
	return fs, net, r
}

// CheckLandlock says how much of l the running kernel enforces. The error
// is for a Required policy the kernel cannot enforce whole.
func CheckLandlock(l *Landlock) (LandlockReport, error) {
	if err := l.Validate(); err != nil {
		return LandlockReport{}, err
	}
	_, _, r := landlockPlan(l, landlockABI())
	return r, r.requiredError(l)
}

func (r LandlockReport) requiredError(l *Landlock) error {
	if !l.Required || r.Status == LandlockEnforced {
		return nil
	}
	if r.Status == LandlockUnavailable {
		return errors.New("landlock is required but this kernel does not have it (CONFIG_SECURITY_LANDLOCK, and landlock in the lsm= boot parameter)")
	}
	return fmt.Errorf("landlock is required but this kernel (Landlock ABI %d) cannot enforce: %v", r.ABI, r.NotEnforced)
}

// prepareLandlock builds the ruleset of l: it runs in the container after
// pivot_root, so the paths are the container's, and before the process's
// credentials change, so every listed path can be opened. It returns -1
// when there is nothing the kernel can enforce.
func prepareLandlock(l *Landlock) (int, uint32, error) {
	if err := l.Validate(); err != nil {
		return -1, 0, err
	}
	fs, net, report := landlockPlan(l, landlockABI())
	if err := report.requiredError(l); err != nil {
		return -1, 0, err
	}
	if fs|net == 0 {
		return -1, 0, nil
	}
	var rules []landlock.Rule
	for _, list := range []struct {
		name   string
		paths  []string
		access uint64
	}{{"readOnly", l.ReadOnly, llRead & fs}, {"readWrite", l.ReadWrite, fs}} {
		for _, p := range list.paths {
			var st unix.Stat_t
			if err := unix.Stat(p, &st); err != nil {
				return -1, 0, fmt.Errorf("landlock: %s path %s: %w", list.name, p, err)
			}
			access := list.access
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				access &= llFile
			}
			rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(access), p))
		}
	}
	if net != 0 {
		for _, port := range l.AllowBind {
			rules = append(rules, landlock.BindTCP(port))
		}
		for _, port := range l.AllowConnect {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	cfg := landlock.Config{HandledAccessFS: landlock.AccessFSSet(fs), HandledAccessNet: landlock.AccessNetSet(net)}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, fmt.Errorf("landlock: %w", err)
	}
	return fd, flags, nil
}

// restrictLandlock enforces the ruleset on the calling thread, the one
// that executes the user program (a Landlock domain is per thread and
// inherited across execve). The kernel requires no_new_privs or
// CAP_SYS_ADMIN; a process without the capability gets no_new_privs.
func restrictLandlock(fd int, flags uint32) error {
	defer unix.Close(fd)
	err := llsys.LandlockRestrictSelf(fd, flags)
	if errors.Is(err, unix.EPERM) {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("landlock: set no_new_privs: %w", err)
		}
		err = llsys.LandlockRestrictSelf(fd, flags)
	}
	if err != nil {
		return fmt.Errorf("landlock: restrict self: %w", err)
	}
	return nil
}
