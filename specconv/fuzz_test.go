package specconv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// FuzzFromSpec feeds config.json bytes through ParseSpec and FromSpec, the
// way create reads a bundle: every input must end in a Config or an error,
// never a panic, and a Config must survive the JSON round trip that takes
// it to init. The seed corpus is in testdata/fuzz/FuzzFromSpec (runc's
// default spec, rootless, Docker's seccomp profile, every process and
// linux field); `make fuzz` runs a short pass.
func FuzzFromSpec(f *testing.F) {
	example, err := json.Marshal(Example())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example, false)
	f.Add(example, true)
	f.Add([]byte(`{"process": {"args": ["sh"], "cwd": "/"}, "root": {"path": "rootfs"}, "linux": {"namespaces": [{"type": "mount"}]}}`), false)

	// Relative root.path and bind sources resolve against a bundle with
	// a rootfs, as in a real one.
	bundle := f.TempDir()
	if err := os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755); err != nil {
		f.Fatal(err)
	}
	quiet := func(string, ...any) {}
	f.Fuzz(func(t *testing.T, data []byte, rootless bool) {
		spec, err := ParseSpec(data, "config.json", nil)
		if err != nil {
			if spec != nil {
				t.Fatalf("ParseSpec returned a spec and the error %v", err)
			}
			return
		}
		c, err := FromSpec(spec, Options{Bundle: bundle, Rootless: rootless, Warnf: quiet})
		if err != nil {
			if c != nil {
				t.Fatalf("FromSpec returned a config and the error %v", err)
			}
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("encode config: %v", err)
		}
		var back libbox.Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decode config: %v\n%s", err, b)
		}
		if len(back.Process.Args) == 0 || back.Rootfs == "" {
			t.Fatalf("a config without args or rootfs was accepted: %s", b)
		}
	})
}
