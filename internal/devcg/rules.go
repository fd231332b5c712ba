// Package devcg enforces a container's device rules: in the cgroup v1
// devices controller (devices.allow/deny), as an eBPF device program
// attached to a cgroup v2 directory, and as the DeviceAllow/DevicePolicy
// properties of a systemd unit.
//
// All three start from the same model of the rules, State: the kernel's
// v1 devices cgroup, a default (allow or deny every device) and a list of
// exceptions to it, each a device type, major and minor (either may be a
// wildcard) and the accesses (read, write, mknod) it covers. Rules are
// applied in order, as the kernel applies writes: a rule of type 'a'
// resets the default and drops every exception; a rule that goes against
// the default adds an exception (or widens one with the same type and
// numbers); a rule that agrees with it narrows or removes the exception
// with exactly the same type and numbers. Like the kernel, a rule never
// carves a hole out of a wildcard exception: such a rule is refused,
// since writing it would leave the device reachable.
//
// The cgroups library calls into the package through
// cgroups.DevicesSetV1, cgroups.DevicesSetV2 and
// systemd.GenerateDeviceProps, which libbox sets.
package devcg

import (
	"bufio"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	devices "github.com/opencontainers/cgroups/devices/config"
)

// Access is a set of device accesses, with the bits of the kernel's
// BPF_DEVCG_ACC_* (which the eBPF program compares with).
type Access uint8

const (
	Mknod Access = 1 << iota
	Read
	Write

	allAccess = Mknod | Read | Write
)

// accessOf converts "rwm" letters; others are ignored, as the cgroups
// library's Permissions does (the runtime validates access strings before
// they become rules).
func accessOf(p devices.Permissions) Access {
	var a Access
	for _, c := range p {
		switch c {
		case 'r':
			a |= Read
		case 'w':
			a |= Write
		case 'm':
			a |= Mknod
		}
	}
	return a
}

// String is the access in the kernel's order, "rwm".
func (a Access) String() string {
	var b strings.Builder
	if a&Read != 0 {
		b.WriteByte('r')
	}
	if a&Write != 0 {
		b.WriteByte('w')
	}
	if a&Mknod != 0 {
		b.WriteByte('m')
	}
	return b.String()
}

// Key names the devices an exception covers: type 'c' or 'b', and a major
// and minor number, each possibly devices.Wildcard.
type Key struct {
	Type         devices.Type
	Major, Minor int64
}

