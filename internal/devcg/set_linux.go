package devcg

import (
	"fmt"
	"strings"

	"github.com/moby/sys/userns"
	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// SetV1 makes the v1 devices cgroup at path enforce r's device rules
// (cgroups.DevicesSetV1). Inside a user namespace the devices controller
// cannot be written and the namespace itself keeps device nodes out of
// reach, so nothing is done there.
func SetV1(path string, r *cgroups.Resources) error {
	if r.SkipDevices || userns.RunningInUserNS() {
		return nil
	}
	target, err := Build(r.Devices)
	if err != nil {
		return err
	}
	current, err := readV1(path)
	if err != nil {
		return err
	}
	// Consecutive writes to one file go through one open of it; the
	// kernel takes each write(2) as one rule.
	writes := Transition(current, target)
	for i := 0; i < len(writes); {
		var lines []string
		j := i
		for ; j < len(writes) && writes[j].Allow == writes[i].Allow; j++ {
			lines = append(lines, writes[j].Line)
		}
		if err := cgroups.WriteFileByLine(path, writes[i].File(), strings.Join(lines, "\n")); err != nil {
			return err
		}
		i = j
	}
	// What the kernel has now must be what was asked for. Of a cgroup
	// that allows by default, the list shows only that, not the
	// exceptions.
	after, err := readV1(path)
	if err != nil {
		return err
	}
	if after.AllowByDefault != target.AllowByDefault || (!target.AllowByDefault && !after.Equal(target)) {
		return fmt.Errorf("the devices cgroup %s does not hold the device rules after writing them (it lists %s, the rules make %s): its parent may not allow what they allow, or another process changed it at the same time",
			path, after, target)
	}
	return nil
}

func readV1(path string) (*State, error) {
	list, err := cgroups.ReadFile(path, "devices.list")
	if err != nil {
		return nil, err
	}
	s, err := ParseList(list)
	if err != nil {
		return nil, fmt.Errorf("%s/devices.list: %w", path, err)
	}
	return s, nil
}

// SetV2 attaches to the cgroup v2 directory dir a device program that
// enforces r's device rules (cgroups.DevicesSetV2), in place of the one
// attached before. Where no program can be loaded, that is not an error
// in a user namespace (a user namespace cannot reach a device node it
// was not given) or when the rules allow every device anyway.
func SetV2(dir string, r *cgroups.Resources) error {
	if r.SkipDevices {
		return nil
	}
	target, err := Build(r.Devices)
	if err != nil {
		return err
	}
	code, err := Program(target)
	if err != nil {
		return err
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cgroup %s for its device program: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := install(fd, code); err != nil {
		if userns.RunningInUserNS() || (target.AllowByDefault && len(target.Exceptions) == 0) {
			return nil
		}
		return fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return nil
}
