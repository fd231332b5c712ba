package libbox

// The sandbox contract: the one JSON form of Options (and of the Report,
// report.go), spoken by `nanobox-runc sandbox --options` and `--report` and
// by the Python and TypeScript bindings. docs/sandbox-contract.md documents
// it; this file is its implementation. Sizes are integers in bytes,
// durations are numbers of seconds (fractions allowed), field names are
// camelCase, and an unknown field or a missing or newer version is an
// error, so that a binding and the binary never silently disagree.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// ContractVersion is the version of the sandbox contract this package
// speaks, in Options and Report JSON.
const ContractVersion = 1

type optionsJSON struct {
	Version       int             `json:"version"`
	Rootfs        string          `json:"rootfs,omitempty"`
	Mounts        []Bind          `json:"mounts,omitempty"`
	Tmpfs         []Tmpfs         `json:"tmpfs,omitempty"`
	WorkDir       string          `json:"workDir,omitempty"`
	Env           []string        `json:"env,omitempty"`
	Hostname      string          `json:"hostname,omitempty"`
	User          *userJSON       `json:"user,omitempty"`
	Limits        *limitsJSON     `json:"limits,omitempty"`
	AllowDegraded []LimitName     `json:"allowDegraded,omitempty"`
	Network       *Network        `json:"network,omitempty"`
	Seccomp       *SeccompProfile `json:"seccomp,omitempty"`
	Landlock      *Landlock       `json:"landlock,omitempty"`
	Namespaces    *namespacesJSON `json:"namespaces,omitempty"`
	StateRoot     string          `json:"stateRoot,omitempty"`
}

type userJSON struct {
	UID   uint32  `json:"uid"`
	GID   uint32  `json:"gid"`
	Umask *uint32 `json:"umask,omitempty"`
}

type namespacesJSON Namespaces

type limitsJSON struct {
	Memory    int64   `json:"memory,omitempty"`
	CPUs      float64 `json:"cpus,omitempty"`
	Pids      int64   `json:"pids,omitempty"`
	WallTime  Seconds `json:"wallTime,omitempty"`
	CPUTime   Seconds `json:"cpuTime,omitempty"`
	OpenFiles int64   `json:"openFiles,omitempty"`
	FileSize  int64   `json:"fileSize,omitempty"`
	Output    int64   `json:"output,omitempty"`
}

// Seconds is a duration that the contract writes as a number of seconds.
type Seconds time.Duration

// MarshalJSON writes s as seconds, to the nanosecond.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(s).Seconds())
}

// UnmarshalJSON reads a number of seconds.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a duration is a number of seconds, got %s", b)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > float64(math.MaxInt64)/1e9 {
		return fmt.Errorf("duration %v seconds is out of range", f)
	}
	*s = Seconds(math.Round(f * 1e9))
	return nil
}

// MarshalJSON writes the options in the contract's form.
func (o Options) MarshalJSON() ([]byte, error) {
	w := optionsJSON{
		Version:       ContractVersion,
		Rootfs:        o.Rootfs,
		Mounts:        o.Mounts,
		Tmpfs:         o.Tmpfs,
		WorkDir:       o.WorkDir,
		Env:           o.Env,
		Hostname:      o.Hostname,
		AllowDegraded: o.AllowDegraded,
		Landlock:      o.Landlock,
		StateRoot:     o.StateRoot,
	}
	if u := o.User; u.UID != 0 || u.GID != 0 || u.Umask != nil {
		w.User = &userJSON{UID: u.UID, GID: u.GID, Umask: u.Umask}
	}
	if l := o.Limits; l != (Limits{}) {
		w.Limits = &limitsJSON{
			Memory: l.Memory, CPUs: l.CPUs, Pids: l.Pids,
			WallTime: Seconds(l.WallTime), CPUTime: Seconds(l.CPUTime),
			OpenFiles: l.OpenFiles, FileSize: l.FileSize, Output: l.Output,
		}
	}
	if n := o.Network; n.Mode != "" || len(n.Allow)+len(n.Deny)+len(n.Hosts) > 0 || n.AllowPrivateTargets {
		w.Network = &n
	}
	if o.Seccomp != (SeccompProfile{}) {
		s := o.Seccomp
		w.Seccomp = &s
	}
	if ns := o.Namespaces; ns.None || ns.HostUID != nil || ns.HostGID != nil {
		n := namespacesJSON(ns)
		w.Namespaces = &n
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the contract's form strictly: unknown fields, a
// missing version and a version newer than ContractVersion are errors.
// The options are not validated here; New does that.
func (o *Options) UnmarshalJSON(b []byte) error {
	var w optionsJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	// Errors are OptionErrors (with no field: the JSON itself is at
	// fault), so that Problems says invalid-options.
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("sandbox options: %w", &OptionError{Err: err})
	}
	if dec.More() {
		return fmt.Errorf("sandbox options: %w", &OptionError{Err: errors.New("trailing data after the JSON object")})
	}
	if err := checkVersion(w.Version); err != nil {
		return fmt.Errorf("sandbox options: %w", &OptionError{Err: err})
	}
	*o = Options{
		Rootfs:        w.Rootfs,
		Mounts:        w.Mounts,
		Tmpfs:         w.Tmpfs,
		WorkDir:       w.WorkDir,
		Env:           w.Env,
		Hostname:      w.Hostname,
		AllowDegraded: w.AllowDegraded,
		Landlock:      w.Landlock,
		StateRoot:     w.StateRoot,
	}
	if w.User != nil {
		o.User = User{UID: w.User.UID, GID: w.User.GID, Umask: w.User.Umask}
	}
	if l := w.Limits; l != nil {
		o.Limits = Limits{
			Memory: l.Memory, CPUs: l.CPUs, Pids: l.Pids,
			WallTime: time.Duration(l.WallTime), CPUTime: time.Duration(l.CPUTime),
			OpenFiles: l.OpenFiles, FileSize: l.FileSize, Output: l.Output,
		}
	}
	if w.Network != nil {
		o.Network = *w.Network
	}
	if w.Seccomp != nil {
		o.Seccomp = *w.Seccomp
	}
	if w.Namespaces != nil {
		o.Namespaces = Namespaces(*w.Namespaces)
	}
	return nil
}

func checkVersion(v int) error {
	switch {
	case v == 0:
		return fmt.Errorf("\"version\" is missing: this nanobox-runc speaks contract version %d", ContractVersion)
	case v > ContractVersion || v < 0:
		return fmt.Errorf("contract version %d is not supported: this nanobox-runc speaks version %d (upgrade it, or write version %d)", v, ContractVersion, ContractVersion)
	}
	return nil
}

// MarshalJSON writes a named profile as its name and a custom one as
// {"profile": {...}} (libbox's Seccomp form, see docs/sandbox-contract.md).
func (p SeccompProfile) MarshalJSON() ([]byte, error) {
	if p.Custom != nil {
		return json.Marshal(struct {
			Profile *Seccomp `json:"profile"`
		}{p.Custom})
	}
	return json.Marshal(p.name())
}

// UnmarshalJSON reads a profile name or {"profile": {...}}.
func (p *SeccompProfile) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*p = SeccompProfile{Name: name}
		return nil
	}
	var w struct {
		Profile *Seccomp `json:"profile"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil || w.Profile == nil {
		return fmt.Errorf("seccomp is \"default\", \"strict\", \"none\" or {\"profile\": {...}}: %s", b)
	}
	*p = SeccompProfile{Custom: w.Profile}
	return nil
}
