package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:      "events",
		Usage:     "print a container's resource usage and OOM events as JSON, one object per line",
		ArgsUsage: "<container-id>",
		Description: `runc's format: {"type":"stats","id":ID,"data":{cpu, memory, pids, blkio,
	hugetlb}} every --interval, and {"type":"oom","id":ID} when the kernel's
	OOM killer kills a process of the container (at once, if it already has).
	The stream ends when the container stops. --stats prints one stats event
	and exits.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stats", Usage: "print the statistics once and exit"},
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "time between stats events"},
		},
		Action: func(c *cli.Context) error {
			if err := checkArgs(c, 1, 1); err != nil {
				return err
			}
			interval := c.Duration("interval")
			if interval <= 0 {
				return fmt.Errorf("--interval %s: must be positive", interval)
			}
			ctr, err := loadContainer(c)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(os.Stdout)
			if c.Bool("stats") {
				return writeStats(ctr, enc, new(bool))
			}
			return streamEvents(ctr, interval, enc)
		},
	}
}

// oomPoll is how often the OOM kill counter is read: often enough that an
// "oom" event follows the kill closely, for the price of one small read.
const oomPoll = 200 * time.Millisecond

func streamEvents(ctr *libbox.Container, interval time.Duration, enc *json.Encoder) error {
	var oomSeen uint64
	checkOOM := func() error {
		n, err := ctr.OOMKillCount()
		if err != nil || n <= oomSeen {
			return err
		}
		oomSeen = n
		return enc.Encode(event{Type: "oom", ID: ctr.ID()})
	}
	warned := false
	emitStats := func() error {
		if ctr.Status() == libbox.Stopped {
			return nil // the loop ends at the next poll
		}
		err := writeStats(ctr, enc, &warned)
		var encErr *encodeError
		if errors.As(err, &encErr) {
			return err
		}
		if err != nil {
			logrus.Warn(err)
		}
		return nil
	}
	if err := checkOOM(); err != nil {
		return err
	}
	if err := emitStats(); err != nil {
		return err
	}
	stats := time.NewTicker(interval)
	defer stats.Stop()
	poll := time.NewTicker(oomPoll)
	defer poll.Stop()
	for {
		select {
		case <-stats.C:
			if err := emitStats(); err != nil {
				return err
			}
		case <-poll.C:
			if err := checkOOM(); err != nil {
				return err
			}
			if ctr.Status() == libbox.Stopped {
				return nil
			}
		}
	}
}

// warnOOM tells the user of a foreground run that the OOM killer fired in
// the container: an exit status of 137 alone does not say why. runc says
// nothing; the count is also in `state` (annotation) and `events`.
func warnOOM(ctr *libbox.Container) {
	n, err := ctr.OOMKillCount()
	if err != nil || n == 0 {
		return
	}
	msg := fmt.Sprintf("container %s: the kernel's OOM killer killed %d process(es) in it", ctr.ID(), n)
	if r := ctr.Config().Resources; r != nil && r.Memory > 0 {
		msg += fmt.Sprintf(" (memory limit %d MiB)", r.Memory>>20)
	}
	if logFile != nil {
		logrus.Warn(msg)
	}
	fmt.Fprintln(os.Stderr, "nanobox-runc: warning:", msg)
}

// The event types below are runc's (types/events.go), so that tools reading
// `runc events` read these too.

type event struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Data any    `json:"data,omitempty"`
}

type stats struct {
	CPU     cpuStats           `json:"cpu"`
	CPUSet  cpusetStats        `json:"cpuset"`
	Memory  memoryStats        `json:"memory"`
	Pids    pidsStats          `json:"pids"`
	Blkio   blkioStats         `json:"blkio"`
	Hugetlb map[string]hugetlb `json:"hugetlb"`
	// IntelRdt is always empty: nanobox-runc does not implement
	// linux.intelRdt (runc prints {} where resctrl is not mounted).
	IntelRdt struct{} `json:"intel_rdt"`
	// NetworkInterfaces: runc lists the veth pairs it made itself; an OCI
	// container has none, and runc prints null, as this does.
	NetworkInterfaces []struct{} `json:"network_interfaces"`
}

type cpuStats struct {
	Usage      cpuUsage   `json:"usage,omitempty"`
	Throttling throttling `json:"throttling,omitempty"`
	// PSI (cgroup v2 with CONFIG_PSI) is the cgroup's cpu.pressure.
	PSI *psiStats `json:"psi,omitempty"`
}

// psiStats is a pressure file's two lines, both always printed (as runc
// 1.3 does: its cgroups library's omitempty keeps a zero struct; v0.1.0's
// omitzero would print {} for a cgroup under no pressure).
type psiStats struct {
	Some cgroups.PSIData `json:"some"`
	Full cgroups.PSIData `json:"full"`
}

func convertPSI(p *cgroups.PSIStats) *psiStats {
	if p == nil {
		return nil
	}
	return &psiStats{Some: p.Some, Full: p.Full}
}

type cpusetStats struct {
	CPUs                  []uint16 `json:"cpus,omitempty"`
	CPUExclusive          uint64   `json:"cpu_exclusive"`
	Mems                  []uint16 `json:"mems,omitempty"`
	MemHardwall           uint64   `json:"mem_hardwall"`
	MemExclusive          uint64   `json:"mem_exclusive"`
	MemoryMigrate         uint64   `json:"memory_migrate"`
	MemorySpreadPage      uint64   `json:"memory_spread_page"`
	MemorySpreadSlab      uint64   `json:"memory_spread_slab"`
	MemoryPressure        uint64   `json:"memory_pressure"`
	SchedLoadBalance      uint64   `json:"sched_load_balance"`
	SchedRelaxDomainLevel int64    `json:"sched_relax_domain_level"`
}

// cpuUsage is in nanoseconds.
type cpuUsage struct {
	Total        uint64   `json:"total,omitempty"`
	Percpu       []uint64 `json:"percpu,omitempty"`
	PercpuKernel []uint64 `json:"percpu_kernel,omitempty"`
	PercpuUser   []uint64 `json:"percpu_user,omitempty"`
	Kernel       uint64   `json:"kernel"`
	User         uint64   `json:"user"`
}

type throttling struct {
	Periods          uint64 `json:"periods,omitempty"`
	ThrottledPeriods uint64 `json:"throttledPeriods,omitempty"`
	ThrottledTime    uint64 `json:"throttledTime,omitempty"`
}

type memoryEntry struct {
	Limit   uint64 `json:"limit"`
	Usage   uint64 `json:"usage,omitempty"`
	Max     uint64 `json:"max,omitempty"`
	Failcnt uint64 `json:"failcnt"`
}

type memoryStats struct {
	Cache     uint64            `json:"cache,omitempty"`
	Usage     memoryEntry       `json:"usage,omitempty"`
	Swap      memoryEntry       `json:"swap,omitempty"`
	Kernel    memoryEntry       `json:"kernel,omitempty"`
	KernelTCP memoryEntry       `json:"kernelTCP,omitempty"`
	Raw       map[string]uint64 `json:"raw,omitempty"`
	PSI       *psiStats         `json:"psi,omitempty"`
}

type pidsStats struct {
	Current uint64 `json:"current,omitempty"`
	Limit   uint64 `json:"limit,omitempty"`
}

type blkioEntry struct {
	Major uint64 `json:"major,omitempty"`
	Minor uint64 `json:"minor,omitempty"`
	Op    string `json:"op,omitempty"`
	Value uint64 `json:"value,omitempty"`
}

type blkioStats struct {
	IoServiceBytesRecursive []blkioEntry `json:"ioServiceBytesRecursive,omitempty"`
	IoServicedRecursive     []blkioEntry `json:"ioServicedRecursive,omitempty"`
	IoQueuedRecursive       []blkioEntry `json:"ioQueueRecursive,omitempty"`
	IoServiceTimeRecursive  []blkioEntry `json:"ioServiceTimeRecursive,omitempty"`
	IoWaitTimeRecursive     []blkioEntry `json:"ioWaitTimeRecursive,omitempty"`
	IoMergedRecursive       []blkioEntry `json:"ioMergedRecursive,omitempty"`
	IoTimeRecursive         []blkioEntry `json:"ioTimeRecursive,omitempty"`
	SectorsRecursive        []blkioEntry `json:"sectorsRecursive,omitempty"`
	PSI                     *psiStats    `json:"psi,omitempty"`
}

type hugetlb struct {
	Usage   uint64 `json:"usage,omitempty"`
	Max     uint64 `json:"max,omitempty"`
	Failcnt uint64 `json:"failcnt"`
}

// encodeError is a failure to write an event: it ends the stream.
type encodeError struct{ err error }

func (e *encodeError) Error() string { return "write event: " + e.err.Error() }
func (e *encodeError) Unwrap() error { return e.err }

// writeStats measures ctr and writes one stats event. A container without
// a cgroup (created rootless on cgroup v1) has empty statistics, as in
// runc, whose fs manager leaves out the hierarchies it could not join and
// reports zeros: the event is written all the same, then a warning on
// stderr says why (once, while *warned is false). After the event, so
// that the event stays the first line when both streams are read together
// (as runc's events.bats reads them).
func writeStats(ctr *libbox.Container, enc *json.Encoder, warned *bool) error {
	if ctr.Status() == libbox.Stopped {
		return fmt.Errorf("container %s %w", ctr.ID(), libbox.ErrNotRunning)
	}
	st, err := ctr.Stats()
	noCgroup := errors.Is(err, libbox.ErrNoCgroup)
	if noCgroup {
		st, err = cgroups.NewStats(), nil
	}
	if err != nil {
		return err
	}
	if err := enc.Encode(&event{Type: "stats", ID: ctr.ID(), Data: convertStats(st)}); err != nil {
		return &encodeError{err}
	}
	if noCgroup && !*warned {
		logrus.Warnf("container %s has no cgroup (an unprivileged user without a delegated cgroup v2 subtree created it): its statistics are empty", ctr.ID())
		*warned = true
	}
	return nil
}

func convertStats(cg *cgroups.Stats) *stats {
	if cg == nil {
		return nil
	}
	mem := func(d cgroups.MemoryData) memoryEntry {
		return memoryEntry{Limit: d.Limit, Usage: d.Usage, Max: d.MaxUsage, Failcnt: d.Failcnt}
	}
	blk := func(in []cgroups.BlkioStatEntry) []blkioEntry {
		out := make([]blkioEntry, 0, len(in))
		for _, e := range in {
			out = append(out, blkioEntry{Major: e.Major, Minor: e.Minor, Op: e.Op, Value: e.Value})
		}
		return out
	}
	u := cg.CpuStats.CpuUsage
	t := cg.CpuStats.ThrottlingData
	s := &stats{
		CPU: cpuStats{
			Usage: cpuUsage{
				Total: u.TotalUsage, Percpu: u.PercpuUsage, PercpuKernel: u.PercpuUsageInKernelmode,
				PercpuUser: u.PercpuUsageInUsermode, Kernel: u.UsageInKernelmode, User: u.UsageInUsermode,
			},
			Throttling: throttling{Periods: t.Periods, ThrottledPeriods: t.ThrottledPeriods, ThrottledTime: t.ThrottledTime},
			PSI:        convertPSI(cg.CpuStats.PSI),
		},
		CPUSet: cpusetStats(cg.CPUSetStats),
		Memory: memoryStats{
			Cache:     cg.MemoryStats.Cache,
			Usage:     mem(cg.MemoryStats.Usage),
			Swap:      mem(cg.MemoryStats.SwapUsage),
			Kernel:    mem(cg.MemoryStats.KernelUsage),
			KernelTCP: mem(cg.MemoryStats.KernelTCPUsage),
			Raw:       cg.MemoryStats.Stats,
			PSI:       convertPSI(cg.MemoryStats.PSI),
		},
		Pids: pidsStats{Current: cg.PidsStats.Current, Limit: cg.PidsStats.Limit},
		Blkio: blkioStats{
			IoServiceBytesRecursive: blk(cg.BlkioStats.IoServiceBytesRecursive),
			IoServicedRecursive:     blk(cg.BlkioStats.IoServicedRecursive),
			IoQueuedRecursive:       blk(cg.BlkioStats.IoQueuedRecursive),
			IoServiceTimeRecursive:  blk(cg.BlkioStats.IoServiceTimeRecursive),
			IoWaitTimeRecursive:     blk(cg.BlkioStats.IoWaitTimeRecursive),
			IoMergedRecursive:       blk(cg.BlkioStats.IoMergedRecursive),
			IoTimeRecursive:         blk(cg.BlkioStats.IoTimeRecursive),
			SectorsRecursive:        blk(cg.BlkioStats.SectorsRecursive),
			PSI:                     convertPSI(cg.BlkioStats.PSI),
		},
		Hugetlb: make(map[string]hugetlb, len(cg.HugetlbStats)),
	}
	for size, h := range cg.HugetlbStats {
		s.Hugetlb[size] = hugetlb{Usage: h.Usage, Max: h.MaxUsage, Failcnt: h.Failcnt}
	}
	return s
}
