package libbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Landlock is a filesystem and network policy the kernel enforces on the
// container's process with Landlock, on top of the mounts: what the process
// may do with the files it can see. Paths are container paths (the rules
// are made after pivot_root), and a rule covers everything beneath its path.
//
// With paths listed, any file access the lists do not grant is denied:
// a program must be under ReadOnly (or ReadWrite) to be executed at all.
// With no paths, the filesystem is not restricted and only the network
// rules apply.
//
// Enforcement is best effort down to the kernel's Landlock ABI (what is left
// out is reported by CheckLandlock and logged by the runtime), unless
// Required is set. Enforcing Landlock needs no_new_privs unless the process
// keeps CAP_SYS_ADMIN: the runtime sets it for a process that would
// otherwise be refused.
type Landlock struct {
	// ReadOnly paths may be read, listed and executed.
	ReadOnly []string `json:"readOnly,omitempty"`
	// ReadWrite paths may also be written, truncated, created in, removed
	// from, renamed and linked across, and their devices used with ioctl.
	ReadWrite []string `json:"readWrite,omitempty"`
	// RestrictNetwork denies TCP bind(2) and connect(2) (Landlock ABI 4),
	// except to the ports of AllowBind and AllowConnect. UDP and other
	// protocols are not restricted.
	RestrictNetwork bool     `json:"restrictNetwork,omitempty"`
	AllowBind       []uint16 `json:"allowBind,omitempty"`
	AllowConnect    []uint16 `json:"allowConnect,omitempty"`
	// Required makes creating the container fail when the kernel cannot
	// enforce the whole policy, instead of running with what it can.
	Required bool `json:"required,omitempty"`
}

// restrictsFS reports whether the policy restricts the filesystem.
func (l *Landlock) restrictsFS() bool { return len(l.ReadOnly)+len(l.ReadWrite) > 0 }

// Validate checks the policy's form; what the kernel can enforce is
// CheckLandlock's question.
func (l *Landlock) Validate() error {
	if !l.restrictsFS() && !l.RestrictNetwork {
		return errors.New("landlock: nothing to restrict: list readOnly or readWrite paths, or set restrictNetwork")
	}
	if !l.RestrictNetwork && len(l.AllowBind)+len(l.AllowConnect) > 0 {
		return errors.New("landlock: allowBind and allowConnect need restrictNetwork")
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"readOnly", l.ReadOnly}, {"readWrite", l.ReadWrite}} {
		for _, p := range list.paths {
			if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
				return fmt.Errorf("landlock: %s path %q must be an absolute container path", list.name, p)
			}
		}
	}
	return nil
}

// LandlockStatus is the fate of a Landlock policy on the running kernel.
type LandlockStatus string

// The statuses, as in the execution report.
const (
	LandlockEnforced    LandlockStatus = "enforced"
	LandlockDegraded    LandlockStatus = "degraded"    // enforced in part: see NotEnforced
	LandlockUnavailable LandlockStatus = "unavailable" // the kernel has no Landlock
)

// LandlockReport says how much of a policy the running kernel enforces.
type LandlockReport struct {
	// ABI is the kernel's Landlock ABI version, 0 without Landlock.
	ABI    int            `json:"abi"`
	Status LandlockStatus `json:"status"`
	// NotEnforced names what the policy asks for and the kernel lacks,
	// e.g. "TCP bind and connect (needs Landlock ABI 4)".
	NotEnforced []string `json:"notEnforced,omitempty"`
}
