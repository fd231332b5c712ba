package libbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// TestConfigHeadMatchesConfig: each field of configHead is Config's field
// of the same name, with the same type and JSON tag, so that it decodes
// from state.json to what the whole Config would hold; and config() copies
// every one of them.
func TestConfigHeadMatchesConfig(t *testing.T) {
	ht, ct := reflect.TypeFor[configHead](), reflect.TypeFor[Config]()
	for i := 0; i < ht.NumField(); i++ {
		hf := ht.Field(i)
		cf, ok := ct.FieldByName(hf.Name)
		if !ok || cf.Type != hf.Type || cf.Tag != hf.Tag {
			t.Errorf("configHead.%s (%s `%s`) is not Config's (%v, %v `%v`)", hf.Name, hf.Type, hf.Tag, ok, cf.Type, cf.Tag)
		}
	}
	full := richConfig()
	h := &configHead{}
	hv := reflect.ValueOf(h).Elem()
	for i := 0; i < ht.NumField(); i++ {
		hv.Field(i).Set(reflect.ValueOf(full).Elem().FieldByName(ht.Field(i).Name))
	}
	got := reflect.ValueOf(h.config()).Elem()
	for i := 0; i < ht.NumField(); i++ {
		name := ht.Field(i).Name
		if !reflect.DeepEqual(got.FieldByName(name).Interface(), hv.Field(i).Interface()) {
			t.Errorf("configHead.config() leaves %s out", name)
		}
	}
}

// TestStateHeadMatchesPersisted: stateHead reads every field persisted
// writes, under the same tag, the config as a configHead.
func TestStateHeadMatchesPersisted(t *testing.T) {
	st, pt := reflect.TypeFor[stateHead](), reflect.TypeFor[persisted]()
	if st.NumField() != pt.NumField() {
		t.Fatalf("stateHead has %d fields, persisted %d", st.NumField(), pt.NumField())
	}
	for i := 0; i < pt.NumField(); i++ {
		pf := pt.Field(i)
		sf, ok := st.FieldByName(pf.Name)
		want := pf.Type
		if pf.Name == "Config" {
			want = reflect.TypeFor[*configHead]()
		}
		if !ok || sf.Type != want || sf.Tag != pf.Tag {
			t.Errorf("stateHead.%s (%v `%v`) does not match persisted's (%s `%s`)", pf.Name, sf.Type, sf.Tag, pf.Type, pf.Tag)
		}
	}
}

// richConfig has every head field set, and much besides.
func richConfig() *Config {
	swap := uint64(10)
	pids := int64(100)
	return &Config{
		OCIVersion: "1.2.0", Bundle: "/b", Rootfs: "/b/rootfs", Hostname: "h",
		Namespaces:  []Namespace{{Type: NEWPID}, {Type: NEWNET, Path: "/proc/1/ns/net"}, {Type: NEWNS}},
		Mounts:      []Mount{{Source: "proc", Destination: "/proc", Type: "proc"}},
		Process:     Process{Args: []string{"sh", "-c", "true"}, Env: []string{"A=1"}, Cwd: "/"},
		Hooks:       Hooks{Poststop: []Hook{{Path: "/bin/true", Args: []string{"true"}}}},
		Annotations: map[string]string{"a": "1", "org.example/b": "two"},
		CgroupsPath: "/machine/c1",
		Resources: &cgroups.Resources{
			Memory: 1 << 28, MemorySwappiness: &swap, PidsLimit: &pids, CpusetCpus: "0",
			Devices: []*config.Rule{{Type: config.CharDevice, Major: 1, Minor: 3, Permissions: "rwm", Allow: true}},
		},
	}
}

