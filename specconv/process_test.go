package specconv

import (
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: "0", want: []int{0}},
		{in: "0-3,7", want: []int{0, 1, 2, 3, 7}},
		{in: "7,0-1,1", want: []int{0, 1, 7}},
		{in: "2-2\n", want: []int{2}},
		{in: "8191", want: []int{8191}},
		{in: "0-8191,0-8191,0-8191", want: func() []int {
			var all []int
			for c := range libbox.MaxCPU + 1 {
				all = append(all, c)
			}
			return all
		}()},
		{in: "1,", err: `"" is not a CPU number`},
		{in: "-1", err: `"" is not a CPU number`},
		{in: "+1", err: `"+1" is not a CPU number`},
		{in: "1-2-3", err: `"2-3" is not a CPU number`},
		{in: "a", err: `"a" is not a CPU number`},
		{in: "5-4", err: "range 5-4 goes backwards"},
		{in: "8192", err: "CPU 8192 is above the highest CPU number"},
		{in: "99999999999999999999", err: "is not a CPU number"},
	} {
		got, err := ParseCPUList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCPUList(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestProcessSchedulingFields(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Process.Scheduler = &specs.Scheduler{
		Policy: specs.SchedDeadline, Runtime: 10_000, Deadline: 20_000, Period: 30_000,
		Flags: []specs.LinuxSchedulerFlag{specs.SchedFlagResetOnFork, specs.SchedFlagDLOverrun},
	}
	spec.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_IDLE, Priority: 7}
	spec.Process.ExecCPUAffinity = &specs.CPUAffinity{Initial: "0", Final: "1-2"}
	c, _ := mustConvert(t, spec, Options{})
	p := c.Process
	want := libbox.Scheduler{Policy: unix.SCHED_DEADLINE, Runtime: 10_000, Deadline: 20_000, Period: 30_000,
		Flags: unix.SCHED_FLAG_RESET_ON_FORK | unix.SCHED_FLAG_DL_OVERRUN}
	if p.Scheduler == nil || *p.Scheduler != want {
		t.Errorf("scheduler %+v, want %+v", p.Scheduler, want)
	}
	if p.IOPriority == nil || *p.IOPriority != (libbox.IOPriority{Class: libbox.IOPrioClassIdle, Priority: 7}) {
		t.Errorf("io priority %+v", p.IOPriority)
	}
	if a := p.ExecCPUAffinity; a == nil || !slices.Equal(a.Initial, []int{0}) || !slices.Equal(a.Final, []int{1, 2}) {
		t.Errorf("exec cpu affinity %+v", a)
	}

	// Nice and priority pass through; empty affinity strings are no affinity.
	spec.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedRR, Priority: 99}
	spec.Process.ExecCPUAffinity = &specs.CPUAffinity{}
	c, _ = mustConvert(t, spec, Options{})
	if s := c.Process.Scheduler; s == nil || s.Policy != unix.SCHED_RR || s.Priority != 99 {
		t.Errorf("scheduler %+v", s)
	}
	if c.Process.ExecCPUAffinity != nil {
		t.Errorf("empty execCPUAffinity became %+v", c.Process.ExecCPUAffinity)
	}
	spec.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: -20}
	c, _ = mustConvert(t, spec, Options{})
	if s := c.Process.Scheduler; s == nil || s.Policy != unix.SCHED_NORMAL || s.Nice != -20 {
		t.Errorf("scheduler %+v", s)
	}
}
