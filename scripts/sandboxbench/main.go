// Command sandboxbench times libbox Run of /bin/true from Go, for make
// bench: RUNS runs after WARMUP, and one line with the runs, the min and
// median wall time and the mean CPU (this process and its children, user
// and system) per run, in milliseconds, as scripts/bench.sh prints them.
//
//	go run ./scripts/sandboxbench -runs 50 -warmup 5 -root DIR
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

func main() {
	libbox.Main()
	runs := flag.Int("runs", 50, "timed runs")
	warmup := flag.Int("warmup", 5, "untimed runs first")
	root := flag.String("root", "", "state root (default: libbox's)")
	name := flag.String("name", "libbox Run", "name in the result line")
	flag.Parse()
	sb, err := libbox.New(libbox.Options{StateRoot: *root})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	run := func() time.Duration {
		t0 := time.Now()
		res, err := sb.Run(ctx, "/bin/true")
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
