package specconv

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson/fjgen"
)

var updateFastJSON = flag.Bool("update", false, "rewrite fastjson_gen.go from the types (TestFastJSONGenerated)")

// TestFastJSONGenerated fails when fastjson_gen.go is not what the specs-go
// types give today (after an update of the runtime-spec module). Should
// the old file no longer compile (a field gone), replace it with
// `func fjSpecsSpec(s *fastjson.Scanner, v *specs.Spec) error { return fastjson.ErrSlow }`
// before running -update.
func TestFastJSONGenerated(t *testing.T) {
	g := fjgen.New("specconv", "github.com/nanobox-sandbox/nanobox-runc/specconv", "TestFastJSONGenerated (fastjson_gen_test.go)")
	g.Decoder(reflect.TypeFor[specs.Spec](), false)
	src, err := g.Source()
	if err != nil {
		t.Fatal(err)
	}
	if *updateFastJSON {
		if err := os.WriteFile("fastjson_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("fastjson_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Fatal("fastjson_gen.go is out of date: run go test ./specconv -run TestFastJSONGenerated -update")
	}
}
