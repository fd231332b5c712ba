package specconv

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/quick"

	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func i64(v int64) *int64   { return &v }
func u64(v uint64) *uint64 { return &v }
func u16(v uint16) *uint16 { return &v }
func u32(v uint32) *uint32 { return &v }
func boolp(v bool) *bool   { return &v }

func TestResourcesNil(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	r, err := Resources(nil, nil)
	if r != nil || err != nil {
		t.Errorf("Resources(nil) = %+v, %v", r, err)
	}
}

func TestResourcesFull(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP) // cgroup v1
	var w warnings
	in := &specs.LinuxResources{
		Devices: []specs.LinuxDeviceCgroup{
			{Allow: false, Access: "rwm"},
			{Allow: true, Type: "c", Major: i64(10), Minor: i64(229), Access: "rw"},
			{Allow: true, Type: "b", Major: i64(8)},
			{Allow: true, Type: "c", Major: i64(1), Minor: i64(9), Access: "mwrw"},
			// runc's suite: a deny rule's other letters are dropped.
			{Allow: false, Type: "c", Major: i64(1), Minor: i64(11), Access: "rwa"},
		},
		Memory: &specs.LinuxMemory{
			Limit: i64(64 << 20), Reservation: i64(32 << 20), Swap: i64(128 << 20),
			Swappiness: u64(10), DisableOOMKiller: boolp(true), CheckBeforeUpdate: boolp(true),
		},
		CPU: &specs.LinuxCPU{
			Shares: u64(512), Quota: i64(20000), Period: u64(100000), Burst: u64(1000),
			RealtimeRuntime: i64(950), RealtimePeriod: u64(1000), Cpus: "0-1", Mems: "0", Idle: i64(1),
		},
		Pids: &specs.LinuxPids{Limit: i64(20)},
		BlockIO: &specs.LinuxBlockIO{
			Weight: u16(300), LeafWeight: u16(200),
			WeightDevice:          []specs.LinuxWeightDevice{{LinuxBlockIODevice: specs.LinuxBlockIODevice{Major: 8, Minor: 0}, Weight: u16(500)}},
			ThrottleReadBpsDevice: []specs.LinuxThrottleDevice{{LinuxBlockIODevice: specs.LinuxBlockIODevice{Major: 8, Minor: 0}, Rate: 1 << 20}},
		},
		Network: &specs.LinuxNetwork{ClassID: u32(0x100001), Priorities: []specs.LinuxInterfacePriority{{Name: "eth0", Priority: 5}}},
		Rdma:    map[string]specs.LinuxRdma{"mlx5_0": {HcaHandles: u32(3)}},
	}
	r, err := Resources(in, w.warnf)
	if err != nil {
		t.Fatal(err)
	}
	wantDev := []*devices.Rule{
		{Type: devices.WildcardDevice, Major: devices.Wildcard, Minor: devices.Wildcard, Permissions: "rwm", Allow: false},
		{Type: devices.CharDevice, Major: 10, Minor: 229, Permissions: "rw", Allow: true},
		{Type: devices.BlockDevice, Major: 8, Minor: devices.Wildcard, Permissions: "rwm", Allow: true},
		{Type: devices.CharDevice, Major: 1, Minor: 9, Permissions: "rwm", Allow: true},
		{Type: devices.CharDevice, Major: 1, Minor: 11, Permissions: "rw", Allow: false},
	}
	if !reflect.DeepEqual(r.Devices, wantDev) {
		t.Errorf("devices %+v", r.Devices)
	}
	if r.Memory != 64<<20 || r.MemoryReservation != 32<<20 || r.MemorySwap != 128<<20 || *r.MemorySwappiness != 10 || !r.OomKillDisable || !r.MemoryCheckBeforeUpdate {
		t.Errorf("memory %+v", r)
	}
	if r.CpuShares != 512 || r.CpuQuota != 20000 || r.CpuPeriod != 100000 || *r.CpuBurst != 1000 || r.CpuRtRuntime != 950 ||
		r.CpuRtPeriod != 1000 || r.CpusetCpus != "0-1" || r.CpusetMems != "0" || *r.CPUIdle != 1 {
		t.Errorf("cpu %+v", r)
	}
	if *r.PidsLimit != 20 {
		t.Errorf("pids %d", *r.PidsLimit)
	}
	if r.BlkioWeight != 300 || r.BlkioLeafWeight != 200 || len(r.BlkioWeightDevice) != 1 || r.BlkioWeightDevice[0].Weight != 500 ||
		len(r.BlkioThrottleReadBpsDevice) != 1 || r.BlkioThrottleReadBpsDevice[0].Rate != 1<<20 {
		t.Errorf("blkio %+v", r)
	}
	if r.NetClsClassid != 0x100001 || len(r.NetPrioIfpriomap) != 1 || r.NetPrioIfpriomap[0].CgroupString() != "eth0 5" {
		t.Errorf("network %+v", r)
	}
	if *r.Rdma["mlx5_0"].HcaHandles != 3 || r.Rdma["mlx5_0"].HcaObjects != nil {
		t.Errorf("rdma %+v", r.Rdma)
	}
	if len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if !libbox.HasLimits(r) {
		t.Error("HasLimits false")
	}
}

