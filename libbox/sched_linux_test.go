package libbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// schedArgs make the helper print its scheduling policy, rt priority and
// nice value (fields 41, 40 and 19 of /proc/PID/stat, read by the shell's
// own cat child, which inherits them) and its I/O priority.
var schedArgs = []string{"busybox", "sh", "-c",
	`set -- $(busybox cut -d')' -f2- /proc/self/stat); echo "policy=${39} rtprio=${38} nice=${17}"; busybox ionice`}

func TestSetupProcessScheduling(t *testing.T) {
	requireRootAndBusybox(t)
	for _, tc := range []struct {
		name  string
		p     Process
		want  string
		skip  string // when the output contains this
		attr  bool   // in a user namespace
		isErr bool
	}{
		{
			name: "batch, nice and idle I/O",
			p: Process{Scheduler: &Scheduler{Policy: unix.SCHED_BATCH, Nice: 7},
				IOPriority: &IOPriority{Class: IOPrioClassIdle}},
			want: "policy=3 rtprio=0 nice=7\nidle",
		},
		{
			name: "idle policy, best-effort level 6",
			p:    Process{Scheduler: &Scheduler{Policy: unix.SCHED_IDLE}, IOPriority: &IOPriority{Class: IOPrioClassBE, Priority: 6}},
			want: "policy=5 rtprio=0 nice=0\nbest-effort: prio 6",
		},
		{
			name: "fifo and real-time I/O as root",
			p: Process{Scheduler: &Scheduler{Policy: unix.SCHED_FIFO, Priority: 5},
				IOPriority: &IOPriority{Class: IOPrioClassRT, Priority: 2}},
			want: "policy=1 rtprio=5 nice=0\nrealtime: prio 2",
			// A cgroup v1 cpu controller with RT group scheduling and no
			// budget for the test's cgroup refuses any real-time policy.
			skip: "operation not permitted",
		},
		{
			name:  "SCHED_ISO",
			p:     Process{Scheduler: &Scheduler{Policy: schedISO}},
			want:  "ERR: set process.scheduler: sched_setattr SCHED_ISO: invalid argument: SCHED_ISO is not implemented by Linux",
			isErr: true,
		},
		{
			name:  "negative nice in a user namespace",
			p:     Process{Scheduler: &Scheduler{Policy: unix.SCHED_NORMAL, Nice: -5}},
			attr:  true,
			want:  "ERR: set process.scheduler: sched_setattr SCHED_OTHER: operation not permitted: a nice value below the current one needs CAP_SYS_NICE",
			isErr: true,
		},
		{
			name:  "real-time policy in a user namespace",
			p:     Process{Scheduler: &Scheduler{Policy: unix.SCHED_RR, Priority: 1}},
			attr:  true,
			want:  "ERR: set process.scheduler: sched_setattr SCHED_RR: operation not permitted: a real-time policy needs CAP_SYS_NICE",
			isErr: true,
		},
		{
			name:  "real-time I/O in a user namespace",
			p:     Process{IOPriority: &IOPriority{Class: IOPrioClassRT}},
			attr:  true,
			want:  "ERR: set process.ioPriority: ioprio_set class 1 level 0: operation not permitted: IOPRIO_CLASS_RT needs CAP_SYS_NICE or CAP_SYS_ADMIN",
			isErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attr *syscall.SysProcAttr
			if tc.attr {
				requireUserNS(t)
				attr = userNSAttr()
			}
			if tc.p.Args == nil {
				tc.p.Args = schedArgs
			}
			out := strings.TrimSpace(runHelper(t, setupHelperSpec{Process: tc.p, Rootless: tc.attr}, attr))
			if tc.skip != "" && strings.Contains(out, tc.skip) {
				t.Skipf("not allowed here: %s", out)
			}
			if tc.isErr && !strings.HasPrefix(out, tc.want) || !tc.isErr && out != tc.want {
				t.Errorf("got  %q\nwant %q", out, tc.want)
			}
		})
	}
}

// onLockedThread runs f on a new OS thread that is thrown away afterwards,
// so an affinity it sets cannot leak into other tests.
func onLockedThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with us
		defer close(done)
		f()
	}()
	<-done
}

func allowedCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := range MaxCPU + 1 {
		if c < len(set)*64 && set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

func threadCPUs(t *testing.T) string {
	t.Helper()
	set := unix.NewCPUSet(MaxCPU + 1)
	if err := unix.SchedGetaffinityDynamic(0, set); err != nil {
		t.Error(err)
		return ""
	}
	var cpus []int
	for c := range MaxCPU + 1 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return formatCPUList(cpus)
}

func TestStartPinned(t *testing.T) {
	all := allowedCPUs(t)
	last := all[len(all)-1]
	before := formatCPUList(all)
	var childOut strings.Builder
	cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	cmd.Stdout = &childOut
	_, err := startPinned(&CPUAffinity{Initial: []int{last}}, func() (*procHandle, error) {
		err := cmd.Start()
		return nil, err
	})
	if err != nil {
		t.Skipf("grep: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(childOut.String()), fmt.Sprintf("Cpus_allowed_list:\t%d", last); got != want {
		t.Errorf("child: %q, want %q", got, want)
	}
	// The runtime's own threads keep their affinity.
	if got := formatCPUList(allowedCPUs(t)); got != before {
		t.Errorf("caller's affinity changed: %s, was %s", got, before)
	}

	_, err = startPinned(&CPUAffinity{Initial: []int{MaxCPU}}, func() (*procHandle, error) {
		t.Error("start ran despite the affinity error")
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "process.execCPUAffinity.initial: sched_setaffinity 8191: invalid argument: none of these CPUs is online") {
		t.Errorf("error %v", err)
	}
}

func TestApplyExecAffinity(t *testing.T) {
	all := allowedCPUs(t)
	first := all[0]
	onLockedThread(func() {
		if err := applyExecAffinity(&CPUAffinity{Final: []int{first}}); err != nil {
			t.Fatal(err)
		}
		if got := threadCPUs(t); got != fmt.Sprint(first) {
			t.Errorf("final: thread runs on %s, want %d", got, first)
		}
		// Only an initial set: left alone (runtime-spec, runc), not reset.
		if len(all) > 1 {
			if err := setThreadAffinity(all); err != nil {
				t.Fatal(err)
			}
			if err := applyExecAffinity(&CPUAffinity{Initial: []int{first}}); err != nil {
				t.Fatal(err)
			}
			if got, want := threadCPUs(t), formatCPUList(all); got != want {
				t.Errorf("initial only: thread runs on %s, want it left on %s", got, want)
			}
			if err := setThreadAffinity([]int{first}); err != nil {
				t.Fatal(err)
			}
			if err := applyExecAffinity(&CPUAffinity{Initial: all}); err != nil {
				t.Fatal(err)
			}
			if got := threadCPUs(t); got != fmt.Sprint(first) {
				t.Errorf("initial only: thread runs on %s, want it left on %d", got, first)
			}
		}
		err := applyExecAffinity(&CPUAffinity{Final: []int{MaxCPU}})
		if err == nil || !strings.HasPrefix(err.Error(), "process.execCPUAffinity.final: sched_setaffinity 8191: invalid argument") {
			t.Errorf("error %v", err)
		}
	})
}

func parseCPUListForTest(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if ok {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, err
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

func TestFormatCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1, 2, 3, 7, 9, 10}, "0-3,7,9-10"},
		{[]int{0, 2, 4}, "0,2,4"},
	} {
		if got := formatCPUList(tc.in); got != tc.want {
			t.Errorf("formatCPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestResetAffinity(t *testing.T) {
	all := allowedCPUs(t)
	if len(all) < 2 {
		t.Skip("needs two CPUs to tell a pinned process from a reset one")
	}
	// A process that inherited a narrower affinity (as from a runtime
	// started by taskset) runs on every CPU the test may use once reset.
	cmd := exec.Command("sleep", "10")
	_, err := startPinned(&CPUAffinity{Initial: all[:1]}, func() (*procHandle, error) {
		err := cmd.Start()
		return nil, err
	})
	if err != nil {
		t.Skipf("sleep: %v", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	cpusOf := func() string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				return strings.TrimSpace(v)
			}
		}
		t.Fatal("no Cpus_allowed_list")
		return ""
	}
	if got, want := cpusOf(), strconv.Itoa(all[0]); got != want {
		t.Fatalf("pinned child on %s, want %s", got, want)
	}
	if err := resetAffinity(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if got, want := cpusOf(), formatCPUList(all); got != want {
		t.Errorf("reset child on %s, want %s", got, want)
	}
	if err := resetAffinity(1 << 30); err == nil || !strings.Contains(err.Error(), "reset the CPU affinity of pid 1073741824: sched_setaffinity: no such process") {
		t.Errorf("error %v", err)
	}
}
