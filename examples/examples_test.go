// Package examples holds runnable programs; this test builds each one and
// runs it, as root and, from root, as the unprivileged test user too.
package examples

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

var examples = []struct {
	name string
	args []string
	// want are lines the output must contain.
	want []string
	// rootless: what an ordinary user on a host without a delegated
	// cgroup must add (the example fails closed otherwise).
	rootlessArgs []string
}{
	{name: "demo", want: []string{"in a sandbox", "status ok"}},
	{name: "code_judge", want: []string{"case 1: AC", "case 2: AC", "case 3: TLE"}, rootlessArgs: []string{"-allow-degraded"}},
	{name: "data_analysis", want: []string{"output: mean 16 over 3 cities"}},
	{name: "agent_composed", want: []string{"lint: calc.py looks fine", "Read-only file system", "wall-timeout", "no hook was planted"}},
	{name: "spawn_demo", want: []string{"hello from pid 1 on sandbox", "note\n", "shell: status cancelled, signal SIGKILL", "kept\ndata added while the sandbox runs", "ok 0", "persistent sandbox sb-"}},
	{name: "custom_process", want: []string{"writing in the work directory: ok", "reading the secret: denied", "open files allowed: 64"}},
}

func TestExamples(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	bin := t.TempDir()
	// The test user must reach the binaries: t.TempDir's directories are
	// private.
	for d := bin; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, ex := range examples {
		out, err := exec.Command(goTool, "build", "-o", filepath.Join(bin, ex.name), "./"+ex.name).CombinedOutput()
		if err != nil {
			t.Fatalf("build %s: %v\n%s", ex.name, err, out)
		}
	}
	var testUser *syscall.Credential
	if os.Geteuid() == 0 {
		if u, err := user.Lookup("nanobox-test"); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			testUser = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
		}
	}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			runExample(t, filepath.Join(bin, ex.name), ex.args, ex.want, nil)
			if testUser == nil {
				return
			}
			t.Run("rootless", func(t *testing.T) {
				runExample(t, filepath.Join(bin, ex.name), append(ex.args, ex.rootlessArgs...), ex.want, testUser)
			})
		})
	}
}

func runExample(t *testing.T, bin string, args, want []string, cred *syscall.Credential) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = "/"
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp"}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("%s: output has no %q:\n%s", filepath.Base(bin), w, out)
		}
	}
}