// A new cgroup starts unlimited: "unlimited" values are no limits, so a
// rootless caller without a cgroup can still run them.
func TestResourcesUnlimitedDropped(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	r, err := Resources(&specs.LinuxResources{
		Memory: &specs.LinuxMemory{Limit: i64(-1), Swap: i64(-1)},
		CPU:    &specs.LinuxCPU{Quota: i64(-1)},
		Pids:   &specs.LinuxPids{Limit: i64(-1)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if libbox.HasLimits(r) || r.PidsLimit != nil || r.Memory != 0 || r.CpuQuota != 0 {
		t.Errorf("unlimited values kept: %+v", r)
	}
}

// A pids limit of 0 is taken as 1, as runc does, at create and at update;
// an unset one changes nothing.
func TestPidsLimitZeroIsOne(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	r, err := Resources(&specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(0)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.PidsLimit == nil || *r.PidsLimit != 1 {
		t.Errorf("create with pids.limit 0: PidsLimit %v, want 1", r.PidsLimit)
	}
	got, err := UpdateResources(&cgroups.Resources{PidsLimit: i64(20)}, &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if got.PidsLimit == nil || *got.PidsLimit != 1 {
		t.Errorf("update with pids.limit 0: PidsLimit %v, want 1", got.PidsLimit)
	}
	got, err = UpdateResources(&cgroups.Resources{PidsLimit: i64(20)}, &specs.LinuxResources{Pids: &specs.LinuxPids{}})
	if err != nil {
		t.Fatal(err)
	}
	if got.PidsLimit == nil || *got.PidsLimit != 20 {
		t.Errorf("update with no pids.limit: PidsLimit %v, want 20 kept", got.PidsLimit)
	}
}

func TestResourcesErrors(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	for _, tc := range []struct {
		name string
		in   specs.LinuxResources
		want string
	}{
		{"device type", specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Type: "x"}}}, `devices[0]: type "x"`},
		{"device access", specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwx"}}}, `access "rwx"`},
		{"device access, deny", specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Access: "x"}}}, `access "x"`},
		{"device access, deny with a space", specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Access: "r w"}}}, `access "r w"`},
		{"device access, deny with a comma", specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Access: "r,wa"}}}, `access "r,wa"`},
		{"negative memory", specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(-5)}}, "not a size"},
		{"swap below limit", specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(100 << 20), Swap: i64(50 << 20)}}, "swap"},
		{"swappiness", specs.LinuxResources{Memory: &specs.LinuxMemory{Swappiness: u64(101)}}, "swappiness 101"},
		{"quota", specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: i64(-7)}}, "cpu.quota -7"},
		{"page size", specs.LinuxResources{HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "../2MB"}}}, "pageSize"},
		{"unified on v1", specs.LinuxResources{Unified: map[string]string{"memory.high": "1M"}}, "invalid configuration: linux.resources.unified needs a cgroup v2 host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resources(&tc.in, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestResourcesCgroupV2(t *testing.T) {
	h := fakeHost(t, unix.CAP_LAST_CAP)
	h.cgroup2Unified = func() bool { return true }
	var w warnings
	r, err := Resources(&specs.LinuxResources{
		Memory:  &specs.LinuxMemory{Limit: i64(1 << 30), DisableOOMKiller: boolp(true), Swappiness: u64(0), Kernel: i64(1 << 20)},
		Unified: map[string]string{"memory.high": "512M", "cgroup.max.depth": "3"},
	}, w.warnf)
	if err != nil {
		t.Fatal(err)
	}
	if r.OomKillDisable || r.MemorySwappiness != nil || r.Unified["memory.high"] != "512M" || len(r.Unified) != 2 {
		t.Errorf("v2 resources %+v", r)
	}
	for _, s := range []string{"disableOOMKiller ignored", "swappiness ignored", "kernel and kernelTCP are ignored"} {
		if !w.contains(s) {
			t.Errorf("no warning %q in %q", s, w)
		}
	}
	for name, in := range map[string]specs.LinuxResources{
		"network":     {Network: &specs.LinuxNetwork{ClassID: u32(1)}},
		"unified key": {Unified: map[string]string{"../memory.max": "1"}},
	} {
		if _, err := Resources(&in, nil); err == nil {
			t.Errorf("%s: no error on cgroup v2", name)
		}
	}
}

