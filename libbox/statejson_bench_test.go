package libbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// coldEnv names the one operation TestStateJSONCold times, in a process
// of its own (BenchmarkStateJSONCold runs it): encoding/json's first use
// of the types is what a command pays, and no benchmark loop sees it.
const coldEnv = "NANOBOX_STATEJSON_COLD"

var coldOps = map[string]func(st *persisted, doc []byte){
	"encode-generated": func(st *persisted, _ []byte) { _, _ = marshalPersisted(st) },
	"encode-json":      func(st *persisted, _ []byte) { _, _ = json.Marshal(st) },
	"decode-generated": func(_ *persisted, doc []byte) { _ = decodeState(doc, new(persisted)) },
	"decode-json":      func(_ *persisted, doc []byte) { _ = slowDecodeState(doc, new(persisted)) },
	"head-generated":   func(_ *persisted, doc []byte) { _ = decodeState(doc, new(stateHead)) },
	"head-json":        func(_ *persisted, doc []byte) { _ = slowDecodeState(doc, new(stateHead)) },
}

// TestStateJSONCold prints the time and the bytes allocated of the
// operation named by $NANOBOX_STATEJSON_COLD on a sandbox's state, the
// first in its process; without it, it is skipped.
func TestStateJSONCold(t *testing.T) {
	op := coldOps[os.Getenv(coldEnv)]
	if op == nil {
		t.Skip("run by BenchmarkStateJSONCold")
	}
	cfg, _, err := ContainerConfig(AgentExecutor(t.TempDir()), "", []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	st := &persisted{
		ID: "c1", InitPid: 42, InitStartTime: 12345, Created: time.Now().UTC(), Owner: "root",
		Config: cfg, CgroupPaths: map[string]string{"": "/sys/fs/cgroup/c1"},
	}
	doc, err := fjePtrPersisted(nil, st) // not encoding/json: nothing of it warmed
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	op(st, doc)
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	fmt.Printf("cold %d %d\n", d.Nanoseconds(), after.TotalAlloc-before.TotalAlloc)
}

// BenchmarkStateJSONCold: each operation of coldOps, the first in a
// new process (the median of b.N processes).
func BenchmarkStateJSONCold(b *testing.B) {
	names := make([]string, 0, len(coldOps))
	for name := range coldOps {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			var ns, bytes []float64
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^TestStateJSONCold$", "-test.count=1")
				cmd.Env = append(os.Environ(), coldEnv+"="+name)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				for line := range strings.SplitSeq(string(out), "\n") {
					if f := strings.Fields(line); len(f) == 3 && f[0] == "cold" {
						n, _ := strconv.ParseFloat(f[1], 64)
						a, _ := strconv.ParseFloat(f[2], 64)
						ns, bytes = append(ns, n), append(bytes, a)
					}
				}
			}
			if len(ns) == 0 {
				b.Fatal("no measurement")
			}
			slices.Sort(ns)
			slices.Sort(bytes)
			b.ReportMetric(ns[len(ns)/2], "cold-ns")
			b.ReportMetric(bytes[len(bytes)/2], "cold-B")
			b.ReportMetric(0, "ns/op")
		})
	}
}
