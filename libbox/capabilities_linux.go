package libbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// allCapabilities is every capability this runtime has a name for, by
// number. The running kernel may know fewer (see capabilityNames).
var allCapabilities = [...]string{
	unix.CAP_CHOWN:              "CAP_CHOWN",
	unix.CAP_DAC_OVERRIDE:       "CAP_DAC_OVERRIDE",
	unix.CAP_DAC_READ_SEARCH:    "CAP_DAC_READ_SEARCH",
	unix.CAP_FOWNER:             "CAP_FOWNER",
	unix.CAP_FSETID:             "CAP_FSETID",
	unix.CAP_KILL:               "CAP_KILL",
	unix.CAP_SETGID:             "CAP_SETGID",
	unix.CAP_SETUID:             "CAP_SETUID",
	unix.CAP_SETPCAP:            "CAP_SETPCAP",
	unix.CAP_LINUX_IMMUTABLE:    "CAP_LINUX_IMMUTABLE",
	unix.CAP_NET_BIND_SERVICE:   "CAP_NET_BIND_SERVICE",
	unix.CAP_NET_BROADCAST:      "CAP_NET_BROADCAST",
	unix.CAP_NET_ADMIN:          "CAP_NET_ADMIN",
	unix.CAP_NET_RAW:            "CAP_NET_RAW",
	unix.CAP_IPC_LOCK:           "CAP_IPC_LOCK",
	unix.CAP_IPC_OWNER:          "CAP_IPC_OWNER",
	unix.CAP_SYS_MODULE:         "CAP_SYS_MODULE",
	unix.CAP_SYS_RAWIO:          "CAP_SYS_RAWIO",
	unix.CAP_SYS_CHROOT:         "CAP_SYS_CHROOT",
	unix.CAP_SYS_PTRACE:         "CAP_SYS_PTRACE",
	unix.CAP_SYS_PACCT:          "CAP_SYS_PACCT",
	unix.CAP_SYS_ADMIN:          "CAP_SYS_ADMIN",
	unix.CAP_SYS_BOOT:           "CAP_SYS_BOOT",
	unix.CAP_SYS_NICE:           "CAP_SYS_NICE",
	unix.CAP_SYS_RESOURCE:       "CAP_SYS_RESOURCE",
	unix.CAP_SYS_TIME:           "CAP_SYS_TIME",
	unix.CAP_SYS_TTY_CONFIG:     "CAP_SYS_TTY_CONFIG",
	unix.CAP_MKNOD:              "CAP_MKNOD",
	unix.CAP_LEASE:              "CAP_LEASE",
	unix.CAP_AUDIT_WRITE:        "CAP_AUDIT_WRITE",
	unix.CAP_AUDIT_CONTROL:      "CAP_AUDIT_CONTROL",
	unix.CAP_SETFCAP:            "CAP_SETFCAP",
	unix.CAP_MAC_OVERRIDE:       "CAP_MAC_OVERRIDE",
	unix.CAP_MAC_ADMIN:          "CAP_MAC_ADMIN",
	unix.CAP_SYSLOG:             "CAP_SYSLOG",
	unix.CAP_WAKE_ALARM:         "CAP_WAKE_ALARM",
	unix.CAP_BLOCK_SUSPEND:      "CAP_BLOCK_SUSPEND",
	unix.CAP_AUDIT_READ:         "CAP_AUDIT_READ",
	unix.CAP_PERFMON:            "CAP_PERFMON",
	unix.CAP_BPF:                "CAP_BPF",
	unix.CAP_CHECKPOINT_RESTORE: "CAP_CHECKPOINT_RESTORE",
}

// lastCapability is the highest capability number the running kernel knows.
var lastCapability = sync.OnceValue(func() int {
	last := len(allCapabilities) - 1
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 {
			return min(n, last)
		}
	}
	// No /proc (or an odd one): PR_CAPBSET_READ fails with EINVAL for a
	// capability the kernel does not know.
	for c := last; c > 0; c-- {
		if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil {
			return c
		}
	}
	return 0
})

