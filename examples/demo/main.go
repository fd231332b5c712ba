// Command demo runs one program in a sandbox from Go: hello from python3
// when the host has it, from echo otherwise, and what the report says.
//
//	go run ./examples/demo
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func main() {
	// First of all: the runtime starts each sandbox's init by running this
	// binary again, and Main is where that copy does its work.
	libbox.Main()

	sb, err := libbox.New(libbox.Options{
		Limits: libbox.Limits{WallTime: 30 * time.Second, Output: libbox.MB},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	res, err := sb.Run(ctx, "/usr/bin/python3", "-c", "print('hello from python in a sandbox')")
	if errors.Is(err, libbox.ErrProgramNotFound) {
		res, err = sb.Run(ctx, "/bin/echo", "hello from echo in a sandbox (no python3 here)")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	fmt.Print(string(res.Stdout))
	r := res.Report
	fmt.Printf("status %s, exit %d, wall %s, cpu %s, peak memory %d KiB (%s)\n",
		r.Status, r.ExitCode, r.WallTime.Round(time.Microsecond), r.CPUTime().Round(time.Microsecond), r.PeakMemory/1024, r.PeakMemorySource)
	for name, l := range r.Limits {
		fmt.Printf("limit %s: %s by %s\n", name, l.Status, l.Mechanism)
	}
}
