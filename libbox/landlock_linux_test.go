package libbox

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeLandlockABI plays a kernel with the given Landlock ABI.
func fakeLandlockABI(t *testing.T, abi int) {
	t.Helper()
	saved := landlockABI
	t.Cleanup(func() { landlockABI = saved })
	landlockABI = func() int { return abi }
}

func TestLandlockValidate(t *testing.T) {
	for _, tc := range []struct {
		l    Landlock
		want string
	}{
		{Landlock{ReadOnly: []string{"/"}}, ""},
		{Landlock{RestrictNetwork: true, AllowBind: []uint16{80}}, ""},
		{Landlock{}, "nothing to restrict"},
		{Landlock{Required: true}, "nothing to restrict"},
		{Landlock{ReadOnly: []string{"/"}, AllowConnect: []uint16{443}}, "need restrictNetwork"},
		{Landlock{ReadWrite: []string{"tmp"}}, `readWrite path "tmp" must be an absolute container path`},
		{Landlock{ReadOnly: []string{"/a\x00b"}}, "readOnly path"},
	} {
		err := tc.l.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want %q", tc.l, err, tc.want)
		}
	}
}

func TestLandlockPlan(t *testing.T) {
	fsOnly := &Landlock{ReadOnly: []string{"/"}, ReadWrite: []string{"/tmp"}}
	netOnly := &Landlock{RestrictNetwork: true}
	both := &Landlock{ReadOnly: []string{"/"}, RestrictNetwork: true}
	const v1 = llRead | llWrite
	for _, tc := range []struct {
		l       *Landlock
		abi     int
		fs, net uint64
		status  LandlockStatus
		missing []string
	}{
		{fsOnly, 0, 0, 0, LandlockUnavailable, []string{"filesystem access (needs Landlock ABI 1)", "truncation (needs Landlock ABI 3)", "ioctl on device files (needs Landlock ABI 5)"}},
		{fsOnly, 1, v1, 0, LandlockDegraded, []string{"truncation (needs Landlock ABI 3)", "ioctl on device files (needs Landlock ABI 5)"}},
		{fsOnly, 2, v1 | unix.LANDLOCK_ACCESS_FS_REFER, 0, LandlockDegraded, []string{"truncation (needs Landlock ABI 3)", "ioctl on device files (needs Landlock ABI 5)"}},
		{fsOnly, 4, v1 | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE, 0, LandlockDegraded, []string{"ioctl on device files (needs Landlock ABI 5)"}},
		{fsOnly, 5, v1 | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, 0, LandlockEnforced, nil},
		{fsOnly, 7, v1 | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, 0, LandlockEnforced, nil},
		{netOnly, 3, 0, 0, LandlockDegraded, []string{"TCP bind and connect (needs Landlock ABI 4)"}},
		{netOnly, 4, 0, llTCP, LandlockEnforced, nil},
		{both, 3, v1 | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE, 0, LandlockDegraded, []string{"TCP bind and connect (needs Landlock ABI 4)", "ioctl on device files (needs Landlock ABI 5)"}},
		{both, 6, v1 | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, llTCP, LandlockEnforced, nil},
	} {
		fs, net, r := landlockPlan(tc.l, tc.abi)
		if fs != tc.fs || net != tc.net || r.Status != tc.status || r.ABI != tc.abi || !reflect.DeepEqual(r.NotEnforced, tc.missing) {
			t.Errorf("%+v on ABI %d: fs %#x net %#x %+v, want fs %#x net %#x %s %q", *tc.l, tc.abi, fs, net, r, tc.fs, tc.net, tc.status, tc.missing)
		}
	}
}