// capabilityNames maps the name of every capability the running kernel
// knows ("CAP_CHOWN") to its number.
func capabilityNames() map[string]int {
	m := make(map[string]int, lastCapability()+1)
	for c := 0; c <= lastCapability(); c++ {
		m[allCapabilities[c]] = c
	}
	return m
}

// CapabilityByName returns the number of the capability called name
// ("CAP_NET_ADMIN"); it fails for a name the running kernel does not know.
func CapabilityByName(name string) (int, error) {
	c, ok := capabilityNames()[name]
	if !ok {
		if slices.Contains(allCapabilities[:], name) {
			return 0, fmt.Errorf("capability %q is not supported by the running kernel", name)
		}
		return 0, fmt.Errorf("unknown capability %q", name)
	}
	return c, nil
}

// KnownCapabilities returns the names of the capabilities the running kernel
// knows, in capability-number order.
func KnownCapabilities() []string {
	return slices.Clone(allCapabilities[:lastCapability()+1])
}

// capMask is a capability set, bit n standing for capability n.
type capMask uint64

func (m capMask) has(c int) bool { return m&(1<<uint(c)) != 0 }

// names lists the members of m, by number.
func (m capMask) names() []string {
	var out []string
	for c := 0; c < len(allCapabilities); c++ {
		if m.has(c) {
			out = append(out, allCapabilities[c])
		}
	}
	return out
}

// capPlan is the five capability sets of a process, resolved to masks.
type capPlan struct {
	bounding, effective, permitted, inheritable, ambient capMask
}

// planCapabilities resolves caps into masks and checks what the kernel would
// otherwise refuse halfway through: ambient capabilities must be permitted
// and inheritable, effective ones permitted. nil caps (a config without
// process.capabilities) means none at all, as in runc: leaving the field
// out grants nothing; names the kernel does not know are skipped with a warning,
// as runc does, since leaving one out only takes privilege away.
func planCapabilities(caps *Capabilities) (capPlan, error) {
	if caps == nil {
		return capPlan{}, nil
	}
	plan := capPlan{
		bounding:    maskOf(caps.Bounding),
		effective:   maskOf(caps.Effective),
		permitted:   maskOf(caps.Permitted),
		inheritable: maskOf(caps.Inheritable),
		ambient:     maskOf(caps.Ambient),
	}
	if extra := plan.ambient &^ (plan.permitted & plan.inheritable); extra != 0 {
		return plan, fmt.Errorf("ambient capabilities %s must also be in the permitted and inheritable sets",
			strings.Join(extra.names(), ", "))
	}
	if extra := plan.effective &^ plan.permitted; extra != 0 {
		return plan, fmt.Errorf("effective capabilities %s must also be in the permitted set",
			strings.Join(extra.names(), ", "))
	}
	return plan, nil
}

// maskOf turns names into a mask, warning about the ones the running kernel
// does not know.
func maskOf(names []string) capMask {
	known := capabilityNames()
	var m capMask
	var unknown []string
	for _, n := range names {
		c, ok := known[n]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		m |= 1 << uint(c)
	}
	if len(unknown) > 0 {
		logrus.Warnf("ignoring capabilities unknown to the running kernel: %s", strings.Join(unknown, ", "))
	}
	return m
}

// dropBoundingSet removes from the calling thread's bounding set every
// capability not in keep. Needs CAP_SETPCAP, so it runs before the user
// changes.
func dropBoundingSet(keep capMask) error {
	for c := 0; c <= lastCapability(); c++ {
		if keep.has(c) {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				// The kernel does not know this one: nothing to drop.
				continue
			}
			return fmt.Errorf("prctl PR_CAPBSET_DROP %s: %w", allCapabilities[c], err)
		}
	}
	return nil
}

// capState is the calling thread's effective, permitted and inheritable sets.
type capState struct {
	effective, permitted, inheritable capMask
}

func capget() (capState, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return capState{}, fmt.Errorf("capget: %w", err)
	}
	join := func(lo, hi uint32) capMask { return capMask(lo) | capMask(hi)<<32 }
	return capState{
		effective:   join(data[0].Effective, data[1].Effective),
		permitted:   join(data[0].Permitted, data[1].Permitted),
		inheritable: join(data[0].Inheritable, data[1].Inheritable),
	}, nil
}

