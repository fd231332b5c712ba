package devcg

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	devices "github.com/opencontainers/cgroups/devices/config"
)

const w = devices.Wildcard

func rule(allow bool, typ devices.Type, major, minor int64, perms string) *devices.Rule {
	return &devices.Rule{Type: typ, Major: major, Minor: minor, Permissions: devices.Permissions(perms), Allow: allow}
}

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []*devices.Rule
		want  State
	}{
		{"no rules deny everything", nil, State{}},
		{"allow all", []*devices.Rule{rule(true, 'a', w, w, "rwm")}, State{AllowByDefault: true}},
		{
			"type a resets whatever its numbers and access",
			[]*devices.Rule{rule(true, 'c', 1, 3, "rwm"), rule(false, 'a', 5, 7, "r")},
			State{},
		},
		{
			"podman: deny all, then the defaults",
			[]*devices.Rule{rule(false, 'a', w, w, "rwm"), rule(true, 'c', w, w, "m"), rule(true, 'c', 1, 3, "rwm")},
			State{Exceptions: map[Key]Access{{'c', w, w}: Mknod, {'c', 1, 3}: allAccess}},
		},
		{
			"allows merge, denies narrow the same key",
			[]*devices.Rule{rule(true, 'c', 1, 3, "r"), rule(true, 'c', 1, 3, "w"), rule(false, 'c', 1, 3, "rm"), rule(true, 'b', 8, w, "m")},
			State{Exceptions: map[Key]Access{{'c', 1, 3}: Write, {'b', 8, w}: Mknod}},
		},
		{
			"a deny that takes every access away removes the exception",
			[]*devices.Rule{rule(true, 'c', 1, 3, "rw"), rule(false, 'c', 1, 3, "rwm")},
			State{},
		},
		{
			"unknown letters are dropped (runc denies \"rwa\")",
			[]*devices.Rule{rule(true, 'c', 10, 229, "rwm"), rule(false, 'c', 10, 229, "rwa")},
			State{Exceptions: map[Key]Access{{'c', 10, 229}: Mknod}},
		},
		{
			"allow by default, deny exceptions",
			[]*devices.Rule{rule(true, 'a', w, w, "rwm"), rule(false, 'b', w, w, "rw"), rule(false, 'c', 1, 1, "rwm"), rule(true, 'c', 1, 1, "m")},
			State{AllowByDefault: true, Exceptions: map[Key]Access{{'b', w, w}: Read | Write, {'c', 1, 1}: Read | Write}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Build(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(&tc.want) {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []*devices.Rule
		want  string
	}{
		{
			"a hole in a wildcard allow",
			[]*devices.Rule{rule(true, 'c', w, w, "rwm"), rule(false, 'c', 1, 3, "w")},
			"cannot make an exception to a wildcard rule",
		},
		{
			"a hole in a major-wide deny",
			[]*devices.Rule{rule(true, 'a', w, w, "rwm"), rule(false, 'b', 8, w, "r"), rule(true, 'b', 8, 0, "rw")},
			"cannot make an exception to a wildcard rule",
		},
		{"a fifo rule", []*devices.Rule{rule(true, 'p', w, w, "rwm")}, "a cgroup rule is of type a, c or b"},
		{"a negative number", []*devices.Rule{rule(true, 'c', -7, 1, "r")}, "negative device number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.rules)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
	// Narrowing with a disjoint access is no hole: the wildcard keeps m,
	// the device loses r.
	if _, err := Build([]*devices.Rule{rule(true, 'c', w, w, "m"), rule(true, 'c', 1, 3, "rwm"), rule(false, 'c', 1, 3, "r")}); err != nil {
		t.Fatal(err)
	}
}

func TestAllows(t *testing.T) {
	deny, err := Build([]*devices.Rule{rule(true, 'c', w, w, "m"), rule(true, 'c', 1, 3, "rw"), rule(true, 'c', 1, w, "r")})
	if err != nil {
		t.Fatal(err)
	}
	allow, err := Build([]*devices.Rule{rule(true, 'a', w, w, "rwm"), rule(false, 'c', 1, 3, "w")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s            *State
		typ          devices.Type
		major, minor int64
		a            Access
		want         bool
	}{
		{deny, 'c', 1, 3, Read | Write, true},
		{deny, 'c', 1, 5, Read, true},
		{deny, 'c', 1, 5, Read | Write, false}, // r from one exception, w from none
		{deny, 'c', 4, 1, Mknod, true},
		{deny, 'c', 4, 1, Read, false},
		{deny, 'b', 1, 3, Read, false},
		{allow, 'c', 1, 3, Read, true},
		{allow, 'c', 1, 3, Read | Write, false}, // any overlap with a deny refuses
		{allow, 'c', 1, 3, Write, false},
		{allow, 'b', 1, 3, Write, true},
	} {
		if got := tc.s.Allows(tc.typ, tc.major, tc.minor, tc.a); got != tc.want {
			t.Errorf("%c %d:%d %s in %+v: got %v, want %v", tc.typ, tc.major, tc.minor, tc.a, *tc.s, got, tc.want)
		}
	}
}

func TestParseList(t *testing.T) {
	s, err := ParseList("c *:* m\nb *:* m\nc 1:3 rwm\nc 136:* rw\n")
	if err != nil {
		t.Fatal(err)
	}
	want := State{Exceptions: map[Key]Access{{'c', w, w}: Mknod, {'b', w, w}: Mknod, {'c', 1, 3}: allAccess, {'c', 136, w}: Read | Write}}
	if !s.Equal(&want) {
		t.Fatalf("got %+v, want %+v", *s, want)
	}
	if s, err := ParseList("a *:* rwm\n"); err != nil || !s.Equal(&State{AllowByDefault: true}) {
		t.Fatalf("allow all: %+v, %v", s, err)
	}
	if s, err := ParseList(""); err != nil || !s.Equal(&State{}) {
		t.Fatalf("empty list: %+v, %v", s, err)
	}
	for _, bad := range []string{"c 1:3\n", "x 1:3 rwm\n", "c 1:-3 rwm\n", "c 1:3 mrw\n", "c 1:3 rwx\n", "c 4294967296:1 r\n"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// kernelWrite applies a write to devices.allow (allow) or devices.deny as
// Linux does (security/device_cgroup.c: devcgroup_update_access): "a"
// resets; otherwise a write against the default adds or widens the
// exception with the same key, one with it narrows that exception alone,
// whatever wildcards other exceptions have.
func kernelWrite(t *testing.T, s *State, allow bool, line string) {
	t.Helper()
	if strings.HasPrefix(line, "a ") {
		*s = State{AllowByDefault: allow}
		return
	}
	parsed, err := ParseList(line + "\n")
	if err != nil || len(parsed.Exceptions) != 1 {
		t.Fatalf("write %q: not one rule: %v", line, err)
	}
	for k, a := range parsed.Exceptions {
		if allow != s.AllowByDefault {
			if s.Exceptions == nil {
				s.Exceptions = map[Key]Access{}
			}
			s.Exceptions[k] |= a
		} else if left := s.Exceptions[k] &^ a; left != 0 {
			s.Exceptions[k] = left
		} else {
			delete(s.Exceptions, k)
		}
	}
}

func randomRules(r *rand.Rand) []*devices.Rule {
	nums := []int64{w, 1, 3, 5}
	types := []devices.Type{'c', 'b'}
	var rules []*devices.Rule
	rules = append(rules, rule(r.IntN(4) == 0, 'a', w, w, "rwm"))
	for range r.IntN(8) {
		perms := []string{"r", "w", "m", "rw", "rm", "wm", "rwm"}[r.IntN(7)]
		rules = append(rules, rule(r.IntN(3) != 0, types[r.IntN(2)], nums[r.IntN(4)], nums[r.IntN(4)], perms))
	}
	return rules
}

func randomState(t *testing.T, r *rand.Rand) *State {
	for {
		if s, err := Build(randomRules(r)); err == nil {
			return s
		}
	}
}

// probes are the requests the tests ask states and programs about.
func probes(f func(typ devices.Type, major, minor int64, a Access)) {
	for _, typ := range []devices.Type{'c', 'b'} {
		for _, major := range []int64{1, 3, 5, 9} {
			for _, minor := range []int64{1, 3, 5, 9} {
				for a := Access(1); a <= allAccess; a++ {
					f(typ, major, minor, a)
				}
			}
		}
	}
}

// The writes of Transition, made as the kernel makes them, leave the
// target state; between two states that deny by default no write takes
// away an access both allow.
func TestTransition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		from, to := randomState(t, r), randomState(t, r)
		if from.AllowByDefault {
			from.Exceptions = nil // what devices.list shows of it
		}
		k := &State{AllowByDefault: from.AllowByDefault, Exceptions: map[Key]Access{}}
		for key, a := range from.Exceptions {
			k.Exceptions[key] = a
		}
		writes := Transition(from, to)
		for _, wr := range writes {
			kernelWrite(t, k, wr.Allow, wr.Line)
			if from.AllowByDefault || to.AllowByDefault {
				continue
			}
			probes(func(typ devices.Type, major, minor int64, a Access) {
				if from.Allows(typ, major, minor, a) && to.Allows(typ, major, minor, a) && !k.Allows(typ, major, minor, a) {
					t.Fatalf("case %d: %+v -> %+v: after %q, %c %d:%d %s is refused", i, *from, *to, wr.Line, typ, major, minor, a)
				}
			})
		}
		if len(k.Exceptions) == 0 {
			k.Exceptions = nil
		}
		if !k.Equal(to) {
			t.Fatalf("case %d: %+v -> %+v: writes %v leave %+v", i, *from, *to, writes, *k)
		}
		if !from.AllowByDefault && !to.AllowByDefault && from.Equal(to) && len(writes) != 0 {
			t.Fatalf("case %d: %v written for no change", i, writes)
		}
	}
}

func TestTransitionFiles(t *testing.T) {
	from := &State{Exceptions: map[Key]Access{{'c', 1, 3}: allAccess, {'c', 1, 5}: Read}}
	to := &State{Exceptions: map[Key]Access{{'c', 1, 3}: Read, {'c', 1, 7}: Write}}
	got := Transition(from, to)
	want := []V1Write{{Allow: true, Line: "c 1:7 w"}, {Allow: false, Line: "c 1:3 wm"}, {Allow: false, Line: "c 1:5 r"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if got[0].File() != "devices.allow" || got[1].File() != "devices.deny" {
		t.Fatalf("files: %s, %s", got[0].File(), got[1].File())
	}
	got = Transition(&State{AllowByDefault: true}, &State{AllowByDefault: true, Exceptions: map[Key]Access{{'b', w, w}: Read}})
	if len(got) != 2 || got[0] != (V1Write{Allow: true, Line: "a *:* rwm"}) || got[1] != (V1Write{Allow: false, Line: "b *:* r"}) {
		t.Fatalf("allow by default: %v", got)
	}
}

// A new cgroup gets its exceptions in the order of the rules that made
// them, which is the order the kernel lists them in (runtime-tools'
// linux_cgroups_devices checks devices.list against the config's order).
func TestTransitionKeepsRuleOrder(t *testing.T) {
	to, err := Build([]*devices.Rule{
		rule(false, 'a', w, w, "rwm"),
		rule(true, 'c', 10, 229, "rwm"), rule(true, 'b', 8, 20, "rw"), rule(true, 'b', 10, 200, "r"),
		rule(true, 'c', w, w, "m"),
		// Taken away entirely and made again: to the end, as in the kernel.
		rule(true, 'c', 1, 3, "r"), rule(true, 'c', 1, 5, "r"), rule(false, 'c', 1, 3, "r"), rule(true, 'c', 1, 3, "w"),
		// Widened: stays where it was.
		rule(true, 'b', 8, 20, "m"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, wr := range Transition(&State{AllowByDefault: true}, to) {
		got = append(got, wr.Line)
	}
	want := []string{"a *:* rwm", "c 10:229 rwm", "b 8:20 rwm", "b 10:200 r", "c *:* m", "c 1:5 r", "c 1:3 w"}
	if !slices.Equal(got, want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
	// The kernel's list read back keeps that order too.
	s, err := ParseList("c 10:229 rwm\nb 8:20 rw\nc *:* m\n")
	if err != nil {
		t.Fatal(err)
	}
	if k := s.keys(); !slices.Equal(k, []Key{{'c', 10, 229}, {'b', 8, 20}, {'c', w, w}}) {
		t.Fatalf("ParseList's order %v", k)
	}
}

func TestStateString(t *testing.T) {
	for _, tc := range []struct {
		rules []*devices.Rule
		want  string
	}{
		{nil, "nothing"},
		{[]*devices.Rule{rule(true, 'a', w, w, "rwm")}, "a *:* rwm"},
		{[]*devices.Rule{rule(true, 'c', 1, 3, "wr"), rule(true, 'b', w, w, "m")}, "c 1:3 rw, b *:* m"},
		{[]*devices.Rule{rule(true, 'a', w, w, "rwm"), rule(false, 'c', 1, 11, "w")}, "a *:* rwm, deny c 1:11 w"},
	} {
		s, err := Build(tc.rules)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
