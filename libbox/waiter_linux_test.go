package libbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
)

// A pooled sandbox waits for its program in the waiter (waiter_linux.go),
// and the program it starts sees what the program of a pooled sandbox
// whose Go init waits sees: the same descriptors, credentials,
// capabilities, filters, signal state, rlimits, argv, environment and cwd;
// errors and reports are the same as well, including those the waiter
// leaves to the resume.
func TestSandboxPoolWaiter(t *testing.T) {
	// Every built-in profile lets the waiter run.
	for _, tc := range []struct {
		name string
		sc   SeccompProfile
	}{
		{"default", SeccompDefault()},
		{"strict", SeccompStrict()},
	} {
		t.Run(tc.name, func(t *testing.T) { testPoolWaiter(t, tc.sc) })
	}
}

func testPoolWaiter(t *testing.T, sc SeccompProfile) {
	o := Options{Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "A=b c", "EMPTY="}, Seccomp: sc}
	p := newTestPool(t, o, 1)
	// The ready sandbox's pid 1 is the waiter: no Go runtime waits.
	var waiters int
	for _, k := range childrenOf(os.Getpid()) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k))
		if bytes.HasPrefix(cmd, []byte(waiterArgv0+"\x00")) {
			waiters++
		}
	}
	if waiters != 1 {
		t.Errorf("%d waiters among this process's children, want the pool's 1", waiters)
	}
	// The reference: a pool whose sandboxes wait in their Go init.
	noPoolWaiter = true
	ref := newTestPool(t, o, 1)
	noPoolWaiter = false
	ctx := context.Background()
	// What the program sees of itself; pipe and socket inode numbers
	// differ from one sandbox to the next.
	script := `cd /proc/self/fd && for f in *; do echo "fd $f $(readlink $f)"; done
grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs|Seccomp|Seccomp_filters|Sig(Blk|Ign)|Speculation_Store_Bypass)' /proc/self/status
cat /proc/self/limits; cat /proc/self/personality 2>/dev/null; umask; cd /; echo "cwd $OLDPWD"
echo "argv $0 $*"; env | sort`
	inode := regexp.MustCompile(`(pipe|socket):\[[0-9]+\]`)
	id := regexp.MustCompile(`sb-[0-9a-f]+`)
	same := func(what string, args ...string) {
		t.Helper()
		pres, perr := p.Run(ctx, args[0], args[1:]...)
		sres, serr := ref.Run(ctx, args[0], args[1:]...)
		if id.ReplaceAllString(fmt.Sprint(perr), "sb-ID") != id.ReplaceAllString(fmt.Sprint(serr), "sb-ID") {
			t.Errorf("%s: pooled run's error %v, the reference's %v", what, perr, serr)
		}
		if pres == nil || sres == nil {
			if pres != sres {
				t.Errorf("%s: pooled result %+v, the reference's %+v", what, pres, sres)
			}
			return
		}
		pout := inode.ReplaceAll(pres.Stdout, []byte("$1"))
		sout := inode.ReplaceAll(sres.Stdout, []byte("$1"))
		if !bytes.Equal(pout, sout) || !bytes.Equal(pres.Stderr, sres.Stderr) {
			t.Errorf("%s: the pooled program saw\n%s%s\nthe reference's\n%s%s", what, pout, pres.Stderr, sout, sres.Stderr)
		}
		pr, sr := pres.Report, sres.Report
		if pres.ExitCode != sres.ExitCode || pr.Status != sr.Status || id.ReplaceAllString(pr.Error, "sb-ID") != id.ReplaceAllString(sr.Error, "sb-ID") || pr.ExitCode != sr.ExitCode || pr.Signal != sr.Signal {
			t.Errorf("%s: pooled exit %d report %s %q, the reference's exit %d report %s %q", what, pres.ExitCode, pr.Status, pr.Error, sres.ExitCode, sr.Status, sr.Error)
		}
	}
	same("what the program sees", "/bin/sh", "-c", script, "name", "one", "two words")
	// Found in PATH by the waiter, by name.
	same("a program in PATH", "sh", "-c", "echo $0", "x")
	// Left to the resume: a path to clean, a missing or denied program,
	// an argument execve cannot pass.
	same("what the program sees after the resume", "/bin/../bin/sh", "-c", script, "name", "one")
	same("a relative path", "bin/true")
	same("a missing program by path", "/no/such/program")
	same("a missing program by name", "no-such-program")
	same("a directory", "/tmp")
	same("a file not executable", "/etc/passwd")
	same("a NUL in an argument", "/bin/true", "a\x00b")
	same("an exit status", "/bin/sh", "-c", "exit 7")
}
