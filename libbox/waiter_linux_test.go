package libbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
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
	// More than the fifo holds: the waiter reads while start writes.
	long := strings.Repeat("x", 100<<10)
	same("long arguments", "/bin/sh", "-c", `echo ${#1} ${#2} ${#3} "$4"`, "x", long, long+"y", long+"yy", "")
}

// The start message survives its framing, empty and long arguments and
// NULs included, and a malformed one is refused.
func TestStartMessageFraming(t *testing.T) {
	for _, args := range [][]string{{"/bin/true"}, {"sh", "", "a\x00b", strings.Repeat("é", 70000)}} {
		b, err := encodeStartMessage(startMessage{Args: args})
		if err != nil {
			t.Fatal(err)
		}
		m, err := waitForStart(bytes.NewReader(b), true)
		if err != nil || !slices.Equal(m.Args, args) {
			t.Errorf("%q: decoded %v, %v", args, m, err)
		}
	}
	if _, err := encodeStartMessage(startMessage{Args: []string{strings.Repeat("x", maxStartMessage)}}); err == nil {
		t.Error("an over-long message was encoded")
	}
	good, _ := encodeStartMessage(startMessage{Args: []string{"ab", "c"}})
	for _, bad := range [][]byte{
		good[:len(good)-1], // cut short
		{startWithProgram, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff}, // too many arguments
		{startWithProgram, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 9}, // an argument longer than the rest
	} {
		if m, err := waitForStart(bytes.NewReader(bad), true); err == nil {
			t.Errorf("% x: decoded %v", bad, m)
		}
	}
	// The length says one byte more than the arguments take.
	extra := slices.Clone(good)
	extra[4]++
	extra = append(extra, 'x')
	if m, err := waitForStart(bytes.NewReader(extra), true); err == nil || !strings.Contains(err.Error(), "after the arguments") {
		t.Errorf("a byte after the arguments: %v %v", m, err)
	}
}
