package specconv

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// `spec --preset` writes the same sandbox: its config.json converts back
// into the Config the sandbox itself would run.
func TestSandboxSpecRoundTrip(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, ".git", "config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	strictLL := libbox.CodeJudge(in)
	strictLL.Landlock = &libbox.Landlock{ReadOnly: []string{"/usr", "/submission"}, ReadWrite: []string{"/tmp"}}
	for name, opts := range map[string]libbox.Options{
		"agent-executor": libbox.AgentExecutor(out),
		"code-judge":     libbox.CodeJudge(in),
		"data-analysis":  libbox.DataAnalysis(in, out),
		"judge+landlock": strictLL,
		"host network":   {Network: libbox.HostNetwork(), Seccomp: libbox.NoSeccomp()},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, _, err := libbox.ContainerConfig(opts, "rootfs", []string{"sh", "-c", "true"})
			if err != nil {
				t.Fatal(err)
			}
			spec, err := ToSpec(cfg)
			if err != nil {
				t.Fatal(err)
			}
			bundle := t.TempDir()
			if err := os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755); err != nil {
				t.Fatal(err)
			}
			back, err := FromSpec(spec, Options{Bundle: bundle, Warnf: func(string, ...any) {}})
			if err != nil {
				t.Fatalf("FromSpec of the preset's spec: %v", err)
			}
			if back.Rootfs != filepath.Join(bundle, "rootfs") {
				t.Errorf("rootfs %s", back.Rootfs)
			}
			back.Rootfs, back.Bundle, back.OCIVersion = cfg.Rootfs, cfg.Bundle, cfg.OCIVersion
			if !reflect.DeepEqual(back.Resources, cfg.Resources) && (libbox.HasLimits(back.Resources) || libbox.HasLimits(cfg.Resources)) {
				t.Errorf("resources:\n got %+v\nwant %+v", back.Resources, cfg.Resources)
			}
			back.Resources, cfg.Resources = nil, nil
			// The sandbox's few cgroup v1 hierarchies are its own choice:
			// a bundle's container goes in every one, as under runc.
			if back.V1Hierarchies != nil {
				t.Errorf("V1Hierarchies from a spec: %v", back.V1Hierarchies)
			}
			cfg.V1Hierarchies = nil
			// Neither face asks for huge pages in init
			// (libbox.Config.InitHugePages).
			if back.InitHugePages || cfg.InitHugePages {
				t.Errorf("InitHugePages: %v from the spec, %v in the sandbox; want false, false", back.InitHugePages, cfg.InitHugePages)
			}
			// The Landlock policy travels as an annotation, which FromSpec
			// keeps besides converting it.
			delete(back.Annotations, LandlockAnnotation)
			if len(back.Annotations) == 0 {
				back.Annotations = nil
			}
			if !reflect.DeepEqual(back, cfg) {
				t.Errorf("config differs after spec and back:\n got %+v\nwant %+v", back, cfg)
				if !reflect.DeepEqual(back.Mounts, cfg.Mounts) {
					for i := range cfg.Mounts {
						if i < len(back.Mounts) && !reflect.DeepEqual(back.Mounts[i], cfg.Mounts[i]) {
							t.Errorf("mount %d: got %+v want %+v", i, back.Mounts[i], cfg.Mounts[i])
						}
					}
				}
				if !reflect.DeepEqual(back.Seccomp, cfg.Seccomp) {
					t.Errorf("seccomp differs")
				}
			}
		})
	}
}

func TestSandboxSpecNotes(t *testing.T) {
	_, notes, err := SandboxSpec(libbox.CodeJudge(t.TempDir()), "", []string{"sh"})
	if err != nil {
		t.Fatal(err)
	}
	j := strings.Join(notes, "; ")
	for _, want := range []string{"wall time", "output limit", "CPU time"} {
		if !strings.Contains(j, want) {
			t.Errorf("notes %q do not mention %s", j, want)
		}
	}
}

func TestLoadSeccompProfile(t *testing.T) {
	oci := `{"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1, "architectures": ["SCMP_ARCH_X86_64"],
		"syscalls": [{"names": ["read", "write", "exit_group"], "action": "SCMP_ACT_ALLOW"}]}`
	s, err := LoadSeccompProfile([]byte(oci))
	if err != nil {
		t.Fatal(err)
	}
	if s.DefaultAction != libbox.SeccompErrno || len(s.Syscalls) != 1 || s.Syscalls[0].Action != libbox.SeccompAllow || s.Architectures[0] != "amd64" {
		t.Errorf("oci profile: %+v", s)
	}
	// A Docker profile: rules for capabilities the sandbox lacks are left out.
	docker := `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
		{"names": ["read"], "action": "SCMP_ACT_ALLOW"},
		{"names": ["mount"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}}]}`
	if s, err = LoadSeccompProfile([]byte(docker)); err != nil || len(s.Syscalls) != 1 {
		t.Errorf("docker profile: %+v %v", s, err)
	}
	own := `{"defaultAction": "allow", "syscalls": [{"names": ["ptrace"], "action": "errno"}]}`
	if s, err = LoadSeccompProfile([]byte(own)); err != nil || s.DefaultAction != libbox.SeccompAllow {
		t.Errorf("libbox profile: %+v %v", s, err)
	}
	for _, bad := range []string{`{"defaultAction": "SCMP_ACT_BOGUS"}`, `{"defaultAction": "allow", "bogus": 1}`, `not json`} {
		if _, err := LoadSeccompProfile([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// A preset's config.json says its filter has no flags ("flags": []), so
// that loading it does not add runc's default SPEC_ALLOW to the sandbox.
func TestSandboxSpecFileSeccompFlags(t *testing.T) {
	old := specAllowSupported
	specAllowSupported = func() bool { return true }
	t.Cleanup(func() { specAllowSupported = old })
	spec, _, err := SandboxSpec(libbox.CodeJudge(t.TempDir()), "rootfs", []string{"sh"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Linux.Seccomp == nil {
		t.Fatal("the code-judge preset has no seccomp filter")
	}
	bundle := t.TempDir()
	if err := os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(bundle, spec); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(bundle, ConfigName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\"flags\": []") || !strings.HasPrefix(string(data), "{\n\t\"ociVersion\": ") {
		t.Errorf("config.json has no empty seccomp flags list, or lost its layout:\n%.300s", data)
	}
	loaded, err := LoadSpec(bundle, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromSpec(loaded, Options{Bundle: bundle, Warnf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	if back.Seccomp == nil || back.Seccomp.Flags != nil {
		t.Errorf("seccomp flags after config.json: %+v", back.Seccomp)
	}
	if !reflect.DeepEqual(loaded.Linux.Seccomp, spec.Linux.Seccomp) {
		t.Errorf("linux.seccomp differs after config.json:\n got %+v\nwant %+v", loaded.Linux.Seccomp, spec.Linux.Seccomp)
	}
}
