package libbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A caller's own exec.Cmd, confined by libbox's child-side primitives.
func TestConfinementCommand(t *testing.T) {
	if LandlockABI() < 1 {
		t.Skip("needs Landlock")
	}
	allowed, denied := t.TempDir(), t.TempDir()
	c := Confinement{
		Limits:   Limits{OpenFiles: 16, FileSize: MB},
		Landlock: &Landlock{ReadOnly: []string{"/usr", "/etc", "/dev"}, ReadWrite: []string{allowed, "/dev/null"}},
		Seccomp:  SeccompStrict(),
	}
	script := `ulimit -n; echo ok >"$1/f" && echo wrote-allowed; (echo x >"$2/f") 2>/dev/null || echo denied-other;` +
		` head -c 2000000 /dev/zero >"$1/big"; echo size $?; perl -e 'print syscall(101, 0, 0, 0, 0), "\n"'; echo $CALLER_VAR`
	cmd, err := c.Command(context.Background(), "sh", "-c", script, "sh", allowed, denied)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "CALLER_VAR=kept")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s%s", err, out, stderr.String())
	}
	want := "16\nwrote-allowed\ndenied-other\nsize 153\n-1\nkept\n"
	if string(out) != want {
		t.Errorf("confined command printed:\n%s\nwant:\n%s", out, want)
	}
	// The caller itself is not confined.
	if err := os.WriteFile(filepath.Join(denied, "mine"), nil, 0o644); err != nil {
		t.Errorf("the caller was confined too: %v", err)
	}
	// Not found, and limits that are the caller's to enforce.
	cmd, _ = c.Command(context.Background(), "no-such-program")
	if out, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 127 || !strings.Contains(string(out), "no-such-program") {
		t.Errorf("missing program: %v %s", err, out)
	}
	if _, err := (Confinement{Limits: Limits{WallTime: time.Second}}).Command(context.Background(), "true"); err == nil || !strings.Contains(err.Error(), "CommandContext") {
		t.Errorf("wall time: %v", err)
	}
}
