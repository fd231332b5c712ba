// Command ctrupdate changes the resources of a running containerd task through
// containerd's Go client, i.e. the Tasks.Update API that Kubernetes' CRI plugin
// uses to resize a container and that ctr 1.6 has no command for. The shim turns
// it into `RUNTIME update --resources - ID`, so this drives nanobox-runc's
// update the way a real client does.
//
//	ctrupdate -address SOCK -namespace NS [-memory BYTES] [-pids N] ID
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/containerd/containerd"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func main() {
	address := flag.String("address", "/run/containerd/containerd.sock", "containerd's gRPC socket")
	namespace := flag.String("namespace", "default", "containerd namespace of the container")
	memory := flag.Int64("memory", 0, "new memory limit in bytes (0: unchanged)")
	pids := flag.Int64("pids", 0, "new pids limit (0: unchanged)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ctrupdate -address SOCK -namespace NS [-memory BYTES] [-pids N] ID")
		os.Exit(2)
	}
	if err := update(*address, *namespace, flag.Arg(0), *memory, *pids); err != nil {
		fmt.Fprintf(os.Stderr, "ctrupdate: %v\n", err)
		os.Exit(1)
	}
}

func update(address, namespace, id string, memory, pids int64) error {
	var res specs.LinuxResources
	if memory > 0 {
		res.Memory = &specs.LinuxMemory{Limit: &memory}
	}
	if pids > 0 {
		res.Pids = &specs.LinuxPids{Limit: pids}
	}
	if res.Memory == nil && res.Pids == nil {
		return errors.New("nothing to update: give -memory or -pids")
	}
	client, err := containerd.New(address, containerd.WithDefaultNamespace(namespace),
		containerd.WithTimeout(10*time.Second))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", address, err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.LoadContainer(ctx, id)
	if err != nil {
		return fmt.Errorf("load container %s: %w", id, err)
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return fmt.Errorf("task of %s: %w", id, err)
	}
	if err := task.Update(ctx, containerd.WithResources(&res)); err != nil {
		return fmt.Errorf("update task %s: %w", id, err)
	}
	return nil
}
