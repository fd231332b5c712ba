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
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

func updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "change the resource limits of a created, running or paused container",
		ArgsUsage: "<container-id>",
		Description: `Either --resources, with the linux.resources object of the OCI runtime
	spec as JSON (podman passes a file, containerd "-" for stdin), or the
	flags (runc's set and spellings; they may also follow the id). Only the
	settings given change; device rules cannot be updated. Sizes take a k, m,
	g, t or p suffix (powers of 1024); -1 lifts a limit.

	--allow-net, --deny-net, --allow-private-targets and --add-host change the
	rules of a container's (or, with --root, a running sandbox's) network
	allowlist, for new connections; see docs/network.md.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: `file with linux.resources JSON, or "-" for stdin`},
			&cli.StringFlag{Name: "blkio-weight", Usage: "block I/O weight, 10 to 1000"},
			&cli.StringFlag{Name: "cpu-period", Usage: "CPU CFS period in microseconds (0: the system default)"},
			&cli.StringFlag{Name: "cpu-quota", Usage: "CPU time in microseconds per period (-1: unlimited)"},
			&cli.StringFlag{Name: "cpu-burst", Usage: "CPU time in microseconds a period may borrow from earlier ones"},
			&cli.StringFlag{Name: "cpu-share", Aliases: []string{"cpu-shares"}, Usage: "relative CPU weight (cgroup v1 shares; converted to cpu.weight on v2)"},
			&cli.StringFlag{Name: "cpu-rt-period", Usage: "CPU realtime period in microseconds"},
			&cli.StringFlag{Name: "cpu-rt-runtime", Usage: "CPU realtime time in microseconds per realtime period"},
			&cli.StringFlag{Name: "cpu-idle", Usage: "1: the cgroup's tasks are SCHED_IDLE; 0: the default"},
			&cli.StringFlag{Name: "cpuset-cpus", Usage: `CPUs the container may run on, e.g. "0-2,4"`},
			&cli.StringFlag{Name: "cpuset-mems", Usage: "memory nodes the container may use"},
			&cli.StringFlag{Name: "memory", Usage: "memory limit in bytes (-1: unlimited)"},
			&cli.StringFlag{Name: "memory-reservation", Usage: "memory soft limit in bytes"},
			&cli.StringFlag{Name: "memory-swap", Usage: "memory plus swap limit in bytes (-1: unlimited swap)"},
			&cli.StringFlag{Name: "pids-limit", Usage: "maximum number of processes (-1: unlimited; 0 is taken as 1, as in runc)"},
			&cli.StringFlag{Name: "l3-cache-schema", Usage: "Intel RDT/CAT L3 cache schema (not supported)"},
			&cli.StringFlag{Name: "mem-bw-schema", Usage: "Intel RDT/MBA memory bandwidth schema (not supported)"},
			// Obsolete in runc too: accepted, ignored with a warning.
			&cli.StringFlag{Name: "kernel-memory", Hidden: true},
			&cli.StringFlag{Name: "kernel-memory-tcp", Hidden: true},
		}, netUpdateFlags()...),
		Action: withContainer(1, 1, func(c *cli.Context, ctr *libbox.Container) error {
			if netUpdateGiven(c) {
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
			res, err := specconv.UpdateResources(ctr.Config().Resources, r)
			if err != nil {
				return err
			}
			return ctr.Update(res)
		}),
	}
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
var updateFlags = []string{
	"blkio-weight", "cpu-period", "cpu-quota", "cpu-burst", "cpu-share", "cpu-rt-period", "cpu-rt-runtime",
	"cpu-idle", "cpuset-cpus", "cpuset-mems", "memory", "memory-reservation", "memory-swap", "pids-limit",
}

// updateRequest reads what update is to change, as linux.resources.
func updateRequest(c *cli.Context) (*specs.LinuxResources, error) {
	for _, f := range []string{"l3-cache-schema", "mem-bw-schema"} {
		if c.IsSet(f) {
			return nil, fmt.Errorf("--%s: Intel RDT is not supported by this runtime (linux.intelRdt neither)", f)
		}
	}
	for _, f := range []string{"kernel-memory", "kernel-memory-tcp"} {
		if c.IsSet(f) {
			logrus.Warnf("--%s is ignored: kernel memory limits are obsolete (runc ignores them too)", f)
		}
	}
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
		r, err := readResources(path)
		if err != nil {
			return nil, err
		}
		return idleWithoutShares(r), nil
	}
	if len(given) == 0 {
		if c.IsSet("kernel-memory") || c.IsSet("kernel-memory-tcp") {
			return &specs.LinuxResources{}, nil
		}
		return nil, errors.New("nothing to update: give --resources FILE or at least one limit flag (see update --help)")
	}
	r := &specs.LinuxResources{}
	var err error
	set := func(name string, parse func(string) error) {
		if err != nil || !c.IsSet(name) {
			return
		}
		if perr := parse(c.String(name)); perr != nil {
			err = fmt.Errorf("--%s: %w", name, perr)
		}
	}
	size := func(dst **int64) func(string) error {
		return func(s string) error {
			v, err := parseSize(s)
			*dst = &v
			return err
		}
	}
	u64 := func(dst **uint64) func(string) error {
		return func(s string) error {
			v, err := strconv.ParseUint(s, 10, 64)
			*dst = &v
			return numErr(s, err)
		}
	}
	i64 := func(dst **int64) func(string) error {
		return func(s string) error {
			v, err := strconv.ParseInt(s, 10, 64)
			*dst = &v
			return numErr(s, err)
		}
	}
	set("memory", size(&mem(r).Limit))
	set("memory-reservation", size(&mem(r).Reservation))
	set("memory-swap", size(&mem(r).Swap))
	set("cpu-period", u64(&cpu(r).Period))
	set("cpu-quota", i64(&cpu(r).Quota))
	set("cpu-burst", u64(&cpu(r).Burst))
	set("cpu-share", u64(&cpu(r).Shares))
	set("cpu-rt-period", u64(&cpu(r).RealtimePeriod))
	set("cpu-rt-runtime", i64(&cpu(r).RealtimeRuntime))
	set("cpu-idle", i64(&cpu(r).Idle))
	set("cpuset-cpus", func(s string) error { cpu(r).Cpus = s; return nil })
	set("cpuset-mems", func(s string) error { cpu(r).Mems = s; return nil })
	set("pids-limit", func(s string) error {
		var v *int64
		err := i64(&v)(s)
		r.Pids = &specs.LinuxPids{Limit: v}
		return err
	})
	set("blkio-weight", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 16)
		if err != nil || v < 10 || v > 1000 {
			return fmt.Errorf("%q is not a weight from 10 to 1000", s)
		}
		w := uint16(v)
		r.BlockIO = &specs.LinuxBlockIO{Weight: &w}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// As runc: lifting the memory limit without a word on swap lifts
	// both (cgroup v1 would refuse a swap limit below an unlimited memory).
	if m := r.Memory; m != nil && m.Limit != nil && *m.Limit == -1 && m.Swap == nil {
		unlimited := int64(-1)
		m.Swap = &unlimited
	}
	return idleWithoutShares(r), nil
}

// idleWithoutShares is runc's fix-up for an update of cpu.idle that says
// nothing of the shares: they are unset (0, not written), since the kernel
// refuses cpu.shares (v1) and cpu.weight (v2) of an idle cgroup, and the
// container's config still holds the shares it was created with, which
// would be written back first.
func idleWithoutShares(r *specs.LinuxResources) *specs.LinuxResources {
	if c := r.CPU; c != nil && c.Idle != nil && c.Shares == nil {
		var zero uint64
		c.Shares = &zero
	}
	return r
}

func numErr(s string, err error) error {
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	return nil
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

// parseSize reads a byte count as runc does (docker's RAMInBytes): a
// number, possibly with a fraction, and an optional k, m, g, t or p suffix
// (powers of 1024, with an optional "b" or "ib"), or -1.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "-1" {
		return -1, nil
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	mult := float64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("kmgtp", t[n-1]); i >= 0 {
			mult = float64(uint64(1) << (10 * (i + 1)))
			t = strings.TrimSpace(t[:n-1])
		}
	}
	bad := fmt.Errorf("%q is not a size (bytes, with an optional k, m, g, t or p suffix, or -1)", s)
	if t == "" || strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }) >= 0 {
		return 0, bad
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v*mult >= 1<<63 {
		return 0, bad
	}
	return int64(v * mult), nil
}