// TestLoadLightMatchesLoad: a container opened with LoadLight has the head
// of the Config Load decodes, the same state, and LoadLight's errors are
// Load's.
func TestLoadLightMatchesLoad(t *testing.T) {
	rt := &Runtime{Root: t.TempDir()}
	dir := filepath.Join(rt.Root, "c1")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	self, _ := readProcStat(os.Getpid())
	in := &persisted{
		ID: "c1", InitPid: os.Getpid(), InitStartTime: self.StartTime, Created: time.Unix(1700000000, 5).UTC(), Owner: "root",
		Config: richConfig(),
	}
	if err := writeState(dir, in, false); err != nil {
		t.Fatal(err)
	}
	full, err := rt.Load("c1")
	if err != nil {
		t.Fatal(err)
	}
	light, err := rt.LoadLight("c1")
	if err != nil {
		t.Fatal(err)
	}
	if light.c.st.Config != nil {
		t.Fatal("LoadLight decoded the whole config")
	}
	fc := full.Config()
	want := (&configHead{
		OCIVersion: fc.OCIVersion, Bundle: fc.Bundle, Rootfs: fc.Rootfs, Namespaces: fc.Namespaces,
		Annotations: fc.Annotations, CgroupsPath: fc.CgroupsPath, Resources: fc.Resources,
	}).config()
	if got := light.c.headConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadLight's head:\n%+v\nwant (from Load):\n%+v", got, want)
	}
	if !reflect.DeepEqual(light.c.st, &persisted{
		ID: full.st.ID, InitPid: full.st.InitPid, InitStartTime: full.st.InitStartTime,
		Created: full.st.Created, Owner: full.st.Owner, CgroupPaths: full.st.CgroupPaths,
	}) {
		t.Fatalf("LoadLight's state %+v differs from Load's %+v", light.c.st, full.st)
	}
	ls, fs := light.State(), full.State()
	lb, _ := json.Marshal(ls)
	fb, _ := json.Marshal(fs)
	if string(lb) != string(fb) || ls.Status != Running || light.ID() != "c1" || light.Pid() != os.Getpid() {
		t.Fatalf("LoadLight's state %s, Load's %s (want running)", lb, fb)
	}

	for _, id := range []string{"nope", "../etc", ""} {
		_, errFull := rt.Load(id)
		_, errLight := rt.LoadLight(id)
		if errFull == nil || errLight == nil || errFull.Error() != errLight.Error() ||
			errors.Is(errFull, ErrNotExist) != errors.Is(errLight, ErrNotExist) ||
			errors.Is(errFull, ErrInvalidID) != errors.Is(errLight, ErrInvalidID) {
			t.Errorf("%q: Load: %v, LoadLight: %v", id, errFull, errLight)
		}
	}
	// A state.json that names another container, or is damaged.
	for name, body := range map[string]string{
		"other": `{"id":"c2","initPid":1,"config":{}}`,
		"bad":   `{"id":"bad","initPid":1`,
		"noCfg": `{"id":"noCfg","initPid":1}`,
	} {
		d := filepath.Join(rt.Root, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, stateFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errFull := rt.Load(name)
		_, errLight := rt.LoadLight(name)
		if errFull == nil || errLight == nil || errFull.Error() != errLight.Error() || !errors.Is(errLight, ErrInvalidState) {
			t.Errorf("%s: Load: %v, LoadLight: %v", name, errFull, errLight)
		}
	}
}

