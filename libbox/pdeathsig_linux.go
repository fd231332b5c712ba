package libbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// setParentDeathSignal asks the kernel to send sig to the calling process
// when the thread that created it exits (PR_SET_PDEATHSIG); 0 does nothing.
// A container's init is a child of the runtime's caller (CLONE_PARENT), so
// this ties a sandbox's life to the program that runs it: if that program is
// killed, init is killed, and with it (pid 1) its whole pid namespace.
//
// The setting is cleared when the effective or filesystem ids change, so
// init sets it again after its credentials are final. Either time it is
// followed by a message to the parent over the sync socket, which fails if
// the parent died in between: no window is left in which init outlives it
// unnoticed.
func setParentDeathSignal(sig int) error {
	if sig == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_PDEATHSIG %d: %w", sig, err)
	}
	return nil
}
