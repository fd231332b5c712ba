package specconv

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// Resources converts linux.resources for a new container. Values that mean
// "unlimited" (-1, or a negative pids limit) are dropped, since a new cgroup
// starts unlimited: they are not limits, and an unprivileged caller without
// a cgroup can still run such a config. nil in, nil out.
func Resources(r *specs.LinuxResources, warnf func(string, ...any)) (*cgroups.Resources, error) {
	if r == nil {
		return nil, nil
	}
	if warnf == nil {
		warnf = func(string, ...any) {}
	}
	out := &cgroups.Resources{}
	for i, d := range r.Devices {
		rule, err := deviceRule(d)
		if err != nil {
			return nil, fmt.Errorf("linux.resources.devices[%d]: %w", i, err)
		}
		out.Devices = append(out.Devices, rule)
	}
	if err := applyResources(out, r, true, warnf); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateResources returns cur with the settings present in r applied, for
// `update` (runc's --resources JSON, or the flags turned into it). Unlike
// Resources, -1 is kept: it lifts a limit. Device rules cannot be changed
// after create and are ignored, as runc does.
func UpdateResources(cur *cgroups.Resources, r *specs.LinuxResources) (*cgroups.Resources, error) {
	out := &cgroups.Resources{}
	if cur != nil {
		*out = *cur
		out.Unified = maps.Clone(cur.Unified)
	}
	if r == nil {
		return out, nil
	}
	if err := applyResources(out, r, false, func(string, ...any) {}); err != nil {
		return nil, err
	}
	return out, nil
}

// applyResources sets in out every field r carries, validating it; create
// drops the "unlimited" values.
func applyResources(out *cgroups.Resources, r *specs.LinuxResources, create bool, warnf func(string, ...any)) error {
	v2 := host.cgroup2Unified()
	keep := func(v int64) bool { return !create || v != -1 }
	if m := r.Memory; m != nil {
		if m.Limit != nil && keep(*m.Limit) {
			out.Memory = *m.Limit
		}
		if m.Reservation != nil && keep(*m.Reservation) {
			out.MemoryReservation = *m.Reservation
		}
		if m.Swap != nil && keep(*m.Swap) {
			out.MemorySwap = *m.Swap
		}
		for _, v := range []int64{out.Memory, out.MemoryReservation, out.MemorySwap} {
			if v < -1 {
				return fmt.Errorf("linux.resources.memory: %d is not a size in bytes (-1 means unlimited)", v)
			}
		}
		if out.Memory > 0 && out.MemorySwap > 0 && out.MemorySwap < out.Memory {
			return fmt.Errorf("linux.resources.memory.swap %d is below the limit %d: swap is the limit for memory plus swap, so raise it with the limit (update --memory-swap)", out.MemorySwap, out.Memory)
		}
		if m.Swappiness != nil && *m.Swappiness != ^uint64(0) { // -1 as uint64 is "not set" (docker)
			if *m.Swappiness > 100 {
				return fmt.Errorf("linux.resources.memory.swappiness %d is not in 0-100", *m.Swappiness)
			}
			if v2 {
				warnf("linux.resources.memory.swappiness ignored: cgroup v2 has no per-cgroup swappiness")
			} else {
				out.MemorySwappiness = m.Swappiness
			}
		}
		if m.DisableOOMKiller != nil {
			switch {
			case !*m.DisableOOMKiller:
				out.OomKillDisable = false
			case v2:
				// Not enforcing it can only make the container
				// easier to kill, never give it more.
				warnf("linux.resources.memory.disableOOMKiller ignored: cgroup v2 cannot disable the OOM killer")
			default:
				out.OomKillDisable = true
			}
		}
		if m.Kernel != nil || m.KernelTCP != nil {
			warnf("linux.resources.memory.kernel and kernelTCP are ignored: kernel memory limits are obsolete since Linux 5.4")
		}
		if m.CheckBeforeUpdate != nil {
			out.MemoryCheckBeforeUpdate = *m.CheckBeforeUpdate
		}
	}
	if c := r.CPU; c != nil {
		if c.Shares != nil {
			out.CpuShares = *c.Shares
		}
		if c.Quota != nil && keep(*c.Quota) && *c.Quota != 0 {
			if *c.Quota < -1 {
				return fmt.Errorf("linux.resources.cpu.quota %d: use a positive number of microseconds, or -1 for no limit", *c.Quota)
			}
			out.CpuQuota = *c.Quota
		}
		if c.Burst != nil {
			out.CpuBurst = c.Burst
		}
		if c.Period != nil {
			out.CpuPeriod = *c.Period
		}
		if c.RealtimeRuntime != nil {
			out.CpuRtRuntime = *c.RealtimeRuntime
		}
		if c.RealtimePeriod != nil {
			out.CpuRtPeriod = *c.RealtimePeriod
		}
		if c.Cpus != "" {
			out.CpusetCpus = c.Cpus
		}
		if c.Mems != "" {
			out.CpusetMems = c.Mems
		}
		if c.Idle != nil {
			out.CPUIdle = c.Idle
		}
	}
	if p := r.Pids; p != nil && p.Limit != nil {
		// A negative limit is "no limit". 0 is taken as 1, as runc does
		// (systemd's TasksMax cannot be 0, and runc's cgroupfs driver
		// follows it): pids.max 1, not unlimited.
		switch limit := *p.Limit; {
		case limit > 0:
			out.PidsLimit = &limit
		case limit == 0:
			one := int64(1)
			out.PidsLimit = &one
		case !create:
			unlimited := int64(-1)
			out.PidsLimit = &unlimited
		}
	}
	if b := r.BlockIO; b != nil {
		if b.Weight != nil {
			out.BlkioWeight = *b.Weight
		}
		if b.LeafWeight != nil {
			out.BlkioLeafWeight = *b.LeafWeight
		}
		if b.WeightDevice != nil {
			out.BlkioWeightDevice = nil
			for _, wd := range b.WeightDevice {
				var w, lw uint16
				if wd.Weight != nil {
					w = *wd.Weight
				}
				if wd.LeafWeight != nil {
					lw = *wd.LeafWeight
				}
				out.BlkioWeightDevice = append(out.BlkioWeightDevice, cgroups.NewWeightDevice(wd.Major, wd.Minor, w, lw))
			}
		}
		throttle := func(in []specs.LinuxThrottleDevice, dst *[]*cgroups.ThrottleDevice) {
			if in == nil {
				return
			}
			*dst = nil
			for _, t := range in {
				*dst = append(*dst, cgroups.NewThrottleDevice(t.Major, t.Minor, t.Rate))
			}
		}
		throttle(b.ThrottleReadBpsDevice, &out.BlkioThrottleReadBpsDevice)
		throttle(b.ThrottleWriteBpsDevice, &out.BlkioThrottleWriteBpsDevice)
		throttle(b.ThrottleReadIOPSDevice, &out.BlkioThrottleReadIOPSDevice)
		throttle(b.ThrottleWriteIOPSDevice, &out.BlkioThrottleWriteIOPSDevice)
	}
	if r.HugepageLimits != nil {
		out.HugetlbLimit = nil
		for i, h := range r.HugepageLimits {
			if err := checkPageSize(h.Pagesize); err != nil {
				return fmt.Errorf("linux.resources.hugepageLimits[%d]: %w", i, err)
			}
			out.HugetlbLimit = append(out.HugetlbLimit, &cgroups.HugepageLimit{Pagesize: h.Pagesize, Limit: h.Limit})
		}
	}
	if n := r.Network; n != nil {
		if v2 && (n.ClassID != nil || len(n.Priorities) > 0) {
			return errors.New("linux.resources.network needs the cgroup v1 net_cls and net_prio controllers, which cgroup v2 does not have: remove it (filter traffic by cgroup path with nftables instead)")
		}
		if n.ClassID != nil {
			out.NetClsClassid = *n.ClassID
		}
		for _, p := range n.Priorities {
			out.NetPrioIfpriomap = append(out.NetPrioIfpriomap, &cgroups.IfPrioMap{Interface: p.Name, Priority: int64(p.Priority)})
		}
	}
	if len(r.Rdma) > 0 {
		out.Rdma = make(map[string]cgroups.LinuxRdma, len(r.Rdma))
		for dev, l := range r.Rdma {
			out.Rdma[dev] = cgroups.LinuxRdma{HcaHandles: l.HcaHandles, HcaObjects: l.HcaObjects}
		}
	}
	if len(r.Unified) > 0 {
		if !v2 {
			return errors.New("invalid configuration: linux.resources.unified needs a cgroup v2 host, and this one uses cgroup v1 (or the hybrid layout): use the v1 fields (memory, cpu, pids...) instead")
		}
		if out.Unified == nil {
			out.Unified = make(map[string]string, len(r.Unified))
		}
		for _, k := range slices.Sorted(maps.Keys(r.Unified)) {
			if strings.Contains(k, "/") || !strings.Contains(k, ".") || strings.HasPrefix(k, ".") {
				return fmt.Errorf("linux.resources.unified key %q: must be a cgroup file name like memory.high", k)
			}
			out.Unified[k] = r.Unified[k]
		}
	}
	return nil
}

// deviceRule converts one linux.resources.devices entry.
func deviceRule(d specs.LinuxDeviceCgroup) (*devices.Rule, error) {
	rule := &devices.Rule{Allow: d.Allow, Major: devices.Wildcard, Minor: devices.Wildcard}
	switch d.Type {
	case "", "a":
		rule.Type = devices.WildcardDevice
	case "b":
		rule.Type = devices.BlockDevice
	case "c", "u":
		rule.Type = devices.CharDevice
	default:
		return nil, fmt.Errorf("type %q is not a, b or c", d.Type)
	}
	if d.Major != nil {
		rule.Major = *d.Major
	}
	if d.Minor != nil {
		rule.Minor = *d.Minor
	}
	// As runc: r, w and m in any order, repeats allowed. runc also drops
	// any other character next to valid ones; we drop other letters in a
	// deny rule, where that denies no less than the valid letters say
	// (runc's own suite denies "rwa"), while in an allow rule a typo is
	// refused: what it grants would be a guess. runc refuses an empty access, which the
	// spec allows (the field is optional): that means all of them here,
	// as in crun.
	given := d.Access
	if given == "" {
		given = "rwm"
	}
	if !d.Allow && strings.ContainsAny(given, "rwm") {
		// Other letters only: a space or a comma is still refused.
		given = strings.Map(func(c rune) rune {
			if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') && !strings.ContainsRune("rwm", c) {
				return -1
			}
			return c
		}, given)
	}
	if strings.Trim(given, "rwm") != "" {
		return nil, fmt.Errorf("access %q is not a combination of r, w and m", d.Access)
	}
	var access string
	for _, c := range "rwm" {
		if strings.ContainsRune(given, c) {
			access += string(c)
		}
	}
	rule.Permissions = devices.Permissions(access)
	return rule, nil
}

// isPageSizeName reports whether s is a number without leading zeros
// followed by KB, MB or GB. (Not a regular expression: one compiled at
// package initialisation costs every process of the runtime, the
// container's init included, 20-40 µs.)
func isPageSizeName(s string) bool {
	num, ok := strings.CutSuffix(s, "B")
	if !ok || len(num) < 2 || !strings.ContainsRune("KMG", rune(num[len(num)-1])) {
		return false
	}
	num = num[:len(num)-1]
	if num[0] == '0' {
		return false
	}
	return strings.Trim(num, "0123456789") == ""
}

// checkPageSize accepts the sizes the kernel names its hugetlb files with
// ("2MB", "1GB"), and when the host lists its sizes, only those.
func checkPageSize(s string) error {
	if !isPageSizeName(s) {
		return fmt.Errorf("pageSize %q is not a size like 2MB or 1GB", s)
	}
	if sizes := cgroups.HugePageSizes(); len(sizes) > 0 && !slices.Contains(sizes, s) {
		return fmt.Errorf("pageSize %s is not supported by this host (it has %s)", s, strings.Join(sizes, ", "))
	}
	return nil
}
