package libbox

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// What a container sharing the runtime's mount namespace cannot have is
// refused, each setting by name; with a mount namespace of its own, all of
// it is taken.
func TestCheckSharedMountNS(t *testing.T) {
	rootfs := t.TempDir()
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"readonly root", func(c *Config) { c.Readonlyfs = true }, "root.readonly needs a mount namespace"},
		{"masked paths", func(c *Config) { c.MaskedPaths = []string{"/proc/kcore"} }, "linux.maskedPaths needs a mount namespace"},
		{"read-only paths", func(c *Config) { c.ReadonlyPaths = []string{"/proc/sys"} }, "linux.readonlyPaths needs a mount namespace"},
		{"root propagation", func(c *Config) { c.RootPropagation = unix.MS_PRIVATE }, "linux.rootfsPropagation needs a mount namespace"},
		{"mounts over the host's /", func(c *Config) {
			c.Rootfs = "/"
			c.Mounts = []Mount{{Source: "proc", Destination: "/proc", Type: "proc"}}
		}, "mounts with the host's / as rootfs need a mount namespace"},
		{"nothing of that", func(*Config) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Rootfs: rootfs}
			tc.set(cfg)
			err := checkSharedMountNS(cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			cfg.Namespaces = []Namespace{{Type: NEWNS}}
			if err := checkSharedMountNS(cfg); err != nil {
				t.Fatalf("refused with a mount namespace: %v", err)
			}
		})
	}
}
