package libbox

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/cgroups/manager"
	"golang.org/x/sys/unix"
)

func TestCgroupSpec(t *testing.T) {
	denyAll := &devices.Rule{Type: devices.WildcardDevice, Major: devices.Wildcard, Minor: devices.Wildcard, Permissions: "rwm"}
	res := &cgroups.Resources{Memory: 1 << 26, Devices: []*devices.Rule{denyAll}}
	cfg := &Config{Resources: res}

	cg, err := cgroupSpec("c1", cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	// No cgroupsPath: named after the container, placed by the library
	// relative to the caller's cgroup.
	if cg.Name != "c1" || cg.Path != "" || cg.Parent != "" || cg.Rootless {
		t.Errorf("empty cgroupsPath: %+v", cg)
	}
	// podman's devices list is only "deny all": the defaults follow it.
	if len(cg.Devices) != 1+len(DefaultDeviceRules) || cg.Devices[0] != denyAll || !reflect.DeepEqual(*cg.Devices[1], DefaultDeviceRules[0]) {
		t.Errorf("device rules %v", cg.Devices)
	}
	if cg.Memory != 1<<26 || cg.Resources == res || len(res.Devices) != 1 {
		t.Errorf("the config's resources were not copied: %+v", cg.Resources)
	}

	cfg.CgroupsPath = "/libpod_parent/libpod-abc"
	if cg, _ = cgroupSpec("c1", cfg, true); cg.Path != "/libpod_parent/libpod-abc" || cg.Name != "" || !cg.Rootless {
		t.Errorf("absolute cgroupsPath: %+v", cg)
	}
	// Rootless: no device rules at all (they cannot be set, and the user
	// namespace keeps device nodes out).
	if cg.Devices != nil || !cg.SkipDevices {
		t.Errorf("rootless device rules %v skip %v", cg.Devices, cg.SkipDevices)
	}

	// The systemd form without a systemd manager: one relative name, as
	// runc takes it (containerd's CRI plugin sends it with cgroupfs).
	cfg.CgroupsPath = "system.slice:nanobox:c1"
	if cg, err := cgroupSpec("c1", cfg, false); err != nil || cg.Path != "system.slice:nanobox:c1" || cg.Name != "" {
		t.Errorf("systemd-form cgroupsPath: %+v, %v", cg, err)
	}

	// No resources at all still gets the default device rules.
	if cg, _ = cgroupSpec("c1", &Config{}, false); len(cg.Devices) != len(DefaultDeviceRules) || HasLimits(cg.Resources) {
		t.Errorf("no resources: %+v", cg.Resources)
	}
}

func TestRequiredControllers(t *testing.T) {
	limit := int64(10)
	for _, tc := range []struct {
		r    *cgroups.Resources
		want []string
	}{
		{nil, nil},
		{&cgroups.Resources{Devices: []*devices.Rule{{Type: 'a'}}, Freezer: cgroups.Frozen}, nil},
		{&cgroups.Resources{Memory: 1}, []string{"memory"}},
		{&cgroups.Resources{PidsLimit: &limit, CpuQuota: 1000}, []string{"cpu", "pids"}},
		{&cgroups.Resources{CpusetCpus: "0", BlkioWeight: 100}, []string{"cpuset", "io"}},
		{&cgroups.Resources{HugetlbLimit: []*cgroups.HugepageLimit{{Pagesize: "2MB"}}}, []string{"hugetlb"}},
		{&cgroups.Resources{Unified: map[string]string{"memory.high": "1", "cgroup.max.depth": "2", "io.max": "x"}}, []string{"io", "memory"}},
		{&cgroups.Resources{NetClsClassid: 1, OomKillDisable: true}, []string{"memory", "net_cls"}},
	} {
		if got := requiredControllers(tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("requiredControllers(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}

// requireCgroupfs skips unless /sys/fs/cgroup holds cgroup hierarchies.
// isCgroup1Mount: a cgroup v1 hierarchy is mounted at dir. A plain
// directory is not one: conmon and other runtimes leave such directories on
// the hybrid layout's tmpfs for controllers that are not mounted.
func isCgroup1Mount(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP_SUPER_MAGIC
}

func requireCgroupfs(t *testing.T) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil || (st.Type != unix.CGROUP2_SUPER_MAGIC && st.Type != unix.TMPFS_MAGIC) {
		t.Skip("no cgroup filesystem at /sys/fs/cgroup")
	}
}

// TestCgroupPaths checks where each cgroupsPath form lands on this host
// (v1, hybrid or v2), without creating anything.
func TestCgroupPaths(t *testing.T) {
	requireCgroupfs(t)
	v2 := cgroups.IsCgroup2UnifiedMode()
	path := func(cgroupsPath string) string {
		t.Helper()
		cg, err := cgroupSpec("c1", &Config{CgroupsPath: cgroupsPath}, false)
		if err != nil {
			t.Fatal(err)
		}
		m, err := manager.New(cg)
		if err != nil {
			t.Fatalf("manager for %q: %v", cgroupsPath, err)
		}
		if v2 {
			return m.Path("")
		}
		return m.Path("pids")
	}
	own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var root, base string
	if v2 {
		// Beside our own cgroup: its parent has no processes of its own.
		root, base = "/sys/fs/cgroup", "/sys/fs/cgroup"+filepath.Dir(own[""])
	} else {
		if _, ok := own["pids"]; !ok {
			t.Skip("no cgroup v1 pids controller")
		}
		root, base = "/sys/fs/cgroup/pids", filepath.Join("/sys/fs/cgroup/pids", own["pids"])
	}
	for in, want := range map[string]string{
		"/libpod_parent/libpod-1":     root + "/libpod_parent/libpod-1",
		"/a/../../b":                  root + "/b", // cleaned, never above the root
		"nanobox/x":                   filepath.Join(base, "nanobox/x"),
		"../../escape":                filepath.Join(base, "escape"),
		"k8s.slice:cri-containerd:c1": filepath.Join(base, "k8s.slice:cri-containerd:c1"),
		"":                            filepath.Join(base, "c1"),
	} {
		if got := path(in); got != want {
			t.Errorf("cgroupsPath %q: %s, want %s", in, got, want)
		}
	}
}

// TestApplyCgroup runs the real thing on this host as root: a process is
// put in a new cgroup with limits, frozen, listed, killed, and the cgroup
// removed.
func TestApplyCgroup(t *testing.T) {
	requireCgroupfs(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pids := int64(16)
	id := fmt.Sprintf("nanobox-unit-%d", os.Getpid())
	cfg := &Config{CgroupsPath: "/" + id, Resources: &cgroups.Resources{Memory: 64 << 20, PidsLimit: &pids, CpuQuota: 20000, CpuPeriod: 100000}}
	h, err := applyCgroup(id, cfg, false, cmd.Process.Pid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		t.Fatal("no cgroup as root")
	}
	defer h.destroyBestEffort()

	v2 := cgroups.IsCgroup2UnifiedMode()
	read := func(ctrl, file string) string {
		t.Helper()
		dir := h.m.Path(ctrl)
		if v2 {
			dir = h.m.Path("")
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	// pids.max waits for setLate: init's setup is done.
	if got := read("pids", "pids.max"); got != "max" {
		t.Errorf("pids.max before setLate: %s, want max", got)
	}
	if err := h.setLate(); err != nil {
		t.Fatal(err)
	}
	if v2 {
		if got := read("", "memory.max") + " " + read("", "pids.max") + " " + read("", "cpu.max"); got != "67108864 16 20000 100000" {
			t.Errorf("memory.max pids.max cpu.max = %s", got)
		}
	} else {
		if got := read("memory", "memory.limit_in_bytes") + " " + read("pids", "pids.max") + " " + read("cpu", "cpu.cfs_quota_us"); got != "67108864 16 20000" {
			t.Errorf("memory, pids, cpu limits = %s", got)
		}
		// The devices cgroup is an allow list holding the defaults.
		list := read("devices", "devices.list")
		if !strings.Contains(list, "c 1:3 rwm") || !strings.Contains(list, "c 136:* rwm") || strings.Contains(list, "a *:* rwm") {
			t.Errorf("devices.list:\n%s", list)
		}
	}

	// The state stores the paths; reopening them finds the same cgroup.
	h2 := openCgroup(id, cfg, false, h.paths())
	if h2 == nil {
		t.Fatal("openCgroup: nil")
	}
	if got, err := h2.pids(); err != nil || !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Errorf("pids = %v, %v; want [%d]", got, err, cmd.Process.Pid)
	}
	if err := h2.freeze(cgroups.Frozen); err != nil || !h2.frozen() {
		t.Fatalf("freeze: %v, frozen %v", err, h2.frozen())
	}
	// SIGKILL of a frozen cgroup must still kill (v1 needs a thaw).
	if err := h2.signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		t.Errorf("sleep ended with %v, want SIGKILL", err)
	}
	if h2.frozen() {
		t.Error("still frozen after the kill")
	}
	if n, err := h2.oomKills(); err != nil || n != 0 {
		t.Errorf("oom kills %d, %v", n, err)
	}
	if err := h2.destroy(); err != nil {
		t.Fatal(err)
	}
	for _, p := range h.paths() {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
}

// A limit whose controller is missing is an error that names it, and the
// half-made cgroup can be removed.
func TestApplyCgroupMissingController(t *testing.T) {
	requireCgroupfs(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	id := fmt.Sprintf("nanobox-unit-miss-%d", os.Getpid())
	// rdma is rarely mounted on v1 hosts; net_cls does not exist on v2.
	res := &cgroups.Resources{NetClsClassid: 0x10001}
	if cgroups.IsCgroup2UnifiedMode() {
		res = &cgroups.Resources{Unified: map[string]string{"nosuch.max": "1"}}
	} else if isCgroup1Mount("/sys/fs/cgroup/net_cls") {
		t.Skip("this host mounts net_cls")
	}
	h, err := applyCgroup(id, &Config{CgroupsPath: "/" + id, Resources: res}, false, cmd.Process.Pid, nil)
	if err == nil || !strings.Contains(err.Error(), "controller(s)") {
		t.Fatalf("error %v, want one naming the missing controller", err)
	}
	// As create does: kill the process, then remove the cgroup.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if h == nil {
		t.Fatal("no handle to clean up with")
	}
	if err := h.destroy(); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/" + id)
	if _, err := os.Stat("/sys/fs/cgroup/" + id); err == nil {
		matches = append(matches, "/sys/fs/cgroup/"+id)
	}
	if len(matches) > 0 {
		t.Errorf("left behind: %v", matches)
	}
}

// TestCgroupBeforeInit: the container's cgroup is made with its limits
// before any process is in it, with what the stage needs to be born in it:
// on a cgroup v2 host its directory, for CLONE_INTO_CGROUP, and a process
// started that way is born there; on a v1 or hybrid host a tasks file of
// each v1 hierarchy (one per directory) and, on a hybrid one, the cgroup2
// mount's directory. Its limits are written then, but pids.max, which
// waits for setLate (init's setup is done), whatever its value.
func TestCgroupBeforeInit(t *testing.T) {
	requireCgroupfs(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	id := fmt.Sprintf("nanobox-unit-clone-%d", os.Getpid())
	one := int64(1)
	cfg := &Config{CgroupsPath: "/" + id, Resources: &cgroups.Resources{PidsLimit: &one, Memory: 64 << 20}}
	b, ok, err := cgroupBeforeInit(id, cfg, false, nil)
	if b != nil {
		defer b.closeFiles()
		if b.h != nil {
			defer b.h.destroyBestEffort()
		}
	}
	if err != nil || !ok || b == nil || b.h == nil {
		t.Fatalf("cgroupBeforeInit: ok %v, cgroup %v, err %v", ok, b, err)
	}
	v2 := cgroups.IsCgroup2UnifiedMode()
	if (b.dir != nil) != (v2 || cgroups.IsCgroup2HybridMode()) {
		t.Errorf("cgroup2 directory %v on a host with cgroup2 %v", b.dir, v2 || cgroups.IsCgroup2HybridMode())
	}
	paths := b.h.m.GetPaths()
	dirs := map[string]bool{}
	for ctrl, p := range paths {
		if ctrl != "" && p != "" {
			dirs[p] = true
		}
	}
	if v2 && len(b.tasks) != 0 {
		t.Errorf("cgroup v2 host: tasks files %v", b.tasks)
	}
	if !v2 {
		got := map[string]bool{}
		for _, tf := range b.tasks {
			if got[filepath.Dir(tf.path)] {
				t.Errorf("%s given twice", tf.path)
			}
			got[filepath.Dir(tf.path)] = true
			if fl, err := unix.FcntlInt(tf.f.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_ACCMODE != unix.O_WRONLY {
				t.Errorf("%s: flags %#x, %v; want open for writing", tf.path, fl, err)
			}
		}
		if !maps.Equal(got, dirs) {
			t.Errorf("tasks files in %v, want one in each of %v", got, dirs)
		}
	}
	pidsDir := paths["pids"]
	procs := filepath.Join(pidsDir, "tasks")
	memMax := filepath.Join(paths["memory"], "memory.limit_in_bytes")
	if v2 {
		pidsDir = b.h.m.Path("")
		procs = filepath.Join(pidsDir, "cgroup.procs")
		memMax = filepath.Join(pidsDir, "memory.max")
	}
	pidsMax := filepath.Join(pidsDir, "pids.max")
	wantFiles := func(when string, files map[string]string) {
		t.Helper()
		for file, want := range files {
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(got)) != want {
				t.Errorf("%s %s: %q, want %q", file, when, got, want)
			}
		}
	}
	wantFiles("before any process", map[string]string{pidsMax: "max", memMax: fmt.Sprint(64 << 20), procs: ""})
	if err := b.h.setLate(); err != nil {
		t.Fatal(err)
	}
	wantFiles("after setLate", map[string]string{pidsMax: "1"})
	if b.dir == nil {
		return
	}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(b.dir.Fd())}
	if err := cmd.Start(); err != nil {
		t.Fatalf("clone3 CLONE_INTO_CGROUP on the cgroup's directory: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	got, err := os.ReadFile(filepath.Join(b.dir.Name(), "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != fmt.Sprint(cmd.Process.Pid) {
		t.Fatalf("cgroup.procs after the clone: %q, want %d", got, cmd.Process.Pid)
	}
}

// TestNewCgroupManager checks that the paths newCgroupManager works out
// from one read of /proc/self/cgroup are the library's own, for each form
// of cgroupsPath, rootful and rootless (no devices cgroup required), and
// that it reads the file once where the library reads it per hierarchy.
func TestNewCgroupManager(t *testing.T) {
	requireCgroupfs(t)
	specs := map[string]func() *cgroups.Cgroup{}
	for _, in := range []string{"", "nanobox/x", "../../escape", "k8s.slice:cri-containerd:c1", "/libpod_parent/libpod-1", "/a/../../b", "a/./b/../c"} {
		for _, rootless := range []bool{false, true} {
			specs[fmt.Sprintf("%q rootless=%v", in, rootless)] = func() *cgroups.Cgroup {
				cg, err := cgroupSpec("c1", &Config{CgroupsPath: in}, rootless)
				if err != nil {
					t.Fatal(err)
				}
				return cg
			}
		}
	}
	specs["Parent and Name"] = func() *cgroups.Cgroup {
		cg, _ := cgroupSpec("c1", &Config{}, false)
		cg.Parent = "../p"
		return cg
	}
	for name, spec := range specs {
		want, err := manager.New(spec())
		if err != nil {
			t.Fatalf("%s: library: %v", name, err)
		}
		got, err := newCgroupManager(spec(), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got.GetPaths(), want.GetPaths()) {
			t.Errorf("%s: paths\n%v\nthe library's\n%v", name, got.GetPaths(), want.GetPaths())
		}
	}
	// Only the hierarchies asked for (a sandbox's), each at the path the
	// library would give it; the v2 mount of a hybrid host too.
	if !cgroups.IsCgroup2UnifiedMode() {
		cg, _ := cgroupSpec("c1", &Config{}, false)
		all, err := manager.New(cg)
		if err != nil {
			t.Fatal(err)
		}
		some, err := newCgroupManager(cg, sandboxV1Hierarchies)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range some.GetPaths() {
			if name != "" && !slices.Contains(sandboxV1Hierarchies, name) {
				t.Errorf("hierarchy %s (%s) was not asked for", name, p)
			}
			if p != all.GetPaths()[name] {
				t.Errorf("hierarchy %s at %s, the library's at %s", name, p, all.GetPaths()[name])
			}
		}
		for _, name := range sandboxV1Hierarchies {
			if _, mounted := all.GetPaths()[name]; mounted && some.GetPaths()[name] == "" {
				t.Errorf("hierarchy %s asked for and mounted, but left out", name)
			}
		}
		if _, hybrid := all.GetPaths()[""]; hybrid && some.GetPaths()[""] == "" {
			t.Error("the hybrid host's cgroup2 mount was left out")
		}
	}
	cg, _ := cgroupSpec("c1", &Config{}, false)
	both := cg
	both.Path = "x"
	if _, err := newCgroupManager(both, nil); err == nil {
		t.Error("Path with Name: no error")
	}
	if cgroups.IsCgroup2UnifiedMode() {
		return
	}
	// The read syscalls of the process (/proc/self/io): one parse of
	// /proc/self/cgroup is two reads (the data, then EOF); the library's
	// mountinfo is cached by the runs above.
	syscr := func() int {
		t.Helper()
		b, err := os.ReadFile("/proc/self/io")
		if err != nil {
			t.Skipf("no /proc/self/io: %v", err)
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "syscr: "); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
		t.Skip("no syscr in /proc/self/io")
		return 0
	}
	cg, _ = cgroupSpec("c1", &Config{}, false)
	before := syscr()
	if _, err := newCgroupManager(cg, nil); err != nil {
		t.Fatal(err)
	}
	// (Reading /proc/self/io itself is a read or two.)
	if n := syscr() - before; n > 6 {
		t.Errorf("newCgroupManager made %d read syscalls, want one read of /proc/self/cgroup (2-3 reads)", n)
	}
}

// pathsManager is a cgroups.Manager whose cgroup is at paths.
type pathsManager struct {
	cgroups.Manager
	paths map[string]string
}

func (m pathsManager) GetPaths() map[string]string { return m.paths }

func TestSubCgroupPath(t *testing.T) {
	for _, base := range []string{"/sys/fs/cgroup/machine.slice/ctr", "/sys/fs/cgroup/cpu,cpuacct/runc-test/ctr"} {
		for sub, want := range map[string]string{
			"": base, "/": base, ".": base, "sub": base + "/sub", "/sub/x": base + "/sub/x",
			// Through the parent, back into the container's cgroup (both
			// bases end in "ctr"), as runc allows.
			"sub/../other": base + "/other", "a/../../ctr/b": base + "/b",
		} {
			got, err := subCgroupPath(base, sub)
			if err != nil || got != want {
				t.Errorf("subCgroupPath(%q, %q) = %q, %v; want %q", base, sub, got, err, want)
			}
		}
		// Out of the container's cgroup: its parent, a sibling (one
		// whose name starts with the container's too), the root.
		sibling := "../" + filepath.Base(base) + "-sibling"
		for _, sub := range []string{"..", "../", sibling, "sub/../..", "/..", "../../../.."} {
			got, err := subCgroupPath(base, sub)
			if err == nil || !strings.HasPrefix(err.Error(), "bad sub cgroup path: --cgroup "+sub+" is not a sub cgroup path (it leads out of the container's cgroup)") {
				t.Errorf("subCgroupPath(%q, %q) = %q, %v; want a bad sub cgroup path error", base, sub, got, err)
			}
		}
	}
}

func TestSubCgroupTargets(t *testing.T) {
	v2 := &cgroupHandle{m: pathsManager{paths: map[string]string{"": "/sys/fs/cgroup/ctr"}}}
	got, err := v2.subCgroupTargets(map[string]string{"": "sub"})
	if want := map[string]string{"": "/sys/fs/cgroup/ctr/sub"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("v2: %v, %v; want %v", got, err, want)
	}
	if _, err := v2.subCgroupTargets(map[string]string{"": "../ctr-sibling"}); err == nil || !strings.Contains(err.Error(), "bad sub cgroup path") {
		t.Errorf("v2 sibling: %v", err)
	}
	v1 := &cgroupHandle{m: pathsManager{paths: map[string]string{
		"cpu": "/sys/fs/cgroup/cpu/ctr", "memory": "/sys/fs/cgroup/memory/ctr", "pids": "", "name=systemd": "/sys/fs/cgroup/systemd/ctr",
	}}}
	got, err = v1.subCgroupTargets(map[string]string{"": "sub"})
	if want := map[string]string{"cpu": "/sys/fs/cgroup/cpu/ctr/sub", "memory": "/sys/fs/cgroup/memory/ctr/sub", "name=systemd": "/sys/fs/cgroup/systemd/ctr/sub"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("v1: %v, %v; want %v", got, err, want)
	}
	if cgroups.IsCgroup2UnifiedMode() {
		return // a controller in --cgroup is for cgroup v1 hosts
	}
	got, err = v1.subCgroupTargets(map[string]string{"memory": "sub"})
	if want := map[string]string{"cpu": "/sys/fs/cgroup/cpu/ctr", "memory": "/sys/fs/cgroup/memory/ctr/sub", "name=systemd": "/sys/fs/cgroup/systemd/ctr"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("v1 memory: %v, %v; want %v", got, err, want)
	}
	for sub, msg := range map[string]string{"cpu": "bad sub cgroup path: --cgroup ../ctr-sibling", "whaaat": "unknown controller whaaat", "pids": "unknown controller pids"} {
		arg := "../ctr-sibling"
		if sub != "cpu" {
			arg = "/"
		}
		if _, err := v1.subCgroupTargets(map[string]string{sub: arg}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("v1 %s:%s: %v, want %q", sub, arg, err, msg)
		}
	}
}

func TestSubCgroupOf(t *testing.T) {
	base := "/sys/fs/cgroup/test/ctr"
	for dir, want := range map[string]string{
		base + "/leaf":                 base + "/leaf",
		base + "/a/b":                  base + "/a/b",
		base:                           "", // the container's cgroup itself
		base + "-other":                "", // a sibling sharing its name prefix
		"/sys/fs/cgroup":               "",
		"/sys/fs/cgroup/test/ctr/../x": "",
	} {
		if got := subCgroupOf(base, dir); got != want {
			t.Errorf("subCgroupOf(%q, %q) = %q, want %q", base, dir, got, want)
		}
	}
	if got := subCgroupOf("", base); got != "" {
		t.Errorf("no cgroup: %q", got)
	}
}
