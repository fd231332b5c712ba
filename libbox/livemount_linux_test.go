package libbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// sharedDir is a host directory the test user may use too.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSandboxMountLive(t *testing.T) {
	sb := startSandbox(t, Options{})
	dir := sharedDir(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := sb.Mount(Bind{Source: dir, Target: "/tmp/data/deep", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if h.Target() != "/tmp/data/deep" || !h.Info().ReadOnly || h.Info().MountID == 0 {
		t.Fatalf("mount %+v", h.Info())
	}
	res := execOut(t, sb, "cat /tmp/data/deep/f; touch /tmp/data/deep/x 2>&1 || echo refused; grep ' /tmp/data/deep ' /proc/self/mountinfo | grep -o 'ro,nosuid,nodev'")
	if got := string(res.Stdout); !strings.Contains(got, "from the host\n") || !strings.Contains(got, "refused") || !strings.Contains(got, "ro,nosuid,nodev") {
		t.Fatalf("read-only mount inside: %q %q", got, res.Stderr)
	}
	if err := h.Remount(false); err != nil {
		t.Fatal(err)
	}
	res = execOut(t, sb, "echo written >/tmp/data/deep/x && echo ok")
	if string(res.Stdout) != "ok\n" {
		t.Fatalf("after remount rw: %q %q", res.Stdout, res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x")); err != nil || string(b) != "written\n" {
		t.Fatalf("the host does not see the write: %q %v", b, err)
	}
	if err := h.Remount(true); err != nil {
		t.Fatal(err)
	}
	res = execOut(t, sb, "echo again >/tmp/data/deep/x 2>/dev/null || echo refused")
	if string(res.Stdout) != "refused\n" {
		t.Fatalf("after remount ro: %q", res.Stdout)
	}

	// A file onto a file (made empty when missing).
	file := filepath.Join(dir, "f")
	hf, err := sb.Mount(Bind{Source: file, Target: "/tmp/one-file"})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := sb.Mounts()
	if err != nil || len(ms) != 2 || ms[0].Target != "/tmp/data/deep" || ms[1].Target != "/tmp/one-file" || ms[1].ReadOnly {
		t.Fatalf("Mounts: %+v %v", ms, err)
	}
	if _, err := sb.Mount(Bind{Source: dir, Target: "/tmp/one-file"}); !errors.Is(err, ErrExist) {
		t.Errorf("a second mount at the same target: %v", err)
	}
	if err := hf.Unmount(); err != nil {
		t.Fatal(err)
	}
	if err := h.Unmount(); err != nil {
		t.Fatal(err)
	}
	res = execOut(t, sb, "ls -A /tmp/data/deep; cat /tmp/one-file; echo end")
	if string(res.Stdout) != "end\n" {
		t.Errorf("after unmount: %q", res.Stdout)
	}
	if ms, err := sb.Mounts(); err != nil || len(ms) != 0 {
		t.Errorf("Mounts after unmount: %+v %v", ms, err)
	}
	if err := h.Unmount(); !errors.Is(err, ErrNotAdded) {
		t.Errorf("second Unmount: %v", err)
	}
}

// The sandbox's root is read-only: a target whose directory is missing
// there is refused, with the way out.
func TestSandboxMountReadOnlyRoot(t *testing.T) {
	sb := startSandbox(t, Options{})
	dir := sharedDir(t)
	_, err := sb.Mount(Bind{Source: dir, Target: "/data"})
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "/tmp") {
		t.Fatalf("mount at /data on a read-only root: %v", err)
	}
	_, err = sb.Mount(Bind{Source: dir, Target: "/newdir/data"})
	if err == nil || !strings.Contains(err.Error(), "/newdir does not exist, and the container's root is read-only") {
		t.Fatalf("mount at /newdir/data: %v", err)
	}
	for _, bad := range []string{"", "relative/path", "/"} {
		if _, err := sb.Mount(Bind{Source: dir, Target: bad}); err == nil {
			t.Errorf("target %q accepted", bad)
		}
	}
	if _, err := sb.Mount(Bind{Source: "/no/such/source", Target: "/tmp/x"}); err == nil {
		t.Error("missing source accepted")
	}
	if ms, err := sb.Mounts(); err != nil || len(ms) != 0 {
		t.Errorf("Mounts after refusals: %+v %v", ms, err)
	}
}

// Only what Mount added can be removed: not the sandbox's own mounts.
func TestSandboxMountRemoveOwn(t *testing.T) {
	sb := startSandbox(t, Options{})
	ctr := sb.live.in.ctr
	for _, own := range []string{"/tmp", "/usr", "/proc", "/dev/pts"} {
		if err := ctr.RemoveMount(own); !errors.Is(err, ErrNotAdded) {
			t.Errorf("umount %s: %v, want ErrNotAdded", own, err)
		}
	}
	res := execOut(t, sb, "grep -c ' /usr ' /proc/self/mountinfo")
	if strings.TrimSpace(string(res.Stdout)) != "1" {
		t.Errorf("/usr: %q", res.Stdout)
	}
}

// Targets that try to leave the sandbox's root: "..", absolute and
// relative symlinks, magic links, a symlink as the last component. Each
// either lands inside the root or is refused; nothing appears on the host.
func TestSandboxMountEscape(t *testing.T) {
	sb := startSandbox(t, Options{})
	dir := sharedDir(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("nbx-escape-%d", os.Getpid())
	res := execOut(t, sb, "mkdir /tmp/in && ln -s / /tmp/abs && ln -s ../../../../.. /tmp/rel && ln -s /etc /tmp/etc-link && echo ok")
	if string(res.Stdout) != "ok\n" {
		t.Fatalf("set-up inside: %q %q", res.Stdout, res.Stderr)
	}
	for _, tc := range []struct {
		target string
		// want is the path the mount lands on inside, or "" for a refusal
		// containing refused.
		want, refused string
	}{
		{"/tmp/../../../tmp/in/dots", "/tmp/in/dots", ""},
		{"/tmp/abs/tmp/in/through-abs", "/tmp/in/through-abs", ""},
		{"/tmp/rel/tmp/in/through-rel", "/tmp/in/through-rel", ""},
		{"/tmp/abs/" + tag, "", "read-only"},
		{"/tmp/rel/" + tag, "", "read-only"},
		{"/tmp/etc-link", "", "symbolic link"},
		{"/proc/self/root/tmp/" + tag, "", ""},
		{"/proc/1/root/tmp/" + tag, "", ""},
	} {
		h, err := sb.Mount(Bind{Source: dir, Target: tc.target})
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: mounted at %s, want a refusal", tc.target, h.Target())
			_ = h.Unmount()
		case tc.want == "" && !strings.Contains(fmt.Sprint(err), tc.refused):
			t.Errorf("%s: %v, want a refusal saying %q", tc.target, err, tc.refused)
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v", tc.target, err)
		case tc.want != "" && h.Target() != tc.want:
			t.Errorf("%s: landed at %s, want %s", tc.target, h.Target(), tc.want)
		case tc.want != "":
			res := execOut(t, sb, "cat "+tc.want+"/f")
			if string(res.Stdout) != "x" {
				t.Errorf("%s: not visible at %s inside: %q", tc.target, tc.want, res.Stdout)
			}
		}
	}
	for _, p := range []string{"/" + tag, "/tmp/" + tag, "/tmp/in"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s appeared on the host", p)
		}
	}
	if ms, err := sb.Mounts(); err != nil || len(ms) != 3 {
		t.Errorf("Mounts: %+v %v", ms, err)
	}
}

// A process in the sandbox swaps the target's directory with a symlink to
// the root while mounts are added: each mount lands inside, on the
// directory or refused (the root is read-only), never elsewhere.
func TestSandboxMountSymlinkRace(t *testing.T) {
	sb := startSandbox(t, Options{})
	dir := sharedDir(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bounded loop of renames, no forks: t is by turns a directory and
	// a symlink to /.
	racer, err := sb.Exec(t.Context(), "/usr/bin/perl", []string{"-e", `
		mkdir "/tmp/race"; chdir "/tmp/race" or die; mkdir "d"; symlink "/", "l";
		rename "d", "t"; print "ready\n"; $| = 1;
		for (1..2000000) { rename "t", "x"; rename "l", "t"; rename "x", "l";
			rename "t", "x"; rename "l", "t"; rename "x", "l"; }
		rename "l", "t" if -l "t"; print "done\n";`}, Stdio{})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, racer, racer.Stdout, "ready\n")
	landed, refused := 0, 0
	for i := range 40 {
		h, err := sb.Mount(Bind{Source: dir, Target: fmt.Sprintf("/tmp/race/t/m%d", i)})
		if err != nil {
			refused++
			continue
		}
		landed++
		if got := h.Target(); !strings.HasPrefix(got, "/tmp/race/") {
			t.Errorf("mount %d landed at %s", i, got)
		}
	}
	_ = racer.Kill()
	if _, err := racer.WaitWithOutput(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d mounts landed in the directory, %d refused", landed, refused)
	ms, err := sb.Mounts()
	if err != nil || len(ms) != landed {
		t.Fatalf("Mounts: %d, want %d (%v)", len(ms), landed, err)
	}
	// Each is on the directory, whatever its name is now.
	for _, m := range ms {
		res := execOut(t, sb, "cat /tmp/race/*/"+filepath.Base(m.Target)+"/f 2>/dev/null")
		if string(res.Stdout) != "x" {
			t.Errorf("%s: not on the directory: %q", m.Target, res.Stdout)
		}
	}
}

// A source on a read-only filesystem: the mount is read-only whatever was
// asked, and cannot be made writable.
func TestSandboxMountSourceReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a read-only filesystem (mount.bats covers it rootless)")
	}
	sb := startSandbox(t, Options{})
	ro := t.TempDir()
	if err := unix.Mount("tmpfs", ro, "tmpfs", unix.MS_RDONLY, "size=64k"); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(ro, unix.MNT_DETACH)
	h, err := sb.Mount(Bind{Source: ro, Target: "/tmp/ro"})
	if err != nil {
		t.Fatal(err)
	}
	if m := h.Info(); !m.ReadOnly || !m.SourceReadOnly {
		t.Fatalf("mount of a read-only source: %+v", m)
	}
	if err := h.Remount(false); err == nil || !strings.Contains(err.Error(), "read-only mount") {
		t.Fatalf("remount read-write: %v", err)
	}
	// Past the runtime's own check, the kernel: the filesystem itself is
	// read-only.
	ctr := sb.live.in.ctr
	if _, err := ctr.mountHelper(mountOp{Op: "remount", Target: "/tmp/ro", MountID: h.Info().MountID}, nil); err != nil {
		t.Logf("the kernel refuses the remount too: %v", err)
	}
	res := execOut(t, sb, "touch /tmp/ro/x 2>&1; echo $?")
	if !strings.Contains(string(res.Stdout), "Read-only file system") {
		t.Errorf("write into the read-only source: %q", res.Stdout)
	}
	if _, err := os.Lstat(filepath.Join(ro, "x")); err == nil {
		t.Error("the write reached the source")
	}
}