// TestLoadLightReadsAnEarlierStateFile: a state.json as nanobox-runc 0.1.0
// wrote it (before LoadLight) loads both ways, to the same state.
func TestLoadLightReadsAnEarlierStateFile(t *testing.T) {
	rt := &Runtime{Root: t.TempDir()}
	dir := filepath.Join(rt.Root, "s0")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const old = `{"id":"s0","initPid":14460,"initStartTime":1162317,"created":"2026-12-05T13:31:04.169096866Z","owner":"root",` +
		`"config":{"ociVersion":"1.0.2-dev","bundle":"/tmp/ab/bundle","rootfs":"/tmp/ab/bundle/rootfs","readonlyfs":true,"hostname":"runc",` +
		`"namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}],` +
		`"mounts":[{"source":"proc","destination":"/proc","type":"proc"},{"source":"tmpfs","destination":"/dev","type":"tmpfs","flags":16777218,"data":"mode=755,size=65536k"}],` +
		`"maskedPaths":["/proc/acpi","/proc/kcore"],"readonlyPaths":["/proc/bus"],"hooks":{},` +
		`"process":{"args":["/bin/true"],"env":["PATH=/usr/bin:/bin","TERM=xterm"],"cwd":"/","user":{"uid":0,"gid":0},` +
		`"capabilities":{"bounding":["CAP_KILL"],"effective":["CAP_KILL"],"permitted":["CAP_KILL"]},"rlimits":[{"type":7,"hard":1024,"soft":1024}],"noNewPrivileges":true},` +
		`"annotations":{"k":"v"}},` +
		`"cgroupPaths":{"freezer":"/sys/fs/cgroup/freezer/s0","memory":"/sys/fs/cgroup/memory/s0","pids":"/sys/fs/cgroup/pids/s0"}}`
	if err := os.WriteFile(filepath.Join(dir, stateFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	full, err := rt.Load("s0")
	if err != nil {
		t.Fatal(err)
	}
	light, err := rt.LoadLight("s0")
	if err != nil {
		t.Fatal(err)
	}
	h := light.c.headConfig()
	if h.OCIVersion != "1.0.2-dev" || h.Bundle != "/tmp/ab/bundle" || h.Rootfs != "/tmp/ab/bundle/rootfs" ||
		len(h.Namespaces) != 5 || h.Annotations["k"] != "v" || !light.c.ownPidNS() || !full.ownPidNS() ||
		light.c.st.InitStartTime != 1162317 || light.c.st.CgroupPaths["freezer"] != "/sys/fs/cgroup/freezer/s0" ||
		!light.c.st.Created.Equal(full.st.Created) {
		t.Fatalf("LoadLight read %+v %+v", light.c.st, h)
	}
	if full.Config().Process.Args[0] != "/bin/true" {
		t.Fatalf("Load read %+v", full.Config())
	}
}

// TestLightSignal: kill through LoadLight reaches a live init, refuses a
// recycled pid and a zombie (both stopped), as Load's Container does.
func TestLightSignal(t *testing.T) {
	rt := &Runtime{Root: t.TempDir()}
	write := func(id string, pid int, start uint64) *LightContainer {
		t.Helper()
		dir := filepath.Join(rt.Root, id)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// Its own pid namespace: a SIGKILL is for init alone.
		cfg := &Config{Namespaces: []Namespace{{Type: NEWPID}}}
		if err := writeState(dir, &persisted{ID: id, InitPid: pid, InitStartTime: start, Config: cfg}, false); err != nil {
			t.Fatal(err)
		}
		c, err := rt.LoadLight(id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	start := func(args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}

	live := start("sleep", "1000")
	c := write("live", live.Process.Pid, startTime(t, live.Process.Pid))
	if s := c.Status(); s != Running {
		t.Fatalf("status = %s, want running", s)
	}
	if err := c.Signal(unix.SIGKILL, false); err != nil {
		t.Fatalf("Signal(KILL) = %v", err)
	}
	err := live.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("sleep ended with %v, want killed by SIGKILL", err)
	}
	if err := c.Signal(unix.SIGKILL, false); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Signal to a reaped init = %v, want ErrNotRunning", err)
	}

	other := start("sleep", "1000")
	c = write("recycled", other.Process.Pid, startTime(t, other.Process.Pid)+1)
	if err := c.Signal(unix.SIGKILL, false); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "container not running") {
		t.Fatalf("Signal to a recycled pid = %v, want ErrNotRunning", err)
	}
	if ps, err := readProcStat(other.Process.Pid); err != nil || ps.State == 'Z' {
		t.Fatalf("the recycled pid's process was signalled: %+v, %v", ps, err)
	}

	zombie := start("true")
	zpid := zombie.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps, err := readProcStat(zpid)
		if err == nil && ps.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("true (pid %d) is not a zombie after 10s: %+v, %v", zpid, ps, err)
		}
		time.Sleep(time.Millisecond)
	}
	c = write("zombie", zpid, startTime(t, zpid))
	if s := c.Status(); s != Stopped {
		t.Fatalf("status of a zombie init = %s, want stopped", s)
	}
	if err := c.Signal(unix.SIGTERM, false); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Signal to a zombie init = %v, want ErrNotRunning", err)
	}
	if err := c.Signal(unix.SIGTERM, true); err != nil {
		t.Fatalf("Signal(all) to a stopped container without a cgroup = %v, want nil", err)
	}
}
