package libbox

import (
	"fmt"
	"os"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// Main is the re-exec entry of a program that embeds libbox. Call it first
// in main, before anything else runs:
//
//	func main() {
//		libbox.Main()
//		...
//	}
//
// The runtime starts every sandbox's (and container's) init by executing
// the calling program's own binary again (/proc/self/exe), with the
// environment variable nsenter.EnvInitPipe set; the namespaces were already
// entered by a C constructor linked into every program that imports libbox.
// In that process Main runs the container's init and never returns: it ends
// in execve of the sandboxed program, or exits with status 1 after reporting
// an error to the runtime. Likewise for the child of a Confinement's
// Command, which it confines before executing the program. In any other
// process it returns at once.
//
// Main is the one place where libbox exits the process.
//
// Main also runs the supervisor of a container's network allowlist (the
// binary re-executed as "netproxy", network_linux.go), which exits when
// the container's init does.
func Main() {
	if len(os.Args) == 7 && os.Args[0] == resumeArgv0 {
		// A pooled sandbox's init, after its waiter (waiter_linux.go).
		resumeInit()
	}
	if len(os.Args) > 0 && os.Args[0] == confineArgv0 {
		// A Confinement's Command: confine this process, execute the
		// program (see confine_linux.go).
		runConfined()
	}
	if len(os.Args) >= 2 && os.Args[1] == "netproxy" && os.Getenv(envNetSupervisor) != "" {
		os.Exit(netSupervisorMain())
	}
	if os.Getenv(nsenter.EnvInitPipe) == "" || len(os.Args) < 2 || os.Args[1] != "init" {
		return
	}
	if err := Init(); err != nil {
		fmt.Fprintln(os.Stderr, "nanobox-runc init:", err)
	}
	os.Exit(1)
}