// capset sets the calling thread's sets (pid 0 in the header means the
// calling thread, which is why the caller must be locked to its thread).
func capset(s capState) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{
		{Effective: uint32(s.effective), Permitted: uint32(s.permitted), Inheritable: uint32(s.inheritable)},
		{Effective: uint32(s.effective >> 32), Permitted: uint32(s.permitted >> 32), Inheritable: uint32(s.inheritable >> 32)},
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// readBoundingSet returns the calling thread's bounding set.
func readBoundingSet() capMask {
	var m capMask
	for c := 0; c <= lastCapability(); c++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && r == 1 {
			m |= 1 << uint(c)
		}
	}
	return m
}

// grantable trims plan to what a process holding old, with the bounding
// set bounding, can give itself, and returns the capabilities it left out:
// the runtime spec asks for a warning, not a failure, for capabilities
// that cannot be granted (a runtime that does not hold CAP_SYS_RESOURCE
// itself, say). Leaving one out only takes privilege away.
func grantable(plan capPlan, old capState, bounding capMask) (capPlan, capMask) {
	var missing capMask
	keep := func(m *capMask, allowed capMask) {
		missing |= *m &^ allowed
		*m &= allowed
	}
	keep(&plan.permitted, old.permitted)
	inh := old.inheritable | bounding
	if !old.effective.has(unix.CAP_SETPCAP) {
		inh = old.inheritable | old.permitted
	}
	keep(&plan.inheritable, inh)
	keep(&plan.effective, plan.permitted)
	keep(&plan.ambient, plan.permitted&plan.inheritable)
	return plan, missing
}

// applyCapabilities sets the effective, permitted and inheritable sets, then
// makes the ambient set exactly plan.ambient.
func applyCapabilities(plan capPlan) error {
	old, err := capget()
	if err != nil {
		return err
	}
	want := capState{effective: plan.effective, permitted: plan.permitted, inheritable: plan.inheritable}
	if err := capset(want); err != nil {
		if errors.Is(err, unix.EPERM) {
			if why := capsetRefusal(old, readBoundingSet(), want); why != "" {
				return fmt.Errorf("%w: %s", err, why)
			}
		}
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		// Kernels before 4.3 have no ambient set; that only matters when
		// one was asked for.
		if !errors.Is(err, unix.EINVAL) || plan.ambient != 0 {
			return fmt.Errorf("prctl PR_CAP_AMBIENT_CLEAR_ALL: %w", err)
		}
	}
	for c := 0; c <= lastCapability(); c++ {
		if !plan.ambient.has(c) {
			continue
		}
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0); err != nil {
			return fmt.Errorf("prctl PR_CAP_AMBIENT_RAISE %s: %w", allCapabilities[c], err)
		}
	}
	return nil
}

// capsetRefusal explains why the kernel refused to go from old to want
// (cap_capset in security/commoncap.c), or returns "".
func capsetRefusal(old capState, bounding capMask, want capState) string {
	if extra := want.permitted &^ old.permitted; extra != 0 {
		return fmt.Sprintf("the runtime itself does not hold %s, so it cannot grant them",
			strings.Join(extra.names(), ", "))
	}
	if extra := want.inheritable &^ (old.inheritable | bounding); extra != 0 {
		return fmt.Sprintf("inheritable capabilities %s are not in the bounding set",
			strings.Join(extra.names(), ", "))
	}
	if !old.effective.has(unix.CAP_SETPCAP) {
		if extra := want.inheritable &^ (old.inheritable | old.permitted); extra != 0 {
			return fmt.Sprintf("inheritable capabilities %s are not in the permitted set",
				strings.Join(extra.names(), ", "))
		}
	}
	if extra := want.effective &^ want.permitted; extra != 0 {
		return fmt.Sprintf("effective capabilities %s are not in the permitted set",
			strings.Join(extra.names(), ", "))
	}
	return ""
}