func (k Key) String() string {
	num := func(n int64) string {
		if n == devices.Wildcard {
			return "*"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%c %s:%s", k.Type, num(k.Major), num(k.Minor))
}

// State is a devices cgroup as the kernel keeps it: a default and the
// exceptions to it. The zero State denies every device.
type State struct {
	AllowByDefault bool
	Exceptions     map[Key]Access
	// order is the exceptions' keys in the order the kernel lists them:
	// a key goes to the end when it is added, and out when its last
	// access is taken away (Apply keeps it; a State made otherwise has
	// none, and its exceptions are in sortedKeys' order).
	order []Key
}

// Build applies rules, in order, to a State that denies every device.
func Build(rules []*devices.Rule) (*State, error) {
	s := &State{}
	for _, r := range rules {
		if err := s.Apply(r); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Apply applies one rule as the kernel applies a write of it to
// devices.allow (r.Allow) or devices.deny.
func (s *State) Apply(r *devices.Rule) error {
	switch r.Type {
	case devices.WildcardDevice:
		*s = State{AllowByDefault: r.Allow}
		return nil
	case devices.CharDevice, devices.BlockDevice:
	default:
		return fmt.Errorf("device rule of type %q: a cgroup rule is of type a, c or b", r.Type)
	}
	k := Key{Type: r.Type, Major: r.Major, Minor: r.Minor}
	if k.Major < devices.Wildcard || k.Minor < devices.Wildcard {
		return fmt.Errorf("device rule %s: negative device number", k)
	}
	a := accessOf(r.Permissions)
	if a == 0 {
		return nil
	}
	if r.Allow != s.AllowByDefault {
		if s.Exceptions == nil {
			s.Exceptions = make(map[Key]Access)
		}
		if _, ok := s.Exceptions[k]; !ok {
			s.order = append(s.order, k)
		}
		s.Exceptions[k] |= a
		return nil
	}
	// The rule agrees with the default: it can only narrow the exception
	// with the same key. One with a wildcard where this key has a number
	// would still cover the device afterwards.
	for _, w := range []Key{
		{Type: k.Type, Major: devices.Wildcard, Minor: k.Minor},
		{Type: k.Type, Major: k.Major, Minor: devices.Wildcard},
		{Type: k.Type, Major: devices.Wildcard, Minor: devices.Wildcard},
	} {
		if w != k && s.Exceptions[w]&a != 0 {
			verb := "deny"
			if r.Allow {
				verb = "allow"
			}
			return fmt.Errorf("device rule %s %s %s cannot take effect: the earlier rule %s %s covers it and a cgroup cannot make an exception to a wildcard rule; reorder or narrow the rules",
				verb, k, a, w, s.Exceptions[w])
		}
	}
	if left := s.Exceptions[k] &^ a; left != 0 {
		s.Exceptions[k] = left
	} else if _, ok := s.Exceptions[k]; ok {
		delete(s.Exceptions, k)
		s.order = slices.DeleteFunc(s.order, func(o Key) bool { return o == k })
	}
	return nil
}

// Allows reports whether the kernel lets a process of a cgroup in state s
// have access a (a combination) to device typ major:minor: with a deny
// default, one exception must cover all of a (the kernel's
// match_exception); with an allow default, no exception may cover any of
// it (match_exception_partial).
func (s *State) Allows(typ devices.Type, major, minor int64, a Access) bool {
	for k, ea := range s.Exceptions {
		if k.Type != typ ||
			(k.Major != devices.Wildcard && k.Major != major) ||
			(k.Minor != devices.Wildcard && k.Minor != minor) {
			continue
		}
		if s.AllowByDefault {
			if a&ea != 0 {
				return false
			}
		} else if a&^ea == 0 {
			return true
		}
	}
	return s.AllowByDefault
}

// String is the state as devices.list would show it: "a *:* rwm" for a
// default that allows (and the exceptions the list would not show), else
// the exceptions, or "nothing" for none.
func (s *State) String() string {
	var b strings.Builder
	if s.AllowByDefault {
		b.WriteString("a *:* rwm")
	}
	for _, k := range s.keys() {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if s.AllowByDefault {
			b.WriteString("deny ")
		}
		b.WriteString(k.String() + " " + s.Exceptions[k].String())
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

// Equal reports whether two states are the same.
func (s *State) Equal(o *State) bool {
	return s.AllowByDefault == o.AllowByDefault && maps.Equal(s.Exceptions, o.Exceptions)
}

// keys are the exceptions' keys in the kernel's order when Apply made
// them, else sorted.
func (s *State) keys() []Key {
	if len(s.order) == len(s.Exceptions) {
		return s.order
	}
	return sortedKeys(s.Exceptions)
}

// sortedKeys are the exceptions' keys in a fixed order (numbers, then
// type), so that the rules written and the program generated are the same
// each time.
func sortedKeys(ex map[Key]Access) []Key {
	return slices.SortedFunc(maps.Keys(ex), func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Major, b.Major), cmp.Compare(a.Minor, b.Minor), cmp.Compare(a.Type, b.Type))
	})
}

// ParseList reads a v1 devices.list. The kernel lists the exceptions of a
// cgroup that denies by default; one that allows by default is listed as
// "a *:* rwm" alone, whatever exceptions it has.
func ParseList(list string) (*State, error) {
	s := &State{}
	sc := bufio.NewScanner(strings.NewReader(list))
	for sc.Scan() {
		line := sc.Text()
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ':' })
		if len(f) != 4 || len(f[0]) != 1 {
			return nil, fmt.Errorf("devices.list line %q: not \"TYPE MAJOR:MINOR ACCESS\"", line)
		}
		r := &devices.Rule{Type: devices.Type(f[0][0]), Permissions: devices.Permissions(f[3]), Allow: true}
		if r.Type == devices.WildcardDevice {
			*s = State{AllowByDefault: true}
			continue
		}
		var err error
		if r.Major, err = parseNum(f[1]); err != nil {
			return nil, fmt.Errorf("devices.list line %q: major: %w", line, err)
		}
		if r.Minor, err = parseNum(f[2]); err != nil {
			return nil, fmt.Errorf("devices.list line %q: minor: %w", line, err)
		}
		if a := accessOf(r.Permissions); a == 0 || a.String() != string(r.Permissions) {
			return nil, fmt.Errorf("devices.list line %q: access is not r, w and m in that order", line)
		}
		if err := s.Apply(r); err != nil {
			return nil, fmt.Errorf("devices.list line %q: %w", line, err)
		}
	}
	return s, sc.Err()
}

func parseNum(s string) (int64, error) {
	if s == "*" {
		return devices.Wildcard, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return int64(n), err
}

// V1Write is one write to a v1 devices cgroup: Line to devices.allow (Allow)
// or devices.deny.
type V1Write struct {
	Allow bool
	Line  string
}

// File is the control file the write goes to.
func (w V1Write) File() string {
	if w.Allow {
		return "devices.allow"
	}
	return "devices.deny"
}

// Transition is the writes that take a v1 devices cgroup from state from
// (as ParseList read it) to state to. When both deny by default, only the
// exceptions that differ are written, the new accesses before the dropped
// ones, so a device that both states allow stays reachable throughout
// (a running container's update). Otherwise the default is reset first
// (which the kernel refuses for a cgroup with children) and every
// exception of to written after it: the exceptions of a cgroup that
// allows by default cannot be read back, so they cannot be diffed.
func Transition(from, to *State) []V1Write {
	var ws []V1Write
	old := from.Exceptions
	if from.AllowByDefault || to.AllowByDefault {
		ws = append(ws, V1Write{Allow: to.AllowByDefault, Line: "a *:* rwm"})
		old = nil
	}
	// An exception of to goes against its default: it is written to the
	// file of the opposite verb, and taken back through the other one.
	// New ones are written in to's order, so that the kernel lists a new
	// cgroup's exceptions in the order of the rules that made them (the
	// runtime spec: entries are applied in the listed order).
	for _, k := range to.keys() {
		if gained := to.Exceptions[k] &^ old[k]; gained != 0 {
			ws = append(ws, V1Write{Allow: !to.AllowByDefault, Line: k.String() + " " + gained.String()})
		}
	}
	for _, k := range sortedKeys(old) {
		if dropped := old[k] &^ to.Exceptions[k]; dropped != 0 {
			ws = append(ws, V1Write{Allow: to.AllowByDefault, Line: k.String() + " " + dropped.String()})
		}
	}
	return ws
}
