package specconv

import (
	"strconv"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// Features describes what FromSpec accepts, for `nanobox-runc features`.
// Subsystems the runtime does not enforce (yet) are reported as not
// compiled in (false), never as unknown (nil), so engines do not assume
// them.
func Features() *features.Features {
	no := func() *bool { b := false; return &b }
	yes := func() *bool { b := true; return &b }
	seccomp, libseccompVersion := seccompFeatures()
	return &features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: specs.Version,
		Hooks:         []string{"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"},
		MountOptions:  KnownMountOptions(),
		Linux: &features.Linux{
			Namespaces:   KnownNamespaces(),
			Capabilities: KnownCapabilities(),
			// cgroupfs on v1, hybrid and v2 hosts; no systemd driver.
			Cgroup: &features.Cgroup{
				V1:          yes(),
				V2:          yes(),
				Systemd:     no(),
				SystemdUser: no(),
				Rdma:        yes(),
			},
			Seccomp:         seccomp,
			Apparmor:        &features.Apparmor{Enabled: yes()},
			Selinux:         &features.Selinux{Enabled: no()},
			IntelRdt:        &features.IntelRdt{Enabled: no()},
			MountExtensions: &features.MountExtensions{IDMap: &features.IDMap{Enabled: yes()}},
			MemoryPolicy:    memoryPolicyFeatures(),
			NetDevices:      &features.NetDevices{Enabled: yes()},
		},
		// Annotations that change what a container may do, for engines
		// that pass a pod's or a user's annotations on only when allowed
		// (CRI-O's allowed_annotations): the network allowlist gives a
		// container with loopback only a way out. The Landlock policy
		// only takes rights away.
		PotentiallyUnsafeConfigAnnotations: []string{NetworkAnnotation},
		Annotations: map[string]string{
			// runc's key; engines read it to decide on seccomp features.
			"io.github.seccomp.libseccomp.version": libseccompVersion,
			// The running kernel's Landlock ABI (0: none), for the
			// LandlockAnnotation policies.
			LandlockAnnotation + ".abi": strconv.Itoa(libbox.LandlockABI()),
		},
	}
}

// memoryPolicyFeatures lists the linux.memoryPolicy modes and flags
// FromSpec takes.
func memoryPolicyFeatures() *features.MemoryPolicy {
	return &features.MemoryPolicy{Modes: sortedKeys(memoryPolicyModes), Flags: sortedKeys(memoryPolicyFlags)}
}
