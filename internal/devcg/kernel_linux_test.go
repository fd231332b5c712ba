package devcg

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/opencontainers/cgroups"
	devices "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// probeScript opens each device given for reading, for writing and for
// both, and prints what it could open.
const probeScript = `for d in "$@"; do
	true <"$d" && echo "$d r"
	true >>"$d" && echo "$d w"
	true 1<>"$d" && echo "$d rw"
done; true`

var probeDevices = []string{"/dev/null", "/dev/zero", "/dev/full"} // c 1:3, 1:5, 1:7

// opened runs the probe in a process that cmd puts where it must be, and
// returns what it opened, "DEVICE ACCESS" a line.
func opened(t *testing.T, cmd *exec.Cmd) []string {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("probe: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("probe: %v", err)
	}
	var lines []string
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func wantOpened(t *testing.T, got []string, want ...string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("opened %q, want %q", got, want)
	}
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("device rules need root (the devices cgroup, bpf(2)): run the tests as root")
	}
}

// v2Cgroup makes a cgroup named after name in the cgroup v2 hierarchy, as
// root, and skips the test where there is none.
func v2Cgroup(t *testing.T, name string) string {
	t.Helper()
	requireRoot(t)
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if ok && strings.HasPrefix(post, "cgroup2 ") {
			return mkCgroup(t, strings.Fields(pre)[4], name)
		}
	}
	t.Skip("no cgroup v2 hierarchy is mounted here")
	return ""
}

