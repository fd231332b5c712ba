package devcg

import (
	"os"
	"reflect"
	"slices"
	"testing"

	systemdDbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
)

func propValues(t *testing.T, props []systemdDbus.Property) []any {
	t.Helper()
	var vs []any
	for _, p := range props {
		vs = append(vs, p.Name, p.Value.Value())
	}
	return vs
}

func TestSystemdProperties(t *testing.T) {
	// Before 240 a device is named only through its /dev/char link, which
	// hosts without udev do not have.
	oldNull := []deviceAllow{{"char-*", "m"}, {"/dev/char/1:3", "rwm"}, {"char-pts", "rw"}}
	if _, err := os.Stat("/dev/char/1:3"); err != nil {
		oldNull = slices.Delete(oldNull, 1, 2)
	}
	defaults := []*devices.Rule{
		rule(false, 'a', w, w, "rwm"), rule(true, 'c', w, w, "m"), rule(true, 'c', 1, 3, "rwm"),
		rule(true, 'c', 136, w, "rw"), rule(true, 'b', w, 5, "r"),
	}
	for _, tc := range []struct {
		name  string
		rules []*devices.Rule
		sdVer int
		want  []any
	}{
		{"allow all", []*devices.Rule{rule(true, 'a', w, w, "rwm")}, 250, []any{
			"DeviceAllow", []deviceAllow{}, "DevicePolicy", "auto",
		}},
		{"allow by default with exceptions: nothing until the cgroup has the rules", []*devices.Rule{rule(true, 'a', w, w, "rwm"), rule(false, 'c', 1, 3, "w")}, 250, []any{
			"DeviceAllow", []deviceAllow{}, "DevicePolicy", "strict",
		}},
		{"deny by default, systemd 240 and later", defaults, 250, []any{
			"DeviceAllow", []deviceAllow{}, "DevicePolicy", "strict",
			// Sorted by numbers; "b *:5" cannot be said to systemd.
			"DeviceAllow", []deviceAllow{{"char-*", "m"}, {"/dev/char/1:3", "rwm"}, {"char-136", "rw"}},
		}},
		{"deny by default, older systemd: the group's name", defaults, 239, []any{
			"DeviceAllow", []deviceAllow{}, "DevicePolicy", "strict",
			"DeviceAllow", oldNull,
		}},
		{"deny everything", []*devices.Rule{rule(false, 'a', w, w, "rwm")}, 250, []any{
			"DeviceAllow", []deviceAllow{}, "DevicePolicy", "strict", "DeviceAllow", []deviceAllow{},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props, err := SystemdProperties(&cgroups.Resources{Devices: tc.rules}, tc.sdVer)
			if err != nil {
				t.Fatal(err)
			}
			if got := propValues(t, props); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if props, err := SystemdProperties(&cgroups.Resources{SkipDevices: true, Devices: defaults}, 250); err != nil || props != nil {
		t.Fatalf("SkipDevices: %v, %v", props, err)
	}
	if _, err := SystemdProperties(&cgroups.Resources{Devices: []*devices.Rule{rule(true, 'c', w, w, "rwm"), rule(false, 'c', 1, 3, "r")}}, 250); err == nil {
		t.Fatal("a rule that cannot take effect was accepted")
	}
}
