// Command sandboxbench times libbox Run of /bin/true from Go, for make
// bench: RUNS runs after WARMUP, and one line with the runs, the min and
// median wall time and the mean CPU (this process and its children, user
// and system) per run, in milliseconds, as scripts/bench.sh prints them.
// With -pool N the runs go through a warm pool of N sandboxes
// (libbox.NewPool), full before each timed run: the cost of a run that only
// starts a sandbox made ahead (the CPU includes making its replacement).
//
//	go run ./scripts/sandboxbench -runs 50 -warmup 5 -root DIR [-pool 2]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func cpu() time.Duration {
	var self, children unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &self)
	_ = unix.Getrusage(unix.RUSAGE_CHILDREN, &children)
	sum := func(r unix.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return sum(self) + sum(children)
}

// beforeRun runs, untimed, before each run.
var beforeRun = func() {}

func main() {
	libbox.Main()
	runs := flag.Int("runs", 50, "timed runs")
	warmup := flag.Int("warmup", 5, "untimed runs first")
	root := flag.String("root", "", "state root (default: libbox's)")
	name := flag.String("name", "libbox Run", "name in the result line")
	pool := flag.Int("pool", 0, "run through a warm pool of this many sandboxes")
	flag.Parse()
	opts := libbox.Options{StateRoot: *root}
	ctx := context.Background()
	var runOnce func() (*libbox.Result, error)
	if *pool > 0 {
		p, err := libbox.NewPool(opts, *pool)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandboxbench:", err)
			os.Exit(1)
		}
		defer p.Close()
		runOnce = func() (*libbox.Result, error) { return p.Run(ctx, "/bin/true") }
		// Untimed: the pool fills up again before each run.
		beforeRun = func() {
			if err := p.Warm(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "sandboxbench: warm the pool:", err)
				os.Exit(1)
			}
		}
	} else {
		sb, err := libbox.New(opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandboxbench:", err)
			os.Exit(1)
		}
		runOnce = func() (*libbox.Result, error) { return sb.Run(ctx, "/bin/true") }
	}
	run := func() time.Duration {
		beforeRun()
		t0 := time.Now()
		res, err := runOnce()
		d := time.Since(t0)
		if err != nil || res.Report.Status != libbox.StatusOK {
			fmt.Fprintln(os.Stderr, "sandboxbench: run failed:", err)
			os.Exit(1)
		}
		return d
	}
	for range *warmup {
		run()
	}
	c0 := cpu()
	times := make([]time.Duration, *runs)
	for i := range times {
		times[i] = run()
	}
	c1 := cpu()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	median := times[len(times)/2]
	if len(times)%2 == 0 {
		median = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	fmt.Printf("%s\t%d\t%.3f\t%.3f\t%.3f\n", *name, *runs, ms(times[0]), ms(median), ms((c1-c0)/time.Duration(*runs)))
}
