package libbox

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A small RLIMIT_AS (the degraded memory limit, or an OCI config's) is set
// right before execve: set earlier, it is below the Go runtime's own
// address space, and init aborted now and then ("fatal error: runtime:
// cannot allocate memory"), about one start in twenty-five at 64 MiB.
func TestSandboxSmallAddressSpaceLimit(t *testing.T) {
	sb := newTestSandbox(t, Options{})
	// White-box: the rlimit a degraded memory limit plans, whatever this
	// host's cgroup can do.
	sb.plan.rlimits = append(sb.plan.rlimits, Rlimit{Type: unix.RLIMIT_AS, Soft: uint64(64 * MB), Hard: uint64(64 * MB)})
	for i := 0; i < 40; i++ {
		res, err := sb.Run(context.Background(), "/bin/sh", "-c", "ulimit -v")
		if err != nil {
			t.Fatalf("start %d: %v\n%s", i, err, res.Stderr)
		}
		if got := strings.TrimSpace(string(res.Stdout)); res.ExitCode != 0 || got != "65536" {
			t.Fatalf("start %d: exit %d, ulimit -v %q (stderr %s), want 65536 KiB", i, res.ExitCode, got, res.Stderr)
		}
	}
}