func TestUpdateResources(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	cur := &cgroups.Resources{
		Memory:    64 << 20,
		PidsLimit: i64(20),
		CpuQuota:  10000,
		CpuPeriod: 100000,
		Devices:   []*devices.Rule{{Type: devices.WildcardDevice, Major: devices.Wildcard, Minor: devices.Wildcard, Permissions: "rwm"}},
	}
	saved := *cur
	got, err := UpdateResources(cur, &specs.LinuxResources{
		Memory:  &specs.LinuxMemory{Limit: i64(128 << 20)},
		Pids:    &specs.LinuxPids{Limit: i64(-1)},
		CPU:     &specs.LinuxCPU{Quota: i64(-1), Cpus: "1"},
		Devices: []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwm"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Memory != 128<<20 || *got.PidsLimit != -1 || got.CpuQuota != -1 || got.CpuPeriod != 100000 || got.CpusetCpus != "1" {
		t.Errorf("updated %+v", got)
	}
	if !reflect.DeepEqual(got.Devices, saved.Devices) {
		t.Errorf("device rules changed by update: %+v", got.Devices)
	}
	if !reflect.DeepEqual(*cur, saved) {
		t.Errorf("UpdateResources modified its input: %+v", cur)
	}
	if got, err := UpdateResources(nil, &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(50)}}); err != nil || *got.PidsLimit != 50 {
		t.Errorf("update of no resources: %+v, %v", got, err)
	}
}

func TestFromSpecResources(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Linux.Resources.Memory = &specs.LinuxMemory{Limit: i64(64 << 20)}
	spec.Linux.CgroupsPath = "/libpod_parent/libpod-0123"
	c, w := mustConvert(t, spec, Options{})
	if c.Resources == nil || c.Resources.Memory != 64<<20 || c.CgroupsPath != "/libpod_parent/libpod-0123" || len(w) != 0 {
		t.Errorf("resources %+v path %q warnings %q", c.Resources, c.CgroupsPath, w)
	}

	// The systemd form is a relative cgroupfs name, as in runc without
	// --systemd-cgroup (containerd's CRI plugin sends it with cgroupfs).
	spec.Linux.CgroupsPath = "system.slice:nanobox:abc"
	c, _ = mustConvert(t, spec, Options{})
	if c.CgroupsPath != "system.slice:nanobox:abc" {
		t.Errorf("systemd-form cgroupsPath became %q", c.CgroupsPath)
	}

	spec.Linux.CgroupsPath = ""
	spec.Linux.Resources.Devices = []specs.LinuxDeviceCgroup{{Type: "q"}}
	_, err := FromSpec(spec, Options{Bundle: newBundle(t), Warnf: w.warnf})
	if err == nil || !strings.Contains(err.Error(), "linux.resources.devices[0]") {
		t.Errorf("bad device rule: %v", err)
	}
	var unsupported *UnsupportedError
	if errors.As(err, &unsupported) {
		t.Errorf("a bad value is not an unsupported field: %v", err)
	}
}

// isPageSizeName accepts exactly what ^[1-9][0-9]*[KMG]B$ matches.
func TestIsPageSizeName(t *testing.T) {
	re := regexp.MustCompile(`^[1-9][0-9]*[KMG]B$`)
	cases := []string{"", "B", "MB", "2MB", "1GB", "64KB", "2048KB", "0MB", "02MB", "2mB", "2Mb", "2TB", "2M", "2MBB", "../2MB", "2 MB", "-2MB", "+2MB", "1G B", "10GB", "2MB\n", "\n2MB", "9KB", "1x2MB"}
	for _, s := range cases {
		if got, want := isPageSizeName(s), re.MatchString(s); got != want {
			t.Errorf("%q: got %v, want %v", s, got, want)
		}
	}
	f := func(s string) bool { return isPageSizeName(s) == re.MatchString(s) }
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}
