package libbox

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func u32p(v uint32) *uint32 { return &v }

func fullOptions() Options {
	return Options{
		Rootfs:   "/srv/root",
		Mounts:   []Bind{{Source: "/data/in", Target: "/input", ReadOnly: true}, {Source: "/data/out", Target: "/output"}},
		Tmpfs:    []Tmpfs{{Target: "/scratch", Size: 64 * MB}},
		WorkDir:  "/scratch",
		Env:      []string{"A=1", "B="},
		Hostname: "box",
		User:     User{UID: 1000, GID: 100, Umask: u32p(0o22)},
		Limits: Limits{
			Memory: 256 * MB, CPUs: 1.5, Pids: 64, WallTime: 1500 * time.Millisecond, CPUTime: 250 * time.Millisecond,
			OpenFiles: 128, FileSize: 16 * MB, Output: MB,
		},
		AllowDegraded: []LimitName{LimitMemory, LimitPids},
		Network:       HostNetwork(),
		Seccomp:       SeccompStrict(),
		Landlock:      &Landlock{ReadOnly: []string{"/usr"}, ReadWrite: []string{"/tmp"}},
		Namespaces:    Namespaces{HostUID: u32p(60000), HostGID: u32p(60000)},
		StateRoot:     "/run/x",
	}
}

// The contract: Go's Options marshal to the documented JSON and back.
func TestOptionsJSONRoundTrip(t *testing.T) {
	for _, o := range []Options{{}, fullOptions(), {Seccomp: CustomSeccomp(&Seccomp{DefaultAction: SeccompAllow, Syscalls: []SeccompRule{{Names: []string{"ptrace"}, Action: SeccompErrno}}})}} {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back Options
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(o, back) {
			t.Errorf("round trip of %s:\n got %+v\nwant %+v", b, back, o)
		}
	}
}

func TestOptionsJSONForm(t *testing.T) {
	b, err := json.Marshal(Options{})
	if err != nil || string(b) != `{"version":1}` {
		t.Errorf("zero options: %s %v", b, err)
	}
	b, err = json.Marshal(fullOptions())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	l := m["limits"].(map[string]any)
	// Sizes in bytes, durations in seconds: unambiguous numbers.
	for k, want := range map[string]float64{"memory": 268435456, "cpus": 1.5, "pids": 64, "wallTime": 1.5, "cpuTime": 0.25, "openFiles": 128, "fileSize": 16777216, "output": 1048576} {
		if l[k] != want {
			t.Errorf("limits.%s = %v, want %v", k, l[k], want)
		}
	}
	if m["seccomp"] != "strict" || m["network"].(map[string]any)["mode"] != "host" || m["version"] != 1.0 {
		t.Errorf("json %s", b)
	}
	if got := m["user"].(map[string]any); got["uid"] != 1000.0 || got["umask"] != 18.0 {
		t.Errorf("user %v", got)
	}
}

func TestOptionsJSONErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                          `"version" is missing`,
		`{"version": 2}`:              "contract version 2 is not supported",
		`{"version": 1, "memory": 5}`: `unknown field "memory"`,
		`{"version": 1, "limits": {"memroy": 5}}`:       `unknown field "memroy"`,
		`{"version": 1, "limits": {"wallTime": "30s"}}`: "a duration is a number of seconds",
		`{"version": 1, "seccomp": {"name": "x"}}`:      "seccomp is",
		`{"version": 1} {}`:                             "after top-level value",
	} {
		var o Options
		err := json.Unmarshal([]byte(in), &o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (&Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Rootfs: "rel"}, "rootfs: \"rel\" must be an absolute path"},
		{Options{Mounts: []Bind{{Source: "/x", Target: "rel"}}}, "mounts[0].target"},
		{Options{Mounts: []Bind{{Target: "/x"}}}, "mounts[0].source: is empty"},
		{Options{Mounts: []Bind{{Source: "/x", Target: "/"}}}, "cannot be /"},
		{Options{Mounts: []Bind{{Source: "/x", Target: "/proc/x"}}}, "inside /proc"},
		{Options{Tmpfs: []Tmpfs{{Target: "/t", Size: -1}}}, "tmpfs[0].size: must not be negative"},
		{Options{WorkDir: "tmp"}, "workDir"},
		{Options{Env: []string{"NOEQUALS"}}, "env[0]: \"NOEQUALS\" must be KEY=VALUE"},
		{Options{Env: []string{"=v"}}, "env[0]"},
		{Options{Hostname: "a b"}, "hostname"},
		{Options{User: User{AdditionalGids: []uint32{5}}}, "user.additionalGids"},
		{Options{Limits: Limits{Memory: -1}}, "limits.memory: must not be negative"},
		{Options{Limits: Limits{Memory: 1000}}, "limits.memory: 1000 bytes is too small"},
		{Options{Limits: Limits{CPUs: -1}}, "limits.cpus"},
		{Options{Limits: Limits{WallTime: -time.Second}}, "limits.wallTime"},
		{Options{AllowDegraded: []LimitName{"swap"}}, "allowDegraded[0]: unknown limit \"swap\""},
		{Options{Network: AllowDomains("10.0.0.1")}, "network.allow[0]: rule \"10.0.0.1\": rules name domains"},
		{Options{Network: Network{Mode: "bridge"}}, "unknown mode \"bridge\""},
		{Options{Network: Network{Allow: []string{"x"}}}, "need mode allowlist"},
		{Options{Seccomp: SeccompProfile{Name: "loose"}}, "unknown profile \"loose\""},
		{Options{Seccomp: SeccompProfile{Name: "strict", Custom: &Seccomp{}}}, "not both"},
		{Options{Seccomp: CustomSeccomp(&Seccomp{DefaultAction: "bogus"})}, "seccomp.profile"},
		{Options{Landlock: &Landlock{}}, "landlock: landlock: nothing to restrict"},
		{Options{Namespaces: Namespaces{None: true}, Network: HostNetwork()}, "add \"namespaces\" to allowDegraded"},
		{Options{StateRoot: "rel"}, "stateRoot"},
	} {
		err := tc.o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line containing %q", tc.o, err, tc.want)
		}
	}
	// Every problem at once, on one line.
	err := (&Options{WorkDir: "x", Limits: Limits{Pids: -1}}).Validate()
	if err == nil || !strings.Contains(err.Error(), "workDir") || !strings.Contains(err.Error(), "limits.pids") {
		t.Errorf("two errors: %v", err)
	}
}

