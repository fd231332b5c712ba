package libbox

import (
	"fmt"
	"runtime"
	"slices"
)

// seccompDefault (seccomp_default_gen.go) is Docker's default seccomp
// profile (github.com/moby/profiles/seccomp) for a process without
// capabilities, as specconv converts it: libbox cannot import the OCI
// types, so specconv's TestSandboxSeccompProfile writes it to
// seccomp_default.json and fails when that drifts from the dependency, and
// TestSeccompDefaultLiteral generates the Go value from the JSON file and
// fails when the two differ. It is amd64's evaluation of the profile's
// per-architecture rules; on other architectures the names this one does
// not know are skipped by libseccomp, and only the native architecture is
// filtered. A Go value, not the JSON embedded: decoding it cost every
// process that ran a sandbox (each `nanobox-runc sandbox`) 0.3 to 0.7 ms
// and 3.4 million instructions.

// parseSeccompDefault returns the built-in default profile; callers copy it
// (copySeccomp) before changing anything.
func parseSeccompDefault() (*Seccomp, error) { return &seccompDefault, nil }

// seccompErrno is a pointer to errno, for seccomp_default_gen.go.
func seccompErrno(errno uint) *uint { return &errno }

// strictDenied are the system calls the strict profile removes from the
// default one (which it also limits to the native architecture), for sandboxes that run untrusted code next to each other (a
// judge's): they reach other processes (ptrace and process_vm_*: a pid
// namespace already hides the others, this is defence in depth), change
// the execution domain (personality, e.g. turning ASLR off), or take file
// locks that another sandbox sharing a read-only file would wait on
// (flock). Keyrings (keyctl, add_key, request_key), io_uring, userfaultfd,
// bpf, perf_event_open, mount and namespace creation are already denied by
// the default profile to a process without capabilities.
var strictDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"personality",
	"flock",
}

// SandboxSeccomp returns a copy of a named sandbox profile: "default" or
// "strict". "none" returns nil.
func SandboxSeccomp(name string) (*Seccomp, error) {
	switch name {
	case SeccompProfileNone:
		return nil, nil
	case SeccompProfileDefault, SeccompProfileStrict, "":
	default:
		return nil, fmt.Errorf("unknown seccomp profile %q: use default, strict or none", name)
	}
	base, err := parseSeccompDefault()
	if err != nil {
		return nil, err
	}
	s := copySeccomp(base)
	if runtime.GOARCH != "amd64" {
		s.Architectures = nil
	}
	if name == SeccompProfileStrict {
		// The native architecture only: a system call through the 32-bit
		// ABIs (int 0x80, x32) kills the process. Their tables are attack
		// surface a judged program has no use for, and each one costs as
		// much to compile as the native filter.
		s.Architectures = nil
		var rules []SeccompRule
		for _, r := range s.Syscalls {
			if r.Action == SeccompAllow {
				r.Names = slices.DeleteFunc(r.Names, func(n string) bool { return slices.Contains(strictDenied, n) })
				if len(r.Names) == 0 {
					continue
				}
			}
			rules = append(rules, r)
		}
		s.Syscalls = rules
	}
	return s, nil
}

func copySeccomp(in *Seccomp) *Seccomp {
	out := *in
	out.Architectures = slices.Clone(in.Architectures)
	out.Flags = slices.Clone(in.Flags)
	out.Syscalls = make([]SeccompRule, len(in.Syscalls))
	for i, r := range in.Syscalls {
		r.Names = slices.Clone(r.Names)
		r.Args = slices.Clone(r.Args)
		if r.Errno != nil {
			e := *r.Errno
			r.Errno = &e
		}
		out.Syscalls[i] = r
	}
	if in.DefaultErrno != nil {
		e := *in.DefaultErrno
		out.DefaultErrno = &e
	}
	return &out
}
