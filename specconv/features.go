package specconv

import (
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// Features describes what FromSpec accepts, for `nanobox-runc features`.
// Subsystems the runtime does not enforce yet (cgroups, seccomp, LSMs) are
// reported as not compiled in (false), never as unknown (nil), so engines
// do not assume them.
func Features() *features.Features {
	no := func() *bool { b := false; return &b }
	return &features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: specs.Version,
		Hooks:         []string{"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"},
		MountOptions:  KnownMountOptions(),
		Linux: &features.Linux{
			Namespaces:   KnownNamespaces(),
			Capabilities: KnownCapabilities(),
			Cgroup: &features.Cgroup{
				V1:          no(),
				V2:          no(),
				Systemd:     no(),
				SystemdUser: no(),
				Rdma:        no(),
			},
			Seccomp:         &features.Seccomp{Enabled: no()},
			Apparmor:        &features.Apparmor{Enabled: no()},
			Selinux:         &features.Selinux{Enabled: no()},
			IntelRdt:        &features.IntelRdt{Enabled: no()},
			MountExtensions: &features.MountExtensions{IDMap: &features.IDMap{Enabled: no()}},
			NetDevices:      &features.NetDevices{Enabled: no()},
		},
	}
}
