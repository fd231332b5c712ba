package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
)

// TestConvertStatsKeys: runc 1.3's `events --stats` keys, including the
// ones nanobox-runc has no data for, and pressure printed in full even for
// a cgroup under none (runc's cgroups library keeps zero structs).
func TestConvertStatsKeys(t *testing.T) {
	cg := &cgroups.Stats{}
	cg.CpuStats.PSI = &cgroups.PSIStats{Some: cgroups.PSIData{Avg10: 1.5, Total: 7}}
	cg.MemoryStats.PSI = &cgroups.PSIStats{}
	cg.CPUSetStats.CPUs = []uint16{0, 1}
	b, err := json.Marshal(convertStats(cg))
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{
		`"cpuset":{"cpus":[0,1],"cpu_exclusive":0,`,
		`"intel_rdt":{}`,
		`"network_interfaces":null`,
		`"psi":{"some":{"avg10":1.5,"avg60":0,"avg300":0,"total":7},"full":{"avg10":0,"avg60":0,"avg300":0,"total":0}}`,
		`"memory":{"usage":`,
		`"psi":{"some":{"avg10":0,"avg60":0,"avg300":0,"total":0},"full":{"avg10":0,"avg60":0,"avg300":0,"total":0}}}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats JSON lacks %s:\n%s", want, out)
		}
	}
	// No pressure files (cgroup v1): no psi key at all.
	b, _ = json.Marshal(convertStats(&cgroups.Stats{}))
	if strings.Contains(string(b), "psi") {
		t.Errorf("psi printed without pressure data: %s", b)
	}
}
