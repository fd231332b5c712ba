package libbox

import (
	"os"

	"github.com/moby/sys/userns"
)

// InUserNS reports whether this process runs in a user namespace other than
// the host's initial one, whose uid_map maps every id onto itself. Root
// there (rootless podman runs its runtime so) is not root on the host: the
// host's cgroups and devices stay out of its reach.
// It is read once per process, and shared with the cgroup library's own
// check (moby/sys/userns caches it): every create as root asks.
func InUserNS() bool { return userns.RunningInUserNS() }

// hostRootless: this process is not root on the host: an unprivileged
// user, or uid 0 of a user namespace. The sandbox works as for a rootless
// caller then (its own user namespace mapping the caller's ids, cgroups only
// where delegated).
func hostRootless() bool {
	return os.Geteuid() != 0 || InUserNS()
}

// cgroupRootless: the cgroup code works as for an unprivileged runtime
// (devices left alone, a cgroup it may not make is done without when no
// limit needs it). That is a rootless runtime, and root in a user namespace,
// as runc's rootless cgroup manager is for both by default.
func (r *Runtime) cgroupRootless() bool {
	return r.Rootless || (os.Geteuid() == 0 && InUserNS())
}
