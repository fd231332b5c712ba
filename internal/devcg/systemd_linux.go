package devcg

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	systemdDbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
)

// deviceAllow is one entry of a unit's DeviceAllow (D-Bus a(ss)).
type deviceAllow struct {
	Path  string
	Perms string
}

func prop(name string, v any) systemdDbus.Property {
	return systemdDbus.Property{Name: name, Value: dbus.MakeVariant(v)}
}

// SystemdProperties are the DevicePolicy and DeviceAllow properties of a
// systemd unit for r's device rules (systemd.GenerateDeviceProps),
// systemd being version sdVer. systemd knows only allow lists: rules that
// allow by default become DevicePolicy=auto when they have no exceptions
// and a unit that allows nothing otherwise; an exception systemd cannot
// name (a wildcard major with a number as minor; before version 240, a
// group of devices /proc/devices does not list or a device with no node
// in /dev) is left out. Either way the container's devices cgroup, which
// the cgroup manager writes after systemd, holds the exact rules.
func SystemdProperties(r *cgroups.Resources, sdVer int) ([]systemdDbus.Property, error) {
	if r.SkipDevices {
		return nil, nil
	}
	s, err := Build(r.Devices)
	if err != nil {
		return nil, err
	}
	if s.AllowByDefault {
		policy := "strict"
		if len(s.Exceptions) == 0 {
			policy = "auto"
		}
		return []systemdDbus.Property{prop("DeviceAllow", []deviceAllow{}), prop("DevicePolicy", policy)}, nil
	}
	allow := []deviceAllow{}
	for _, k := range sortedKeys(s.Exceptions) {
		kind := "char"
		if k.Type == devices.BlockDevice {
			kind = "block"
		}
		group := kind + "-"
		var path string
		switch {
		case k.Major == devices.Wildcard && k.Minor == devices.Wildcard:
			path = group + "*"
		case k.Major == devices.Wildcard:
			continue
		case k.Minor == devices.Wildcard && sdVer >= 240:
			path = group + strconv.FormatInt(k.Major, 10)
		case k.Minor == devices.Wildcard:
			name, err := deviceGroup(k.Type, k.Major)
			if err != nil {
				return nil, err
			}
			if name == "" {
				continue
			}
			path = group + name
		default:
			path = fmt.Sprintf("/dev/%s/%d:%d", kind, k.Major, k.Minor)
			if sdVer < 240 {
				if _, err := os.Stat(path); err != nil {
					continue
				}
			}
		}
		allow = append(allow, deviceAllow{Path: path, Perms: s.Exceptions[k].String()})
	}
	// DeviceAllow is given empty first: systemd appends to the list, and
	// an empty one resets it.
	return []systemdDbus.Property{
		prop("DeviceAllow", []deviceAllow{}),
		prop("DevicePolicy", "strict"),
		prop("DeviceAllow", allow),
	}, nil
}

// deviceGroup is the name /proc/devices gives the devices of type typ
// with the major number, or "" if it lists none.
func deviceGroup(typ devices.Type, major int64) (string, error) {
	f, err := os.Open("/proc/devices")
	if err != nil {
		return "", err
	}
	defer f.Close()
	section := map[devices.Type]string{devices.CharDevice: "Character devices:", devices.BlockDevice: "Block devices:"}[typ]
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasSuffix(line, "devices:") {
			in = line == section
			continue
		}
		num, name, ok := strings.Cut(line, " ")
		if in && ok && num == strconv.FormatInt(major, 10) {
			return name, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read /proc/devices: %w", err)
	}
	return "", nil
}
