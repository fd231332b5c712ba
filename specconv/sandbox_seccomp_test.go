package specconv

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// sandboxSeccompFile is libbox's copy of Docker's default seccomp profile
// for a process without capabilities, in libbox's own terms: libbox cannot
// import the OCI types, so the profile is generated here, where the one
// OCI-to-libbox conversion lives, and kept in step by this test.
const sandboxSeccompFile = "../libbox/seccomp_default.json"

// TestSandboxSeccompProfile fails when libbox's copy differs from what
// convertSeccomp makes of github.com/moby/profiles/seccomp today. Run with
// NANOBOX_UPDATE_SECCOMP=1 to rewrite the copy (after a dependency update).
func TestSandboxSeccompProfile(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the profile is generated on amd64 (the per-architecture rules of Docker's profile are evaluated for the generating machine); this is %s", runtime.GOARCH)
	}
	spec := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{}}}
	oci, err := DefaultSeccompSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := convertSeccomp(oci)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(sc, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if os.Getenv("NANOBOX_UPDATE_SECCOMP") == "1" {
		if err := os.WriteFile(sandboxSeccompFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(sandboxSeccompFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not Docker's default profile for a process without capabilities as convertSeccomp makes it today: regenerate it with NANOBOX_UPDATE_SECCOMP=1 go test ./specconv -run TestSandboxSeccompProfile", sandboxSeccompFile)
	}
}
