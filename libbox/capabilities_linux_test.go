package libbox

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCapabilityTable(t *testing.T) {
	if len(allCapabilities) != 41 {
		t.Fatalf("table has %d capabilities, want 41 (CAP_CHOWN..CAP_CHECKPOINT_RESTORE)", len(allCapabilities))
	}
	seen := map[string]bool{}
	for n, name := range allCapabilities {
		if !strings.HasPrefix(name, "CAP_") {
			t.Errorf("capability %d is named %q", n, name)
		}
		if seen[name] {
			t.Errorf("%s appears twice", name)
		}
		seen[name] = true
	}
	for name, want := range map[string]int{
		"CAP_CHOWN": 0, "CAP_KILL": 5, "CAP_NET_BIND_SERVICE": 10, "CAP_SYS_ADMIN": 21,
		"CAP_AUDIT_WRITE": 29, "CAP_PERFMON": 38, "CAP_BPF": 39, "CAP_CHECKPOINT_RESTORE": 40,
	} {
		if allCapabilities[want] != name {
			t.Errorf("capability %d is %s, want %s", want, allCapabilities[want], name)
		}
	}
}

func TestKnownCapabilitiesFollowKernel(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		t.Skipf("cannot read cap_last_cap: %v", err)
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	last = min(last, len(allCapabilities)-1)
	known := KnownCapabilities()
	if len(known) != last+1 {
		t.Fatalf("KnownCapabilities has %d names, kernel's last cap is %d", len(known), last)
	}
	if known[0] != "CAP_CHOWN" || known[last] != allCapabilities[last] {
		t.Errorf("KnownCapabilities = %v", known)
	}
	names := capabilityNames()
	if len(names) != last+1 {
		t.Errorf("capabilityNames has %d entries, want %d", len(names), last+1)
	}
	for i, n := range known {
		if names[n] != i {
			t.Errorf("capabilityNames[%s] = %d, want %d", n, names[n], i)
		}
	}
	// Changing the returned slice must not change the table.
	known[0] = "x"
	if KnownCapabilities()[0] != "CAP_CHOWN" {
		t.Error("KnownCapabilities returned the table itself")
	}
}

func TestCapabilityByName(t *testing.T) {
	if c, err := CapabilityByName("CAP_NET_ADMIN"); err != nil || c != unix.CAP_NET_ADMIN {
		t.Errorf("CapabilityByName(CAP_NET_ADMIN) = %d, %v", c, err)
	}
	for _, bad := range []string{"CAP_FOO", "cap_kill", "KILL", ""} {
		if _, err := CapabilityByName(bad); err == nil {
			t.Errorf("CapabilityByName(%q) succeeded", bad)
		} else if !strings.Contains(err.Error(), "unknown capability") {
			t.Errorf("CapabilityByName(%q): %v", bad, err)
		}
	}
	if lastCapability() < unix.CAP_CHECKPOINT_RESTORE {
		_, err := CapabilityByName("CAP_CHECKPOINT_RESTORE")
		if err == nil || !strings.Contains(err.Error(), "not supported by the running kernel") {
			t.Errorf("CapabilityByName(CAP_CHECKPOINT_RESTORE) on an old kernel: %v", err)
		}
	}
}

func mask(names ...string) capMask {
	var m capMask
	for _, n := range names {
		m |= 1 << uint(slices.Index(allCapabilities[:], n))
	}
	return m
}