func mkCgroup(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, fmt.Sprintf("nbx-devcg-%s-%d", name, os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup below %s (%v): the device tests need a writable cgroup hierarchy", parent, err)
	}
	t.Cleanup(func() {
		_ = os.Remove(filepath.Join(dir, "sub"))
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	return dir
}

func resources(rules ...*devices.Rule) *cgroups.Resources {
	return &cgroups.Resources{Devices: rules}
}

// A cgroup v2 directory gets one device program, which refuses what the
// rules refuse to a process started in it, and which a second SetV2
// replaces rather than adds to.
func TestSetV2(t *testing.T) {
	dir := v2Cgroup(t, "v2")
	probe := func() []string {
		fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		cmd := exec.Command("/bin/sh", append([]string{"-c", probeScript, "sh"}, probeDevices...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		return opened(t, cmd)
	}
	wantOpened(t, probe(), "/dev/null r", "/dev/null w", "/dev/null rw", "/dev/zero r", "/dev/zero w", "/dev/zero rw", "/dev/full r", "/dev/full w", "/dev/full rw")

	// Deny by default: /dev/null for everything, /dev/zero for reading.
	if err := SetV2(dir, resources(rule(false, 'a', w, w, "rwm"), rule(true, 'c', 1, 3, "rwm"), rule(true, 'c', 1, 5, "r"))); err != nil {
		t.Fatal(err)
	}
	wantOpened(t, probe(), "/dev/null r", "/dev/null w", "/dev/null rw", "/dev/zero r")

	// Allow by default, /dev/null may not be written: opening it for
	// reading and writing shares an access with the rule, and is refused.
	if err := SetV2(dir, resources(rule(true, 'a', w, w, "rwm"), rule(false, 'c', 1, 3, "w"))); err != nil {
		t.Fatal(err)
	}
	wantOpened(t, probe(), "/dev/null r", "/dev/zero r", "/dev/zero w", "/dev/zero rw", "/dev/full r", "/dev/full w", "/dev/full rw")

	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	progs, err := attachedPrograms(fd)
	if err != nil {
		t.Fatal(err)
	}
	closeAll(progs)
	if len(progs) != 1 {
		t.Fatalf("%d device programs attached after two SetV2, want 1", len(progs))
	}

	// SkipDevices leaves the program there.
	if err := SetV2(dir, &cgroups.Resources{SkipDevices: true}); err != nil {
		t.Fatal(err)
	}
	wantOpened(t, probe(), "/dev/null r", "/dev/zero r", "/dev/zero w", "/dev/zero rw", "/dev/full r", "/dev/full w", "/dev/full rw")
}

// The v1 devices cgroup gets the rules; a later SetV1 changes only the
// exceptions that differ, so it works on a cgroup with children (where
// the kernel refuses to reset the default) and a device both rule sets
// allow is never refused in between; a change of default on such a
// cgroup is an error, not a half-written cgroup.
func TestSetV1(t *testing.T) {
	requireRoot(t)
	root := "/sys/fs/cgroup/devices"
	if _, err := os.Stat(filepath.Join(root, "devices.list")); err != nil {
		t.Skip("no cgroup v1 devices hierarchy at /sys/fs/cgroup/devices")
	}
	dir := mkCgroup(t, root, "v1")
	probe := func() []string {
		script := `echo $$ >"$0/cgroup.procs" || exit 9` + "\n" + probeScript
		return opened(t, exec.Command("/bin/sh", append([]string{"-c", script, dir}, probeDevices...)...))
	}
	list := func() *State {
		t.Helper()
		s, err := readV1(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	first := resources(rule(false, 'a', w, w, "rwm"), rule(true, 'c', w, w, "m"), rule(true, 'c', 1, 3, "rwm"), rule(true, 'c', 1, 5, "r"))
	if err := SetV1(dir, first); err != nil {
		t.Fatal(err)
	}
	want, _ := Build(first.Devices)
	if got := list(); !got.Equal(want) {
		t.Fatalf("devices.list %+v, want %+v", *got, *want)
	}
	wantOpened(t, probe(), "/dev/null r", "/dev/null w", "/dev/null rw", "/dev/zero r")

	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	second := resources(rule(false, 'a', w, w, "rwm"), rule(true, 'c', w, w, "m"), rule(true, 'c', 1, 5, "rw"), rule(true, 'c', 1, 7, "w"))
	if err := SetV1(dir, second); err != nil {
		t.Fatalf("change of exceptions on a cgroup with a child: %v", err)
	}
	want, _ = Build(second.Devices)
	if got := list(); !got.Equal(want) {
		t.Fatalf("devices.list %+v, want %+v", *got, *want)
	}
	wantOpened(t, probe(), "/dev/zero r", "/dev/zero w", "/dev/zero rw", "/dev/full w")

	err := SetV1(dir, resources(rule(true, 'a', w, w, "rwm")))
	if !errors.Is(err, unix.EINVAL) {
		t.Fatalf("reset to allow-all on a cgroup with a child: %v, want EINVAL", err)
	}
	if got := list(); !got.Equal(want) {
		t.Fatalf("after the refused reset devices.list is %+v, want %+v", *got, *want)
	}

	// Allow by default, in a cgroup without children (the kernel takes a
	// while to let go of one removed).
	dir = mkCgroup(t, root, "v1-allow")
	if err := SetV1(dir, resources(rule(true, 'a', w, w, "rwm"), rule(false, 'c', 1, 3, "rw"))); err != nil {
		t.Fatal(err)
	}
	if got := list(); !got.AllowByDefault {
		t.Fatalf("devices.list %+v, want allow by default", *got)
	}
	wantOpened(t, probe(), "/dev/zero r", "/dev/zero w", "/dev/zero rw", "/dev/full r", "/dev/full w", "/dev/full rw")
}

// Every device program attached before goes, however many there are: two
// deny-everything programs attached beside each other (as systemd or an
// earlier runtime might leave them) would otherwise still refuse what the
// new rules allow, since the kernel lets an access through only when
// every program does.
func TestSetV2ReplacesEveryOldProgram(t *testing.T) {
	dir := v2Cgroup(t, "v2-old")
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	denyAll, err := Program(&State{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		prog, err := loadProgram(denyAll)
		if err != nil {
			t.Fatal(err)
		}
		err = attach(fd, prog, -1, unix.BPF_F_ALLOW_MULTI)
		unix.Close(prog)
		if err != nil {
			t.Fatal(err)
		}
	}
	probe := func() []string {
		cmd := exec.Command("/bin/sh", append([]string{"-c", probeScript, "sh"}, probeDevices...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		return opened(t, cmd)
	}
	wantOpened(t, probe())

	if err := SetV2(dir, resources(rule(true, 'a', w, w, "rwm"))); err != nil {
		t.Fatal(err)
	}
	progs, err := attachedPrograms(fd)
	if err != nil {
		t.Fatal(err)
	}
	closeAll(progs)
	if len(progs) != 1 {
		t.Fatalf("%d device programs attached after SetV2, want 1", len(progs))
	}
	wantOpened(t, probe(), "/dev/null r", "/dev/null w", "/dev/null rw", "/dev/zero r", "/dev/zero w", "/dev/zero rw", "/dev/full r", "/dev/full w", "/dev/full rw")
}
