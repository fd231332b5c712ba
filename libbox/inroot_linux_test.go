package libbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// hostileTree makes, under dir, a rootfs whose symlinks try to lead out of
// it (absolute, "..", to the host's /tmp, dangling, through a file) and an
// "outside" directory beside it that nothing may touch.
func hostileTree(t *testing.T, dir string) (root, outside string) {
	t.Helper()
	root = filepath.Join(dir, "root")
	outside = filepath.Join(dir, "outside")
	for _, d := range []string{root + "/etc", root + "/usr/lib", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root+"/file", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"abs":      "/",
		"dotdot":   "../../../../../..",
		"escape":   "../outside",
		"hostpath": outside,
		"lib":      "usr/lib",
		"dangling": "/nowhere/deeper",
		"tofile":   "/file",
		"loop":     "loop",
		"etc/up":   "../../..",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// inRootCases are the paths both implementations are asked for.
var inRootCases = []string{
	"", "/", "etc", "/etc/new", "abs/etc/made", "dotdot/made/deep", "escape/x",
	"hostpath/y", "lib/sub", "etc/up/etc/z", "dangling", "dangling/below",
	"tofile/sub", "file/sub", "loop/x", "new/../x", "/a/b/c/d", "etc/./dot",
}

// listTree is every path under dir, with a trailing slash for directories.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func errnoOf(err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

func openRoot(t *testing.T, root string) *os.File {
	t.Helper()
	f, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// handleIn checks that f is on a file inside root (or root itself) and
// returns its path relative to root.
func handleIn(t *testing.T, f *os.File, root string) string {
	t.Helper()
	p, err := os.Readlink(procSelfFd(f))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		t.Fatalf("handle on %s, outside the root %s", p, root)
	}
	return rel
}

// TestMkdirAllInRootMatchesPathrs runs mkdirAllInRoot and pathrs-lite's
// MkdirAllHandle on two copies of a hostile tree: for every path, the same
// errno or a handle on the same place, the same trees afterwards, and
// nothing made outside the root.
func TestMkdirAllInRootMatchesPathrs(t *testing.T) {
	for _, p := range inRootCases {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			ours, theirs := t.TempDir(), t.TempDir()
			rootA, outA := hostileTree(t, ours)
			rootB, outB := hostileTree(t, theirs)
			a, errA := mkdirAllInRoot(openRoot(t, rootA), p, 0o755)
			b, errB := pathrs.MkdirAllHandle(openRoot(t, rootB), p, 0o755)
			if (errA == nil) != (errB == nil) || (errA != nil && errnoOf(errA) != errnoOf(errB)) {
				t.Fatalf("mkdirAllInRoot(%q) = %v, pathrs-lite: %v", p, errA, errB)
			}
			if errA == nil {
				defer a.Close()
				defer b.Close()
				if ra, rb := handleIn(t, a, rootA), handleIn(t, b, rootB); ra != rb {
					t.Fatalf("mkdirAllInRoot(%q) is on %q, pathrs-lite's on %q", p, ra, rb)
				}
			}
			ta, tb := listTree(t, rootA), listTree(t, rootB)
			if strings.Join(ta, " ") != strings.Join(tb, " ") {
				t.Fatalf("trees differ after %q:\nours   %v\npathrs %v", p, ta, tb)
			}
			if got := listTree(t, outA); len(got) != 1 {
				t.Fatalf("%q made %v outside the root", p, got)
			}
			_ = outB
		})
	}
}

