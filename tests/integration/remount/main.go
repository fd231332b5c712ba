// Command remount calls libbox's Container.RemountMount, which the CLI does
// not offer, for livemount.bats: remount ROOT ID TARGET ro|rw. Its error,
// if any, goes to stderr and the exit status is 1.
package main

import (
	"fmt"
	"os"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func main() {
	libbox.Main()
	if len(os.Args) != 5 || (os.Args[4] != "ro" && os.Args[4] != "rw") {
		fmt.Fprintln(os.Stderr, "usage: remount ROOT ID TARGET ro|rw")
		os.Exit(2)
	}
	rt := &libbox.Runtime{Root: os.Args[1], Rootless: os.Geteuid() != 0}
	c, err := rt.Load(os.Args[2])
	if err == nil {
		err = c.RemountMount(os.Args[3], os.Args[4] == "ro")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "remount:", err)
		os.Exit(1)
	}
}