func TestPlanCapabilities(t *testing.T) {
	// No capabilities field grants nothing, as in runc.
	plan, err := planCapabilities(nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan != (capPlan{}) {
		t.Errorf("plan without capabilities = %+v", plan)
	}

	plan, err = planCapabilities(&Capabilities{})
	if err != nil || plan != (capPlan{}) {
		t.Errorf("empty capabilities: plan %+v, err %v", plan, err)
	}

	plan, err = planCapabilities(&Capabilities{
		Bounding:    []string{"CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NO_SUCH_THING"},
		Effective:   []string{"CAP_NET_BIND_SERVICE"},
		Permitted:   []string{"CAP_KILL", "CAP_NET_BIND_SERVICE"},
		Inheritable: []string{"CAP_NET_BIND_SERVICE"},
		Ambient:     []string{"CAP_NET_BIND_SERVICE"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := capPlan{
		bounding:    mask("CAP_KILL", "CAP_NET_BIND_SERVICE"),
		effective:   mask("CAP_NET_BIND_SERVICE"),
		permitted:   mask("CAP_KILL", "CAP_NET_BIND_SERVICE"),
		inheritable: mask("CAP_NET_BIND_SERVICE"),
		ambient:     mask("CAP_NET_BIND_SERVICE"),
	}
	if plan != want {
		t.Errorf("plan = %+v, want %+v", plan, want)
	}

	for _, tc := range []struct {
		caps Capabilities
		want string
	}{
		{
			Capabilities{Permitted: []string{"CAP_KILL"}, Ambient: []string{"CAP_KILL"}},
			"ambient capabilities CAP_KILL must also be in the permitted and inheritable sets",
		},
		{
			Capabilities{Inheritable: []string{"CAP_KILL", "CAP_CHOWN"}, Ambient: []string{"CAP_KILL", "CAP_CHOWN"}},
			"ambient capabilities CAP_CHOWN, CAP_KILL must also be in the permitted and inheritable sets",
		},
		{
			Capabilities{Effective: []string{"CAP_KILL"}},
			"effective capabilities CAP_KILL must also be in the permitted set",
		},
	} {
		_, err := planCapabilities(&tc.caps)
		if err == nil || err.Error() != tc.want {
			t.Errorf("planCapabilities(%+v) = %v, want %q", tc.caps, err, tc.want)
		}
	}
}

// A config the kernel would refuse halfway fails before setupProcess changes
// anything, so it is safe to call here.
func TestSetupProcessRejectsBadCapabilitiesFirst(t *testing.T) {
	_, _, err := setupProcess(&Process{
		User:         User{UID: 4242},
		Rlimits:      []Rlimit{{Type: unix.RLIMIT_NOFILE, Soft: 1, Hard: 1}},
		Capabilities: &Capabilities{Ambient: []string{"CAP_KILL"}},
	}, false, false)
	want := "set capabilities: ambient capabilities CAP_KILL must also be in the permitted and inheritable sets"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Cur == 1 {
		t.Fatal("rlimits were applied before the capability check")
	}
}

func TestCapsetRefusal(t *testing.T) {
	all := mask(KnownCapabilities()...)
	kill, nbs := mask("CAP_KILL"), mask("CAP_NET_BIND_SERVICE")
	for _, tc := range []struct {
		name     string
		old      capState
		bounding capMask
		want     capState
		reason   string
	}{
		{
			"permitted beyond the runtime's", capState{permitted: kill, effective: kill}, all,
			capState{permitted: kill | mask("CAP_SYS_RESOURCE")},
			"the runtime itself does not hold CAP_SYS_RESOURCE, so it cannot grant them",
		},
		{
			"inheritable outside bounding", capState{permitted: kill | nbs}, kill,
			capState{permitted: nbs, inheritable: nbs},
			"inheritable capabilities CAP_NET_BIND_SERVICE are not in the bounding set",
		},
		{
			"inheritable beyond permitted without CAP_SETPCAP", capState{permitted: kill}, all,
			capState{permitted: kill, inheritable: nbs},
			"inheritable capabilities CAP_NET_BIND_SERVICE are not in the permitted set",
		},
		{
			"nothing to say", capState{permitted: all, effective: all}, all,
			capState{permitted: kill, effective: kill}, "",
		},
	} {
		if got := capsetRefusal(tc.old, tc.bounding, tc.want); got != tc.reason {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.reason)
		}
	}
}

func TestGrantable(t *testing.T) {
	kill, res, nbs, setpcap := mask("CAP_KILL"), mask("CAP_SYS_RESOURCE"), mask("CAP_NET_BIND_SERVICE"), mask("CAP_SETPCAP")
	old := capState{permitted: kill | nbs | setpcap, effective: kill | nbs | setpcap}
	plan := capPlan{bounding: kill | res, permitted: kill | res, effective: kill | res, inheritable: kill | res, ambient: kill | res}
	got, missing := grantable(plan, old, kill|nbs|setpcap)
	want := capPlan{bounding: kill | res, permitted: kill, effective: kill, inheritable: kill, ambient: kill}
	if got != want || missing != res {
		t.Errorf("got %+v missing %v, want %+v missing %v", got, missing.names(), want, res.names())
	}
	// Without CAP_SETPCAP, inheritable comes from permitted only.
	old.effective &^= setpcap
	got, missing = grantable(capPlan{inheritable: nbs | res}, old, kill|nbs|res)
	if got.inheritable != nbs || missing != res {
		t.Errorf("inheritable %v missing %v", got.inheritable.names(), missing.names())
	}
	// Nothing left out: nothing reported.
	if _, missing := grantable(capPlan{permitted: kill, effective: kill}, old, kill); missing != 0 {
		t.Errorf("missing %v", missing.names())
	}
}
