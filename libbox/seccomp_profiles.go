package libbox

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"
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
	restrictSetID(s)
	return s, nil
}

// Setuid and setgid bits: the sandbox profiles refuse to set them, as
// systemd's RestrictSUIDSGID= does. A sandbox's ids are the caller's own
// (root's, when root runs it), and the owner of a file needs no
// capability to make it setuid: a hostile program could leave a setuid
// copy of a shell in a read-write mount (its workspace, its output
// directory), which runs as the caller for whoever on the host executes it
// later. The kernel already strips both bits from mkdir's mode.
const (
	modeSetID  = 0o6000     // S_ISUID | S_ISGID
	openCreate = 0o100      // O_CREAT
	openTmp    = 0o20000000 // __O_TMPFILE (O_TMPFILE without O_DIRECTORY)
)

// setIDRule is a system call that takes a file mode: the argument that
// holds the mode, and for the open family the argument whose flags decide
// whether the mode is used at all (-1: always).
type setIDRule struct {
	name        string
	mode, flags int
}

var setIDRules = []setIDRule{
	{"chmod", 1, -1}, {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
	{"creat", 1, -1}, {"mknod", 1, -1}, {"mknodat", 2, -1},
	{"open", 2, 1}, {"openat", 3, 2},
}

// restrictSetID rewrites the profile's unconditional allow of the system
// calls that set a file's mode into an allow of the modes without
// S_ISUID and S_ISGID (the default action, EPERM, refuses the others), and
// makes openat2, whose mode the filter cannot read, fail with ENOSYS:
// libc and Go fall back to openat.
func restrictSetID(s *Seccomp) {
	restricted := []string{"openat2"}
	for _, r := range setIDRules {
		restricted = append(restricted, r.name)
	}
	var allowed []string
	for i, r := range s.Syscalls {
		if r.Action != SeccompAllow || len(r.Args) > 0 {
			continue
		}
		s.Syscalls[i].Names = slices.DeleteFunc(r.Names, func(n string) bool {
			if slices.Contains(restricted, n) {
				allowed = append(allowed, n)
				return true
			}
			return false
		})
	}
	s.Syscalls = slices.DeleteFunc(s.Syscalls, func(r SeccompRule) bool { return len(r.Names) == 0 })
	for _, r := range setIDRules {
		if !slices.Contains(allowed, r.name) {
			continue
		}
		s.Syscalls = append(s.Syscalls, SeccompRule{
			Names: []string{r.name}, Action: SeccompAllow,
			Args: []SeccompArg{{Index: uint(r.mode), Value: modeSetID, ValueTwo: 0, Op: SeccompMaskedEqual}},
		})
		if r.flags >= 0 {
			s.Syscalls = append(s.Syscalls, SeccompRule{
				Names: []string{r.name}, Action: SeccompAllow,
				Args: []SeccompArg{{Index: uint(r.flags), Value: openCreate | openTmp, ValueTwo: 0, Op: SeccompMaskedEqual}},
			})
		}
	}
	if slices.Contains(allowed, "openat2") {
		s.Syscalls = append(s.Syscalls, SeccompRule{Names: []string{"openat2"}, Action: SeccompErrno, Errno: seccompErrno(uint(syscall.ENOSYS))})
	}
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
