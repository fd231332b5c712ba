package specconv

// The sandbox's side of the two worlds: seccomp profiles given as files
// (OCI's linux.seccomp, or a Docker profile) for `sandbox --seccomp FILE`,
// and a sandbox's Options as an OCI spec for `spec --preset`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// LoadSeccompProfile reads a seccomp profile for a sandbox: OCI's
// linux.seccomp object, a Docker profile (its per-capability and
// per-kernel rules evaluated for a process without capabilities, as a
// sandbox's is), or libbox's own form (actions "allow", "errno"...).
func LoadSeccompProfile(data []byte) (*libbox.Seccomp, error) {
	var probe struct {
		DefaultAction string `json:"defaultAction"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("seccomp profile: %w", err)
	}
	if !strings.HasPrefix(probe.DefaultAction, "SCMP_") {
		var s libbox.Seccomp
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("seccomp profile (libbox form, since defaultAction %q is not an SCMP_ACT_ name): %w", probe.DefaultAction, err)
		}
		if err := s.Validate(); err != nil {
			return nil, err
		}
		return &s, nil
	}
	noCaps := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{}}}
	oci, err := seccomp.LoadProfile(string(data), noCaps)
	if err != nil {
		return nil, fmt.Errorf("seccomp profile: %w", err)
	}
	if oci == nil {
		return nil, fmt.Errorf("seccomp profile: it has no defaultAction and no syscalls")
	}
	s, err := convertSeccomp(oci)
	if err != nil {
		return nil, fmt.Errorf("seccomp profile: %w", err)
	}
	return s, nil
}

// SandboxSpec is the OCI spec of a sandbox: the container that
// libbox.ContainerConfig makes of opts, with rootfs (relative to the
// bundle, "rootfs" if empty) as its root, running args. FromSpec turns it
// back into the same Config. sandboxOnly says what an OCI runtime does not
// enforce (wall time, output), for the caller to tell the user.
func SandboxSpec(opts libbox.Options, rootfs string, args []string) (spec *specs.Spec, sandboxOnly []string, err error) {
	cfg, sandboxOnly, err := libbox.ContainerConfig(opts, rootfs, args)
	if err != nil {
		return nil, nil, err
	}
	spec, err = ToSpec(cfg)
	return spec, sandboxOnly, err
}

// ToSpec writes a Config as an OCI spec: the inverse of FromSpec for the
// configurations libbox.ContainerConfig makes (bind and filesystem mounts,
// new namespaces, id maps, masks, capabilities, rlimits, seccomp, the
// cgroup limits of memory, pids and CPU, a Landlock policy). Anything
// else it cannot write is an error naming it.
func ToSpec(cfg *libbox.Config) (*specs.Spec, error) {
	switch {
	case cfg.RootfsTmpfs != nil:
		return nil, fmt.Errorf("a tmpfs root has no OCI form: give the container a rootfs directory")
	case len(cfg.Hooks.Prestart)+len(cfg.Hooks.CreateRuntime)+len(cfg.Hooks.CreateContainer)+len(cfg.Hooks.StartContainer)+len(cfg.Hooks.Poststart)+len(cfg.Hooks.Poststop) > 0:
		return nil, fmt.Errorf("hooks are not written by ToSpec")
	case len(cfg.Devices) > 0 || len(cfg.Sysctl) > 0:
		return nil, fmt.Errorf("devices and sysctls are not written by ToSpec")
	}
	p := cfg.Process
	spec := &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: cfg.Rootfs, Readonly: cfg.Readonlyfs},
		Hostname: cfg.Hostname,
		Process: &specs.Process{
			Args:            p.Args,
			Env:             p.Env,
			Cwd:             p.Cwd,
			User:            specs.User{UID: p.User.UID, GID: p.User.GID, Umask: p.User.Umask, AdditionalGids: p.User.AdditionalGids},
			NoNewPrivileges: p.NoNewPrivileges,
		},
		Linux: &specs.Linux{
			MaskedPaths:   cfg.MaskedPaths,
			ReadonlyPaths: cfg.ReadonlyPaths,
		},
	}
	if c := p.Capabilities; c != nil {
		spec.Process.Capabilities = &specs.LinuxCapabilities{
			Bounding: nonNil(c.Bounding), Effective: nonNil(c.Effective), Inheritable: nonNil(c.Inheritable),
			Permitted: nonNil(c.Permitted), Ambient: nonNil(c.Ambient),
		}
	}
	for _, rl := range p.Rlimits {
		name, ok := rlimitName(rl.Type)
		if !ok {
			return nil, fmt.Errorf("rlimit %d has no OCI name", rl.Type)
		}
		spec.Process.Rlimits = append(spec.Process.Rlimits, specs.POSIXRlimit{Type: name, Hard: rl.Hard, Soft: rl.Soft})
	}
	for _, ns := range cfg.Namespaces {
		spec.Linux.Namespaces = append(spec.Linux.Namespaces, specs.LinuxNamespace{Type: specs.LinuxNamespaceType(ns.Type), Path: ns.Path})
	}
	for _, m := range cfg.UIDMappings {
		spec.Linux.UIDMappings = append(spec.Linux.UIDMappings, specs.LinuxIDMapping{ContainerID: m.ContainerID, HostID: m.HostID, Size: m.Size})
	}
	for _, m := range cfg.GIDMappings {
		spec.Linux.GIDMappings = append(spec.Linux.GIDMappings, specs.LinuxIDMapping{ContainerID: m.ContainerID, HostID: m.HostID, Size: m.Size})
	}
	for _, m := range cfg.Mounts {
		sm, err := mountToSpec(m)
		if err != nil {
			return nil, fmt.Errorf("mount %s: %w", m.Destination, err)
		}
		spec.Mounts = append(spec.Mounts, sm)
	}
	if r := cfg.Resources; r != nil && libbox.HasLimits(r) {
		lr := &specs.LinuxResources{}
		if r.Memory != 0 {
			lr.Memory = &specs.LinuxMemory{Limit: ptr(r.Memory)}
			if r.MemorySwap != 0 {
				lr.Memory.Swap = ptr(r.MemorySwap)
			}
		}
		if r.PidsLimit != nil {
			lr.Pids = &specs.LinuxPids{Limit: r.PidsLimit}
		}
		if r.CpuQuota != 0 {
			lr.CPU = &specs.LinuxCPU{Quota: ptr(r.CpuQuota), Period: ptr(r.CpuPeriod)}
		}
		spec.Linux.Resources = lr
	}
	if cfg.Seccomp != nil {
		sc, err := seccompToSpec(cfg.Seccomp)
		if err != nil {
			return nil, err
		}
		spec.Linux.Seccomp = sc
	}
	if len(cfg.Annotations) > 0 {
		spec.Annotations = map[string]string{}
		for k, v := range cfg.Annotations {
			spec.Annotations[k] = v
		}
	}
	if cfg.Landlock != nil {
		b, err := json.Marshal(cfg.Landlock)
		if err != nil {
			return nil, err
		}
		if spec.Annotations == nil {
			spec.Annotations = map[string]string{}
		}
		spec.Annotations[LandlockAnnotation] = string(b)
	}
	if cfg.Network != nil {
		b, err := json.Marshal(cfg.Network)
		if err != nil {
			return nil, err
		}
		if spec.Annotations == nil {
			spec.Annotations = map[string]string{}
		}
		spec.Annotations[NetworkAnnotation] = string(b)
	}
	return spec, nil
}

func ptr[T any](v T) *T { return &v }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func rlimitName(t int) (string, bool) {
	for name, v := range rlimits() {
		if v == t {
			return name, true
		}
	}
	return "", false
}

// mountToSpec writes a mount's flags back as options.
func mountToSpec(m libbox.Mount) (specs.Mount, error) {
	sm := specs.Mount{Destination: m.Destination, Type: m.Type, Source: m.Source}
	flags := m.Flags
	if flags&unix.MS_BIND != 0 {
		if flags&unix.MS_REC != 0 {
			sm.Options = append(sm.Options, "rbind")
		} else {
			sm.Options = append(sm.Options, "bind")
		}
		flags &^= unix.MS_BIND | unix.MS_REC
	}
	for _, o := range []struct {
		name string
		flag int
	}{{"ro", unix.MS_RDONLY}, {"nosuid", unix.MS_NOSUID}, {"nodev", unix.MS_NODEV}, {"noexec", unix.MS_NOEXEC}} {
		if flags&o.flag != 0 {
			sm.Options = append(sm.Options, o.name)
			flags &^= o.flag
		}
	}
	if m.RecursiveReadonly {
		sm.Options = append(sm.Options, "rro")
	}
	if flags != 0 || m.ClearedFlags != 0 || len(m.PropagationFlags) > 0 || m.CopyUp {
		return sm, fmt.Errorf("flags %#x are not written by ToSpec", flags)
	}
	if m.Data != "" {
		sm.Options = append(sm.Options, strings.Split(m.Data, ",")...)
	}
	return sm, nil
}

func seccompToSpec(s *libbox.Seccomp) (*specs.LinuxSeccomp, error) {
	act := func(a libbox.SeccompAction) (specs.LinuxSeccompAction, error) {
		for oci, v := range seccompActions {
			if v == a && oci != specs.ActKill {
				return oci, nil
			}
		}
		if a == libbox.SeccompKill {
			return specs.ActKill, nil
		}
		return "", fmt.Errorf("seccomp action %q has no OCI name", a)
	}
	// Flags: no flags said explicitly, not left out (which FromSpec takes
	// as runc's default, defaultSeccompFlags).
	out := &specs.LinuxSeccomp{DefaultErrnoRet: s.DefaultErrno, ListenerPath: s.ListenerPath, ListenerMetadata: s.ListenerMetadata,
		Flags: []specs.LinuxSeccompFlag{}}
	var err error
	if out.DefaultAction, err = act(s.DefaultAction); err != nil {
		return nil, err
	}
	for _, a := range s.Architectures {
		found := false
		for oci, name := range seccompArchs() {
			if name == a {
				out.Architectures = append(out.Architectures, oci)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("seccomp architecture %q has no OCI name", a)
		}
	}
	for _, f := range s.Flags {
		found := false
		for oci, flag := range seccompFlags {
			if flag == f && flag != "" {
				out.Flags = append(out.Flags, oci)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("seccomp flag %q has no OCI name", f)
		}
	}
	for _, r := range s.Syscalls {
		a, err := act(r.Action)
		if err != nil {
			return nil, err
		}
		sc := specs.LinuxSyscall{Names: r.Names, Action: a, ErrnoRet: r.Errno}
		for _, arg := range r.Args {
			var op specs.LinuxSeccompOperator
			for oci, v := range seccompOps {
				if v == arg.Op {
					op = oci
				}
			}
			if op == "" {
				return nil, fmt.Errorf("seccomp operator %q has no OCI name", arg.Op)
			}
			sc.Args = append(sc.Args, specs.LinuxSeccompArg{Index: arg.Index, Value: arg.Value, ValueTwo: arg.ValueTwo, Op: op})
		}
		out.Syscalls = append(out.Syscalls, sc)
	}
	return out, nil
}
