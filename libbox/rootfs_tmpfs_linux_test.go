package libbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestTmpfsRootValidate(t *testing.T) {
	for _, tc := range []struct {
		root TmpfsRoot
		want string
	}{
		{TmpfsRoot{Size: -1}, "negative size"},
		{TmpfsRoot{Symlinks: []Symlink{{Path: "/usr/bin", Target: "x"}}}, "one name at the top"},
		{TmpfsRoot{Symlinks: []Symlink{{Path: "/..", Target: "x"}}}, "one name at the top"},
		{TmpfsRoot{Symlinks: []Symlink{{Path: "/", Target: "x"}}}, "one name at the top"},
		{TmpfsRoot{Symlinks: []Symlink{{Path: "/bin", Target: ""}}}, "invalid target"},
		{TmpfsRoot{Symlinks: []Symlink{{Path: "/bin", Target: "a"}, {Path: "bin", Target: "b"}}}, "duplicate symlink"},
	} {
		err := tc.root.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.root, err, tc.want)
		}
	}
	ok := TmpfsRoot{Size: 4096, Symlinks: []Symlink{{Path: "/bin", Target: "usr/bin"}, {Path: "lib64", Target: "/usr/lib64"}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid root refused: %v", err)
	}
}

// A root built from nothing: a tmpfs over a host directory, the host's /usr
// bound into it read-only, symlinks for the merged-/usr names. The host
// directory is only covered: nothing is created in it.
func TestTmpfsRoot(t *testing.T) {
	requireRootfsTests(t)
	for _, userns := range []bool{false, true} {
		t.Run(fmt.Sprintf("userns=%v", userns), func(t *testing.T) {
			host := t.TempDir()
			if err := os.WriteFile(filepath.Join(host, "hostfile"), []byte("host"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := Config{
				Rootfs: host,
				RootfsTmpfs: &TmpfsRoot{Size: 64 << 10, Symlinks: []Symlink{
					{Path: "/bin", Target: "usr/bin"},
					{Path: "/lib64", Target: "usr/lib64"},
				}},
				Mounts: []Mount{
					{Source: "/usr", Destination: "/usr", Type: "bind", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY},
					{Source: "tmpfs", Destination: "/tmp", Type: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NODEV},
					// The root is nodev: device nodes need a /dev of their own.
					{Source: "tmpfs", Destination: "/dev", Type: "tmpfs", Flags: unix.MS_NOSUID, Data: "mode=755"},
					{Source: "proc", Destination: "/proc", Type: "proc"},
				},
				Readonlyfs: true,
			}
			if userns {
				cfg.Namespaces = []Namespace{{Type: NEWUSER}, {Type: NEWNS}, {Type: NEWPID}}
			}
			res := runRootfsHelper(t, rootfsScenario{
				Config: cfg,
				UserNS: userns,
				Checks: []rootfsCheck{
					{Kind: "fstype", Path: "/", Want: "tmpfs"},
					{Kind: "symlink", Path: "/bin", Want: "usr/bin"},
					{Kind: "symlink", Path: "/lib64", Want: "usr/lib64"},
					{Kind: "erofs", Path: "/"},
					{Kind: "erofs", Path: "/usr"},
					{Kind: "flags", Path: "/", Want: "ro,nosuid,nodev"},
					{Kind: "chardev", Path: "/dev/null", Major: 1, Minor: 3},
					{Kind: "writable", Path: "/tmp"},
					{Kind: "exec", Path: "[ -e /hostfile ] || echo covered", Want: "covered"},
					{Kind: "exec", Path: "ls / | tr '\\n' ' '", Want: "bin dev lib64 proc tmp usr"},
				},
			})
			wantRootfsOK(t, res)
			ents, err := os.ReadDir(host)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 1 || ents[0].Name() != "hostfile" {
				t.Errorf("host directory changed: %v", ents)
			}
		})
	}
}

// A recursive read-only bind of a host directory with a mount beneath it,
// in a user namespace (where that mount is locked): the mount comes along,
// read-only too. A non-recursive bind of it fails there, and a recursive
// one without rro leaves it writable.
func TestRecursiveReadonlyBind(t *testing.T) {
	requireRootfsTests(t)
	parent := t.TempDir()
	locked := filepath.Join(parent, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	bind := func(dst string, flags int, rro bool) Mount {
		return Mount{Source: parent, Destination: dst, Type: "bind", Flags: unix.MS_BIND | flags, RecursiveReadonly: rro}
	}
	res := runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:      t.TempDir(),
			RootfsTmpfs: &TmpfsRoot{Symlinks: []Symlink{{Path: "/bin", Target: "usr/bin"}, {Path: "/lib64", Target: "usr/lib64"}}},
			Namespaces:  []Namespace{{Type: NEWUSER}, {Type: NEWNS}, {Type: NEWPID}},
			Mounts: []Mount{
				{Source: "/usr", Destination: "/usr", Type: "bind", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY, RecursiveReadonly: true},
				bind("/rro", unix.MS_REC|unix.MS_RDONLY, true),
				bind("/ro", unix.MS_REC|unix.MS_RDONLY, false),
			},
		},
		UserNS:      true,
		LockedTmpfs: locked,
		Checks: []rootfsCheck{
			{Kind: "content", Path: "/rro/locked/f", Want: "locked"},
			{Kind: "erofs", Path: "/rro"},
			{Kind: "erofs", Path: "/rro/locked"},
			{Kind: "erofs", Path: "/ro"},
			{Kind: "writable", Path: "/ro/locked"},
		},
	})
	wantRootfsOK(t, res)
	res = runRootfsHelper(t, rootfsScenario{
		Config: Config{
			Rootfs:     t.TempDir(),
			Namespaces: []Namespace{{Type: NEWUSER}, {Type: NEWNS}, {Type: NEWPID}},
			Mounts:     []Mount{bind("/flat", unix.MS_RDONLY, false)},
		},
		UserNS:      true,
		LockedTmpfs: locked,
	})
	if !strings.Contains(res.Err, "invalid argument") {
		t.Errorf("a non-recursive bind over a locked mount: %q, want EINVAL", res.Err)
	}
}