// TestOpenInRootMatchesPathrs: openInRoot and pathrs-lite's OpenatInRoot
// find the same file (or fail with the same errno) for every path, and
// never one outside the root.
func TestOpenInRootMatchesPathrs(t *testing.T) {
	rootDir, _ := hostileTree(t, t.TempDir())
	root := openRoot(t, rootDir)
	for _, p := range append(inRootCases, "dotdot", "escape", "hostpath", "abs", "etc/up") {
		a, errA := openInRoot(root, p)
		b, errB := pathrs.OpenatInRoot(root, p)
		if (errA == nil) != (errB == nil) || (errA != nil && errnoOf(errA) != errnoOf(errB)) {
			t.Fatalf("openInRoot(%q) = %v, pathrs-lite: %v", p, errA, errB)
		}
		if errA != nil {
			continue
		}
		var sa, sb unix.Stat_t
		if err := unix.Fstat(int(a.Fd()), &sa); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fstat(int(b.Fd()), &sb); err != nil {
			t.Fatal(err)
		}
		if sa.Dev != sb.Dev || sa.Ino != sb.Ino {
			t.Fatalf("openInRoot(%q) and pathrs-lite found different files", p)
		}
		handleIn(t, a, rootDir)
		a.Close()
		b.Close()
	}
}

// TestInRootWithoutOpenat2: where openat2 is refused (ENOSYS from an old
// kernel, EPERM from a seccomp filter), the lookups go to pathrs-lite and
// still stay inside the root.
func TestInRootWithoutOpenat2(t *testing.T) {
	for _, errno := range []unix.Errno{unix.ENOSYS, unix.EPERM} {
		calls := 0
		openat2 = func(int, string, *unix.OpenHow) (int, error) { calls++; return -1, errno }
		rootDir, outside := hostileTree(t, t.TempDir())
		root := openRoot(t, rootDir)
		f, err := mkdirAllInRoot(root, "dotdot/made", 0o755)
		if err != nil {
			openat2 = unix.Openat2
			t.Fatalf("%v: mkdirAllInRoot: %v", errno, err)
		}
		if rel := handleIn(t, f, rootDir); rel != "made" {
			t.Errorf("%v: made %q, want made at the top of the root", errno, rel)
		}
		f.Close()
		g, err := openInRoot(root, "etc/up/lib")
		openat2 = unix.Openat2
		if err != nil {
			t.Fatalf("%v: openInRoot: %v", errno, err)
		}
		if rel := handleIn(t, g, rootDir); rel != "usr/lib" {
			t.Errorf("%v: found %q, want usr/lib", errno, rel)
		}
		g.Close()
		if calls == 0 {
			t.Errorf("%v: the injected openat2 was never called", errno)
		}
		if got := listTree(t, outside); len(got) != 1 {
			t.Errorf("%v: made %v outside the root", errno, got)
		}
	}
}

// TestMkdirAllInRootSwappedSymlink races mkdirAllInRoot and openInRoot
// against a directory of the root that another thread keeps exchanging
// with a symlink that leads out of it (renameat2 RENAME_EXCHANGE, the
// CVE-2021-30465 pattern). Whatever each call returns, no handle is
// outside the root and nothing is made outside it.
func TestMkdirAllInRootSwappedSymlink(t *testing.T) {
	dir := t.TempDir()
	rootDir, outside := filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	for _, d := range []string{rootDir + "/a", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", rootDir+"/evil"); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, rootDir)
	stop, started := make(chan struct{}), make(chan struct{})
	done := make(chan int)
	go func() {
		swaps := 0
		for {
			if swaps == 1 {
				close(started)
			}
			select {
			case <-stop:
				done <- swaps
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, rootDir+"/a", unix.AT_FDCWD, rootDir+"/evil", unix.RENAME_EXCHANGE); err == nil {
				swaps++
			}
		}
	}()
	<-started
	made := 0
	for i := range 2000 {
		if f, err := mkdirAllInRoot(root, fmt.Sprintf("a/b%d/c", i%7), 0o755); err == nil {
			handleIn(t, f, rootDir)
			f.Close()
			made++
		}
		if f, err := openInRoot(root, "a/."); err == nil {
			handleIn(t, f, rootDir)
			f.Close()
		}
	}
	close(stop)
	swaps := <-done
	if got := listTree(t, outside); len(got) != 1 {
		t.Fatalf("made %v outside the root (%d swaps)", got, swaps)
	}
	if swaps == 0 || made == 0 {
		t.Fatalf("the race did not happen: %d swaps, %d directories made", swaps, made)
	}
	t.Logf("%d swaps, %d of 2000 mkdirAllInRoot calls made their directory inside the root", swaps, made)
}