func TestCheckLandlockRequired(t *testing.T) {
	l := &Landlock{ReadOnly: []string{"/"}, RestrictNetwork: true, Required: true}
	fakeLandlockABI(t, 0)
	if _, err := CheckLandlock(l); err == nil || !strings.Contains(err.Error(), "landlock is required but this kernel does not have it") {
		t.Errorf("ABI 0: %v", err)
	}
	fakeLandlockABI(t, 3)
	if _, err := CheckLandlock(l); err == nil || !strings.Contains(err.Error(), "(Landlock ABI 3) cannot enforce: [TCP bind and connect") {
		t.Errorf("ABI 3: %v", err)
	}
	// prepareLandlock, which init runs, refuses too.
	if fd, _, err := prepareLandlock(l); err == nil || fd != -1 {
		t.Errorf("prepare on ABI 3: fd %d %v", fd, err)
	}
	l.Required = false
	r, err := CheckLandlock(l)
	if err != nil || r.Status != LandlockDegraded {
		t.Errorf("best effort on ABI 3: %+v %v", r, err)
	}
	fakeLandlockABI(t, 5)
	l.Required = true
	if r, err := CheckLandlock(l); err != nil || r.Status != LandlockEnforced {
		t.Errorf("ABI 5: %+v %v", r, err)
	}
	// Best effort on a kernel without Landlock: nothing to enforce.
	fakeLandlockABI(t, 0)
	l.Required = false
	if fd, _, err := prepareLandlock(l); err != nil || fd != -1 {
		t.Errorf("prepare on ABI 0: fd %d %v", fd, err)
	}
}

// TestLandlockEnforced restricts a throwaway thread for real and checks
// what it can still do.
func TestLandlockEnforced(t *testing.T) {
	abi := landlockABI()
	if abi < 1 {
		t.Skip("this kernel has no Landlock")
	}
	dir := t.TempDir()
	for _, d := range []string{"ro", "rw", "secret"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roFile := filepath.Join(dir, "secret", "f")
	l := &Landlock{
		ReadOnly:        []string{filepath.Join(dir, "ro"), roFile}, // a file as well as a directory
		ReadWrite:       []string{filepath.Join(dir, "rw")},
		RestrictNetwork: abi >= 4,
	}
	open := func(p string, flags int) error {
		fd, err := unix.Open(p, flags|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	onThrowawayThread(func() {
		fd, flags, err := prepareLandlock(l)
		if err != nil || fd < 0 {
			t.Errorf("prepare: fd %d %v", fd, err)
			return
		}
		if err := restrictLandlock(fd, flags); err != nil {
			t.Error(err)
			return
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			t.Errorf("ruleset fd left open: %v", err)
		}
		for _, tc := range []struct {
			path  string
			flags int
			want  error
		}{
			{filepath.Join(dir, "ro", "f"), unix.O_RDONLY, nil},
			{filepath.Join(dir, "ro"), unix.O_RDONLY | unix.O_DIRECTORY, nil},
			{filepath.Join(dir, "ro", "f"), unix.O_WRONLY, unix.EACCES},
			{filepath.Join(dir, "ro", "new"), unix.O_WRONLY | unix.O_CREAT, unix.EACCES},
			{filepath.Join(dir, "rw", "f"), unix.O_RDWR, nil},
			{filepath.Join(dir, "rw", "new"), unix.O_WRONLY | unix.O_CREAT, nil},
			{roFile, unix.O_RDONLY, nil},
			{roFile, unix.O_WRONLY, unix.EACCES},
			{filepath.Join(dir, "secret"), unix.O_RDONLY | unix.O_DIRECTORY, unix.EACCES},
			{dir, unix.O_RDONLY | unix.O_DIRECTORY, unix.EACCES},
		} {
			if err := open(tc.path, tc.flags); !errors.Is(err, tc.want) && err != tc.want {
				t.Errorf("open %s %#x: %v, want %v", tc.path, tc.flags, err, tc.want)
			}
		}
		if abi >= 4 {
			s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer unix.Close(s)
			err = unix.Bind(s, &unix.SockaddrInet4{Port: 1, Addr: [4]byte{127, 0, 0, 1}})
			if !errors.Is(err, unix.EACCES) {
				t.Errorf("bind TCP port 1: %v, want EACCES", err)
			}
		}
	})
	// The rest of the process is not restricted.
	if err := open(filepath.Join(dir, "secret", "f"), unix.O_WRONLY); err != nil {
		t.Errorf("the test's own thread is restricted: %v", err)
	}
}

func TestLandlockMissingPath(t *testing.T) {
	if landlockABI() < 1 {
		t.Skip("this kernel has no Landlock")
	}
	_, _, err := prepareLandlock(&Landlock{ReadOnly: []string{"/no/such/path"}})
	if err == nil || !strings.Contains(err.Error(), "landlock: readOnly path /no/such/path") || !errors.Is(err, unix.ENOENT) {
		t.Errorf("error %v", err)
	}
}
