package libbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestValidateID(t *testing.T) {
	// runc 1.1.5 accepts these (its class [\w+-\.] includes the comma)...
	good := []string{"a", "abc-123_X.y", "a+b", "a,b", "x..y", ".a", "a.", "..a", strings.Repeat("x", maxIDLen)}
	for _, id := range good {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", id, err)
		}
	}
	// ... and refuses these.
	bad := []string{"", ".", "..", "../x", "a/b", "/abs", "nul\x00", "a b", "a;b", "$(x)", "a\nb", "é", "a:b", "a*", "~x", strings.Repeat("x", maxIDLen+1)}
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
	if err := writeState(dir, in, true); err != nil {
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
	if err := writeState(dir, st, true); err != nil {
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

func TestWriteStateSyncsTheDirectoryAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	var synced []string
	orig := syncDir
	syncDir = func(d string) error {
		// The rename must already have happened: the directory entry is
		// what the fsync makes durable.
		if _, err := os.Stat(filepath.Join(d, stateFile)); err != nil {
			t.Errorf("directory fsynced before state.json was renamed into it: %v", err)
		}
		synced = append(synced, d)
		return orig(d)
	}
	defer func() { syncDir = orig }()
	st := &persisted{ID: "c", InitPid: 1, Config: &Config{}}
	if err := writeState(dir, st, true); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Fatalf("directories fsynced: %q, want [%q]", synced, dir)
	}
}

// blockedOnFlock reports (nil) once some process waits for an flock on the
// file with inode ino (a "->" line in /proc/locks), or an error after a
// generous deadline; closing stop ends the watch.
func blockedOnFlock(ino uint64, stop <-chan struct{}) <-chan error {
	ch := make(chan error, 1)
	suffix := ":" + strconv.FormatUint(ino, 10)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile("/proc/locks")
			if err != nil {
				ch <- err
				return
			}
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				if len(f) > 6 && f[1] == "->" && f[2] == "FLOCK" && strings.HasSuffix(f[6], suffix) {
					ch <- nil
					return
				}
			}
		}
		ch <- fmt.Errorf("nobody waited for the flock on inode %d within 30s", ino)
	}()
	return ch
}

func TestRemoveStaleCannotRemoveADirectoryCreateHasNotLockedYet(t *testing.T) {
	rt := &Runtime{Root: t.TempDir()}
	// Create's window: the directory exists, its lock not taken yet. Create
	// holds the root's lock across it (newStateDir); so does the test.
	rootLock, err := rt.lockRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := rt.dir("c")
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	var rootSt unix.Stat_t
	if err := unix.Stat(rt.Root, &rootSt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- rt.RemoveStale("c") }()
	stop := make(chan struct{})
	defer close(stop)
	select {
	case err := <-done:
		t.Fatalf("RemoveStale ran inside create's window (returned %v); the directory exists: %v", err, dirExists(dir))
	case err := <-blockedOnFlock(rootSt.Ino, stop):
		if err != nil {
			t.Fatal(err)
		}
	}
	// Create goes on: locks its directory, lets go of the root, writes
	// its state.
	lock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rootLock.Close()
	if err := writeState(dir, &persisted{ID: "c", InitPid: 1, Config: &Config{}}, true); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if err := <-done; !errors.Is(err, ErrExist) {
		t.Fatalf("RemoveStale of a container that got its state = %v, want ErrExist", err)
	}
	if !dirExists(dir) {
		t.Fatal("RemoveStale removed the directory of a container being created")
	}
}

func TestLockDirOfAReplacedDirectoryIsNotExist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	f, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Removed and made again (a new container with the same id) between
	// the open and the lock.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if _, err := lockOpenDir(f, dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock of a replaced directory = %v, want fs.ErrNotExist", err)
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
