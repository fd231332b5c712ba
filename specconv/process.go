package specconv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

var schedPolicies = map[specs.LinuxSchedulerPolicy]uint32{
	specs.SchedOther:    unix.SCHED_NORMAL,
	specs.SchedFIFO:     unix.SCHED_FIFO,
	specs.SchedRR:       unix.SCHED_RR,
	specs.SchedBatch:    unix.SCHED_BATCH,
	specs.SchedISO:      4, // never in mainline Linux: sched_setattr refuses it
	specs.SchedIdle:     unix.SCHED_IDLE,
	specs.SchedDeadline: unix.SCHED_DEADLINE,
}

var schedFlags = map[specs.LinuxSchedulerFlag]uint64{
	specs.SchedFlagResetOnFork:  unix.SCHED_FLAG_RESET_ON_FORK,
	specs.SchedFlagReclaim:      unix.SCHED_FLAG_RECLAIM,
	specs.SchedFlagDLOverrun:    unix.SCHED_FLAG_DL_OVERRUN,
	specs.SchedFlagKeepPolicy:   unix.SCHED_FLAG_KEEP_POLICY,
	specs.SchedFlagKeepParams:   unix.SCHED_FLAG_KEEP_PARAMS,
	specs.SchedFlagUtilClampMin: unix.SCHED_FLAG_UTIL_CLAMP_MIN,
	specs.SchedFlagUtilClampMax: unix.SCHED_FLAG_UTIL_CLAMP_MAX,
}

var ioPrioClasses = map[specs.IOPriorityClass]int{
	specs.IOPRIO_CLASS_RT:   libbox.IOPrioClassRT,
	specs.IOPRIO_CLASS_BE:   libbox.IOPrioClassBE,
	specs.IOPRIO_CLASS_IDLE: libbox.IOPrioClassIdle,
}

// convertScheduler checks process.scheduler the way runc's validator does
// (and the ranges sched_setattr(2) accepts), so a bad value fails with the
// field named instead of an EINVAL from init.
func convertScheduler(s *specs.Scheduler) (*libbox.Scheduler, error) {
	if s == nil {
		return nil, nil
	}
	policy, ok := schedPolicies[s.Policy]
	if !ok {
		return nil, fmt.Errorf("process.scheduler.policy %q is not one of SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_ISO, SCHED_IDLE, SCHED_DEADLINE", s.Policy)
	}
	if s.Nice < -20 || s.Nice > 19 {
		return nil, fmt.Errorf("process.scheduler.nice %d is out of range -20 to 19", s.Nice)
	}
	realtime := policy == unix.SCHED_FIFO || policy == unix.SCHED_RR
	switch {
	case realtime && (s.Priority < 1 || s.Priority > 99):
		return nil, fmt.Errorf("process.scheduler.priority %d is out of range 1 to 99 for %s", s.Priority, s.Policy)
	case !realtime && s.Priority != 0:
		return nil, fmt.Errorf("process.scheduler.priority can only be set for SCHED_FIFO and SCHED_RR, not %s", s.Policy)
	case policy != unix.SCHED_DEADLINE && (s.Runtime != 0 || s.Deadline != 0 || s.Period != 0):
		return nil, fmt.Errorf("process.scheduler runtime, deadline and period can only be set for SCHED_DEADLINE, not %s", s.Policy)
	}
	out := &libbox.Scheduler{
		Policy:   policy,
		Nice:     s.Nice,
		Priority: uint32(s.Priority),
		Runtime:  s.Runtime,
		Deadline: s.Deadline,
		Period:   s.Period,
	}
	for _, f := range s.Flags {
		bit, ok := schedFlags[f]
		if !ok {
			return nil, fmt.Errorf("process.scheduler.flags: unknown flag %q", f)
		}
		out.Flags |= bit
	}
	return out, nil
}

func convertIOPriority(p *specs.LinuxIOPriority) (*libbox.IOPriority, error) {
	if p == nil {
		return nil, nil
	}
	class, ok := ioPrioClasses[p.Class]
	if !ok {
		return nil, fmt.Errorf("process.ioPriority.class %q is not one of IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE", p.Class)
	}
	if p.Priority < 0 || p.Priority > 7 {
		return nil, fmt.Errorf("process.ioPriority.priority %d is out of range 0 (highest) to 7", p.Priority)
	}
	return &libbox.IOPriority{Class: class, Priority: p.Priority}, nil
}

// convertCPUAffinity parses process.execCPUAffinity. Empty strings mean
// "not set", and nothing set at all is nil.
func convertCPUAffinity(a *specs.CPUAffinity) (*libbox.CPUAffinity, error) {
	if a == nil {
		return nil, nil
	}
	var out libbox.CPUAffinity
	var err error
	if out.Initial, err = ParseCPUList(a.Initial); err != nil {
		return nil, fmt.Errorf("process.execCPUAffinity.initial: %w", err)
	}
	if out.Final, err = ParseCPUList(a.Final); err != nil {
		return nil, fmt.Errorf("process.execCPUAffinity.final: %w", err)
	}
	if out.Initial == nil && out.Final == nil {
		return nil, nil
	}
	return &out, nil
}

