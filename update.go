package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

var updateCommand = &cli.Command{
	Name:      "update",
	Usage:     "change the resource limits of a created, running or paused container",
	ArgsUsage: "<container-id>",
	Description: `Either --resources, with the linux.resources object of the OCI runtime
spec as JSON (podman passes a file, containerd "-" for stdin), or the
flags. Only the settings given change; device rules cannot be updated.
Sizes take a k, m, g or t suffix (powers of 1024); -1 lifts a limit.

--allow-net, --deny-net, --allow-private-targets and --add-host change the
rules of a container's (or, with --root, a running sandbox's) network
allowlist, for new connections; see docs/network.md.`,
	Flags: append([]cli.Flag{
		&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: `file with linux.resources JSON, or "-" for stdin`},
		&cli.StringFlag{Name: "memory", Usage: "memory limit in bytes (-1: unlimited)"},
		&cli.StringFlag{Name: "memory-swap", Usage: "memory plus swap limit in bytes (-1: unlimited swap)"},
		&cli.Int64Flag{Name: "pids-limit", Usage: "maximum number of processes (0 or -1: unlimited)"},
		&cli.Int64Flag{Name: "cpu-quota", Usage: "CPU time in microseconds per period (-1: unlimited)"},
		&cli.Uint64Flag{Name: "cpu-period", Usage: "CPU quota period in microseconds"},
		&cli.Uint64Flag{Name: "cpu-shares", Usage: "relative CPU weight (cgroup v1 shares; converted to cpu.weight on v2)"},
		&cli.StringFlag{Name: "cpuset-cpus", Usage: `CPUs the container may run on, e.g. "0-2,4"`},
	}, netUpdateFlags...),
	Action: func(c *cli.Context) error {
		if err := checkArgs(c, 1, 1); err != nil {
			return err
		}
		if netUpdateGiven(c) {
			ctr, err := loadContainer(c)
			if err != nil {
				return err
			}
			if err := updateNetwork(c, ctr); err != nil {
				return err
			}
			if !resourcesGiven(c) {
				return nil
			}
		}
		r, err := updateRequest(c)
		if err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		res, err := specconv.UpdateResources(ctr.Config().Resources, r)
		if err != nil {
			return err
		}
		return ctr.Update(res)
	},
}

// resourcesGiven: update has something to change in linux.resources.
func resourcesGiven(c *cli.Context) bool {
	if c.String("resources") != "" {
		return true
	}
	for _, f := range updateFlags {
		if c.IsSet(f) {
			return true
		}
	}
	return false
}

// updateFlags are the flags that stand for fields of linux.resources.
var updateFlags = []string{"memory", "memory-swap", "pids-limit", "cpu-quota", "cpu-period", "cpu-shares", "cpuset-cpus"}

// updateRequest reads what update is to change, as linux.resources.
func updateRequest(c *cli.Context) (*specs.LinuxResources, error) {
	var given []string
	for _, f := range updateFlags {
		if c.IsSet(f) {
			given = append(given, "--"+f)
		}
	}
	if path := c.String("resources"); path != "" {
		if len(given) > 0 {
			return nil, fmt.Errorf("--resources and %s cannot be combined: put everything in the JSON", strings.Join(given, ", "))
		}
		return readResources(path)
	}
	if len(given) == 0 {
		return nil, errors.New("nothing to update: give --resources FILE or at least one limit flag (see update --help)")
	}
	r := &specs.LinuxResources{}
	for _, f := range []struct {
		name string
		dst  func(int64)
	}{
		{"memory", func(v int64) { mem(r).Limit = &v }},
		{"memory-swap", func(v int64) { mem(r).Swap = &v }},
	} {
		if !c.IsSet(f.name) {
			continue
		}
		v, err := parseSize(c.String(f.name))
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", f.name, err)
		}
		f.dst(v)
	}
	if c.IsSet("pids-limit") {
		v := c.Int64("pids-limit")
		r.Pids = &specs.LinuxPids{Limit: &v}
	}
	if c.IsSet("cpu-quota") {
		v := c.Int64("cpu-quota")
		cpu(r).Quota = &v
	}
	if c.IsSet("cpu-period") {
		v := c.Uint64("cpu-period")
		cpu(r).Period = &v
	}
	if c.IsSet("cpu-shares") {
		v := c.Uint64("cpu-shares")
		cpu(r).Shares = &v
	}
	if c.IsSet("cpuset-cpus") {
		cpu(r).Cpus = c.String("cpuset-cpus")
	}
	return r, nil
}

func mem(r *specs.LinuxResources) *specs.LinuxMemory {
	if r.Memory == nil {
		r.Memory = &specs.LinuxMemory{}
	}
	return r.Memory
}

func cpu(r *specs.LinuxResources) *specs.LinuxCPU {
	if r.CPU == nil {
		r.CPU = &specs.LinuxCPU{}
	}
	return r.CPU
}

// readResources decodes linux.resources JSON from a file or stdin ("-").
func readResources(path string) (*specs.LinuxResources, error) {
	var in io.Reader = os.Stdin
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--resources: %w", err)
		}
		defer f.Close()
		in, name = f, path
	}
	var r specs.LinuxResources
	if err := json.NewDecoder(in).Decode(&r); err != nil {
		return nil, fmt.Errorf("--resources: decode linux.resources JSON from %s: %w", name, err)
	}
	return &r, nil
}

// parseSize reads a byte count with an optional k, m, g or t suffix
// (powers of 1024, an optional trailing "b" or "ib"), or -1.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "-1" {
		return -1, nil
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("kmgt", t[n-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, with an optional k, m, g or t suffix, or -1)", s)
	}
	return v * mult, nil
}
