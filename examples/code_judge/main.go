// Command code_judge judges a submission against test cases with the
// code-judge preset, as an online judge would: strict limits that fail
// closed, the strict seccomp profile, one fresh box per test.
//
//	go run ./examples/code_judge [-allow-degraded]
//
// Without a cgroup for the caller (an ordinary user on a cgroup v1 host),
// the preset's memory, pids and CPU limits cannot be enforced and New says
// so; -allow-degraded runs anyway, with rlimits, and the report says
// degraded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// The submission: sums the numbers of its input, one case badly.
const submission = `read a b
if [ "$a" = 7 ]; then while :; do :; done; fi
echo $((a + b))
`

var cases = []struct{ in, want string }{
	{"1 2", "3"},
	{"40 2", "42"},
	{"7 0", "7"}, // the submission loops: time limit exceeded
}

func main() {
	libbox.Main()
	degrade := flag.Bool("allow-degraded", false, "allow memory, pids and cpus limits to degrade where this host cannot enforce them")
	flag.Parse()

	dir, err := os.MkdirTemp("", "judge-")
	check(err)
	defer os.RemoveAll(dir)
	check(os.Chmod(dir, 0o755))
	check(os.WriteFile(filepath.Join(dir, "solution.sh"), []byte(submission), 0o644))

	opts := libbox.CodeJudge(dir)
	opts.Limits.CPUTime = time.Second
	opts.Limits.WallTime = 3 * time.Second
	if *degrade {
		opts.AllowDegraded = []libbox.LimitName{libbox.LimitMemory, libbox.LimitPids, libbox.LimitCPUs}
	}
	sb, err := libbox.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "code_judge:", err)
		os.Exit(1)
	}
	for i, tc := range cases {
		// The test's input goes through a file in the (read-only)
		// submission directory; the program reads it as stdin.
		in := fmt.Sprintf("in%d.txt", i)
		check(os.WriteFile(filepath.Join(dir, in), []byte(tc.in+"\n"), 0o644))
		res, err := sb.Run(context.Background(), "sh", "-c", "exec sh /submission/solution.sh </submission/"+in)
		if err != nil {
			fmt.Printf("case %d: SE (%v)\n", i+1, err)
			continue
		}
		fmt.Printf("case %d: %s  (%s, cpu %s, wall %s)\n", i+1, verdict(res, tc.want), res.Report.Status,
			res.Report.CPUTime().Round(time.Millisecond), res.Report.WallTime.Round(time.Millisecond))
	}
}

// verdict is what a judge makes of the report.
func verdict(res *libbox.Result, want string) string {
	switch res.Report.Status {
	case libbox.StatusOK:
		if strings.TrimSpace(string(res.Stdout)) == want {
			return "AC"
		}
		return "WA"
	case libbox.StatusCPUTimeout, libbox.StatusWallTimeout:
		return "TLE"
	case libbox.StatusOOM:
		return "MLE"
	case libbox.StatusOutputLimit:
		return "OLE"
	}
	return "RE"
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "code_judge:", err)
		os.Exit(1)
	}
}