// ParseCPUList parses a kernel CPU list ("0-3,7": numbers and inclusive
// ranges, comma-separated) into sorted, distinct CPU numbers; "" is nil.
func ParseCPUList(s string) ([]int, error) {
	return parseIDList(s, "CPU", libbox.MaxCPU)
}

// parseIDList parses a kernel list of numbered things (CPUs, NUMA nodes)
// of at most max; noun names them in errors.
func parseIDList(s, noun string, max int) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	num := func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || strings.HasPrefix(v, "+") {
			return 0, fmt.Errorf("%q is not a %s list like 0-3,7: %q is not a %s number", s, noun, v, noun)
		}
		if n > max {
			return 0, fmt.Errorf("%q: %s %d is above the highest %s number Linux supports (%d)", s, noun, n, noun, max)
		}
		return n, nil
	}
	// A set, not a list: "0-8191,0-8191,..." must not grow memory.
	set := make([]bool, max+1)
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := num(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = num(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("%q is not a %s list: range %s goes backwards", s, noun, part)
			}
		}
		for c := a; c <= b; c++ {
			set[c] = true
		}
	}
	var ids []int
	for c, on := range set {
		if on {
			ids = append(ids, c)
		}
	}
	return ids, nil
}

var personalityDomains = map[specs.LinuxPersonalityDomain]libbox.Personality{
	specs.PerLinux:   libbox.PerLinux,
	specs.PerLinux32: libbox.PerLinux32,
}

// convertPersonality converts linux.personality. The spec defines no
// flags; any given is refused rather than ignored.
func convertPersonality(p *specs.LinuxPersonality) (*libbox.Personality, error) {
	if p == nil {
		return nil, nil
	}
	d, ok := personalityDomains[p.Domain]
	if !ok {
		return nil, fmt.Errorf("linux.personality.domain %q is not one of LINUX, LINUX32", p.Domain)
	}
	if len(p.Flags) > 0 {
		return nil, fmt.Errorf("linux.personality.flags %v: no personality flags are defined", p.Flags)
	}
	return &d, nil
}

var memoryPolicyModes = map[specs.MemoryPolicyModeType]int{
	specs.MpolDefault:            libbox.MPolDefault,
	specs.MpolPreferred:          libbox.MPolPreferred,
	specs.MpolBind:               libbox.MPolBind,
	specs.MpolInterleave:         libbox.MPolInterleave,
	specs.MpolLocal:              libbox.MPolLocal,
	specs.MpolPreferredMany:      libbox.MPolPreferredMany,
	specs.MpolWeightedInterleave: libbox.MPolWeightedInterleave,
}

var memoryPolicyFlags = map[specs.MemoryPolicyFlagType]int{
	specs.MpolFNumaBalancing: libbox.MPolFNumaBalancing,
	specs.MpolFRelativeNodes: libbox.MPolFRelativeNodes,
	specs.MpolFStaticNodes:   libbox.MPolFStaticNodes,
}

// convertMemoryPolicy converts linux.memoryPolicy, checking it the way the
// kernel will.
func convertMemoryPolicy(m *specs.LinuxMemoryPolicy) (*libbox.MemoryPolicy, error) {
	if m == nil {
		return nil, nil
	}
	mode, ok := memoryPolicyModes[m.Mode]
	if !ok {
		modes := strings.Join(sortedKeys(memoryPolicyModes), ", ")
		if m.Mode == "" {
			return nil, fmt.Errorf("linux.memoryPolicy.mode is empty: invalid memory policy mode: set it to one of %s", modes)
		}
		return nil, fmt.Errorf("linux.memoryPolicy.mode %q: invalid memory policy mode: use one of %s", m.Mode, modes)
	}
	out := &libbox.MemoryPolicy{Mode: mode}
	for _, f := range m.Flags {
		bit, ok := memoryPolicyFlags[f]
		if !ok {
			return nil, fmt.Errorf("linux.memoryPolicy.flags: invalid memory policy flag %q: use only %s", f, strings.Join(sortedKeys(memoryPolicyFlags), ", "))
		}
		out.Flags |= bit
	}
	nodes, err := parseIDList(m.Nodes, "node", libbox.MaxNUMANode)
	if err != nil {
		return nil, fmt.Errorf("linux.memoryPolicy.nodes: invalid memory policy nodes: %w", err)
	}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, uint(n))
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("linux.memoryPolicy: %w", err)
	}
	return out, nil
}

func sortedKeys[K ~string, V any](m map[K]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	return keys
}