func TestParseLimitName(t *testing.T) {
	for in, want := range map[string]LimitName{"memory": LimitMemory, "wall-time": LimitWallTime, "wallTime": LimitWallTime, "CPU-TIME": LimitCPUTime, "open-files": LimitOpenFiles, "namespaces": DegradeNamespaces} {
		if got, err := ParseLimitName(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := ParseLimitName("swap"); err == nil {
		t.Error("unknown name accepted")
	}
}

func TestReportJSON(t *testing.T) {
	r := Report{Version: 1, ID: "sb-1", Status: StatusCPUTimeout, ExitCode: 137, Signal: 9, SignalName: "SIGKILL",
		WallTime: 2500 * time.Millisecond, CPUUser: time.Second, CPUSystem: 250 * time.Millisecond,
		PeakMemory: 4096, PeakMemorySource: peakCgroupV1,
		Limits: map[LimitName]LimitReport{LimitCPUTime: {Requested: 1, Unit: "seconds", Status: LimitEnforced, Mechanism: "RLIMIT_CPU", Hit: true}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["wallTime"] != 2.5 || m["cpuUser"] != 1.0 || m["cpuSystem"] != 0.25 || m["status"] != "cpu-timeout" {
		t.Errorf("report json %s", b)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %v\n%+v\n%+v", err, back, r)
	}
}

func TestReportIsolate(t *testing.T) {
	var b strings.Builder
	r := Report{Status: StatusWallTimeout, Killed: true, Signal: 9, ExitCode: 137, WallTime: 3 * time.Second, CPUUser: 500 * time.Millisecond,
		PeakMemory: 10 << 20, PeakMemorySource: peakCgroupV2, VoluntaryContextSwitches: 3}
	if err := r.WriteIsolate(&b); err != nil {
		t.Fatal(err)
	}
	want := "time:0.500\ntime-wall:3.000\ncg-mem:10240\ncsw-voluntary:3\ncsw-forced:0\nexitsig:9\nkilled:1\nstatus:TO\nmessage:Time limit exceeded (wall clock)\n"
	if b.String() != want {
		t.Errorf("isolate meta:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	r = Report{Status: StatusExited, ExitCode: 3, PeakMemory: 2048, PeakMemorySource: peakRusage}
	_ = r.WriteIsolate(&b)
	if !strings.Contains(b.String(), "max-rss:2\n") || !strings.Contains(b.String(), "exitcode:3\nstatus:RE\n") {
		t.Errorf("isolate meta:\n%s", b.String())
	}
	b.Reset()
	r = Report{Status: StatusOK}
	_ = r.WriteIsolate(&b)
	if strings.Contains(b.String(), "status:") {
		t.Errorf("ok run has a status line:\n%s", b.String())
	}
}

func TestSandboxSeccompProfiles(t *testing.T) {
	def, err := SandboxSeccomp("default")
	if err != nil {
		t.Fatal(err)
	}
	strict, err := SandboxSeccomp("strict")
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(s *Seccomp, name string) bool {
		for _, r := range s.Syscalls {
			if r.Action == SeccompAllow {
				for _, n := range r.Names {
					if n == name {
						return true
					}
				}
			}
		}
		return false
	}
	for _, n := range []string{"read", "write", "execve", "clone", "wait4", "mmap"} {
		if !allowed(def, n) || !allowed(strict, n) {
			t.Errorf("%s is not allowed", n)
		}
	}
	for _, n := range []string{"keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter", "bpf", "mount", "unshare", "setns", "userfaultfd", "perf_event_open"} {
		if allowed(def, n) || allowed(strict, n) {
			t.Errorf("%s is allowed", n)
		}
	}
	for _, n := range strictDenied {
		if !allowed(def, n) || allowed(strict, n) {
			t.Errorf("%s: default %v strict %v", n, allowed(def, n), allowed(strict, n))
		}
	}
	if strict.Architectures != nil {
		t.Errorf("strict filters other architectures: %v", strict.Architectures)
	}
	// Copies: changing one does not change the next.
	def.Syscalls[0].Names[0] = "changed"
	again, _ := SandboxSeccomp("default")
	if again.Syscalls[0].Names[0] == "changed" {
		t.Error("SandboxSeccomp returned shared data")
	}
	if none, err := SandboxSeccomp("none"); none != nil || err != nil {
		t.Errorf("none: %v %v", none, err)
	}
}
