package specconv

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Example returns the spec `nanobox-runc spec` writes: runc's default
// config.json (libcontainer/specconv/example.go), hostname aside. Like runc,
// it adds a cgroup namespace only on a cgroup v2 (unified) host.
func Example() *specs.Spec {
	caps := func() []string { return []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"} }
	spec := &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "rootfs", Readonly: true},
		Process: &specs.Process{
			Terminal: true,
			User:     specs.User{},
			Args:     []string{"sh"},
			Env: []string{
				"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"TERM=xterm",
			},
			Cwd:             "/",
			NoNewPrivileges: true,
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  caps(),
				Permitted: caps(),
				Effective: caps(),
			},
			Rlimits: []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
		},
		Hostname: "nanobox",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
		},
		Linux: &specs.Linux{
			MaskedPaths: []string{
				"/proc/acpi",
				"/proc/asound",
				"/proc/kcore",
				"/proc/keys",
				"/proc/latency_stats",
				"/proc/timer_list",
				"/proc/timer_stats",
				"/proc/sched_debug",
				"/sys/firmware",
				"/proc/scsi",
				"/sys/devices/virtual/tpm",
			},
			ReadonlyPaths: []string{
				"/proc/bus",
				"/proc/fs",
				"/proc/irq",
				"/proc/sys",
				"/proc/sysrq-trigger",
			},
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace},
				{Type: specs.NetworkNamespace},
				{Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace},
				{Type: specs.MountNamespace},
			},
		},
	}
	if host.cgroup2Unified() {
		spec.Linux.Namespaces = append(spec.Linux.Namespaces, specs.LinuxNamespace{Type: specs.CgroupNamespace})
	}
	return spec
}

// ToRootless adapts spec for a runtime without root, as runc's does: a new
// user namespace mapping the caller's euid/egid to 0, no network namespace
// (an unprivileged caller could not connect it to anything), /sys bound from
// the host (sysfs cannot be mounted without owning the network namespace),
// no uid=/gid= mount options (those ids are unmapped) and no cgroup limits.
func ToRootless(spec *specs.Spec) {
	if spec.Linux == nil {
		spec.Linux = &specs.Linux{}
	}
	var namespaces []specs.LinuxNamespace
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type != specs.NetworkNamespace && ns.Type != specs.UserNamespace {
			namespaces = append(namespaces, ns)
		}
	}
	spec.Linux.Namespaces = append(namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
	spec.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(os.Geteuid()), Size: 1}}
	spec.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(os.Getegid()), Size: 1}}

	var mounts []specs.Mount
	for _, m := range spec.Mounts {
		if filepath.Clean(m.Destination) == "/sys" {
			mounts = append(mounts, specs.Mount{
				Destination: "/sys",
				Type:        "none",
				Source:      "/sys",
				Options:     []string{"rbind", "nosuid", "noexec", "nodev", "ro"},
			})
			continue
		}
		var options []string
		for _, o := range m.Options {
			if !strings.HasPrefix(o, "uid=") && !strings.HasPrefix(o, "gid=") {
				options = append(options, o)
			}
		}
		m.Options = options
		mounts = append(mounts, m)
	}
	spec.Mounts = mounts
	spec.Linux.Resources = nil
}
