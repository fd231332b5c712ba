package libbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestValidateID(t *testing.T) {
	good := []string{"a", "abc-123_X.y", strings.Repeat("x", maxIDLen)}
	for _, id := range good {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", id, err)
		}
	}
	bad := []string{"", ".", "..", "../x", "a/b", "/abs", "x..y", "nul\x00", strings.Repeat("x", maxIDLen+1)}
	for _, id := range bad {
		if err := ValidateID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses must not shift fields.
	line := "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 10000 100 18446744073709551615\n"
	ps, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if ps.State != 'S' || ps.StartTime != 987654 {
		t.Fatalf("got state %c start %d, want S 987654", ps.State, ps.StartTime)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("parseProcStat(%q): no error", bad)
		}
	}
	self, err := readProcStat(os.Getpid())
	if err != nil || self.StartTime == 0 {
		t.Fatalf("readProcStat(self) = %+v, %v", self, err)
	}
}

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := &persisted{
		ID: "c1", InitPid: 42, InitStartTime: 7, Created: time.Unix(1700000000, 0).UTC(), Owner: "root",
		Config: &Config{Rootfs: "/r", Process: Process{Args: []string{"sh"}, Cwd: "/"}, Annotations: map[string]string{"k": "v"}},
	}
	if err := writeState(dir, in); err != nil {
		t.Fatal(err)
	}
	// No temp file may be left next to state.json.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != stateFile {
		t.Fatalf("state dir holds %v, want only %s", ents, stateFile)
	}
	out, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != in.ID || out.InitPid != 42 || out.InitStartTime != 7 || !out.Created.Equal(in.Created) ||
		out.Config.Rootfs != "/r" || out.Config.Annotations["k"] != "v" {
		t.Fatalf("round trip: got %+v", out)
	}
}

func TestParseStateRejectsBadInput(t *testing.T) {
	for _, in := range []string{"", "{", "[]", `{"id":"../x","initPid":1,"config":{}}`, `{"id":"ok","initPid":0,"config":{}}`, `{"id":"ok","initPid":3}`} {
		if _, err := parseState([]byte(in)); !errors.Is(err, ErrInvalidState) {
			t.Errorf("parseState(%q) = %v, want ErrInvalidState", in, err)
		}
	}
}

func TestLoadUnknownAndStatusOfDeadInit(t *testing.T) {
	rt := &Runtime{Root: t.TempDir()}
	if _, err := rt.Load("nope"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Load(nope) = %v, want ErrNotExist", err)
	}
	if _, err := rt.Load("../etc"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("Load(../etc) = %v, want ErrInvalidID", err)
	}
	// A state whose init pid is alive but has another start time (a
	// recycled pid) must read as stopped, and must not be signalled.
	dir := filepath.Join(rt.Root, "c")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	self, _ := readProcStat(os.Getpid())
	st := &persisted{ID: "c", InitPid: os.Getpid(), InitStartTime: self.StartTime + 1, Config: &Config{}}
	if err := writeState(dir, st); err != nil {
		t.Fatal(err)
	}
	c, err := rt.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Status(); s != Stopped {
		t.Fatalf("status with recycled pid = %s, want stopped", s)
	}
	if err := c.Signal(0, false); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "container not running") {
		t.Fatalf("Signal to recycled pid = %v, want ErrNotRunning saying \"container not running\"", err)
	}
	// --all on a stopped container without a cgroup succeeds (as runc's)
	// and signals nobody: the recycled pid is this test's own process.
	if err := c.Signal(unix.SIGKILL, true); err != nil {
		t.Fatalf("Signal(all) to a stopped container = %v, want nil", err)
	}
	if ids, err := rt.List(); err != nil || len(ids) != 1 || ids[0] != "c" {
		t.Fatalf("List = %v, %v", ids, err)
	}
}
