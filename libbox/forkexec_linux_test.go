package libbox

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestForkExec: the child gets files[i] as fd i, Wait reaps it, and Kill
// reaches a live child through its pidfd and refuses once it is reaped.
func TestForkExec(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	p, err := forkExec("/bin/sh", []string{"sh", "-c", "echo hi >&3"}, nil, []*os.File{devnull, devnull, devnull, w}, &syscall.SysProcAttr{})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	n, _ := r.Read(b)
	if got := strings.TrimSpace(string(b[:n])); got != "hi" {
		t.Errorf("the child wrote %q on fd 3, want \"hi\"", got)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err == nil {
		t.Error("Kill of a reaped child succeeded")
	}
	if err := unix.Kill(p.Pid, 0); err == nil {
		t.Errorf("pid %d still exists after Wait", p.Pid)
	}

	p, err = forkExec("/bin/sleep", []string{"sleep", "100"}, nil, []*os.File{devnull, devnull, devnull}, &syscall.SysProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}

	if _, err := forkExec("/nonexistent/x", []string{"x"}, nil, nil, &syscall.SysProcAttr{}); err == nil || !strings.Contains(err.Error(), "fork/exec /nonexistent/x") {
		t.Errorf("a missing binary: %v", err)
	}
}
