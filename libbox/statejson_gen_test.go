package libbox

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson/fjgen"
)

// TestStateJSONGenerated fails when statejson_gen.go is not what the types
// give today: a field of Config (or of anything under it) added, removed,
// retyped or re-tagged without `go test ./libbox -run
// TestStateJSONGenerated -update`. Should the old file no longer compile,
// replace its functions that statejson.go calls with ones that return
// fastjson.ErrSlow before running -update.
func TestStateJSONGenerated(t *testing.T) {
	src, err := generateStateJSON()
	if err != nil {
		t.Fatal(err)
	}
	if *updateCodec {
		if err := os.WriteFile("statejson_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("statejson_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Fatal("statejson_gen.go is out of date: run go test ./libbox -run TestStateJSONGenerated -update")
	}
}

func generateStateJSON() ([]byte, error) {
	g := fjgen.New("libbox", reflect.TypeFor[persisted]().PkgPath(), "TestStateJSONGenerated (statejson_gen_test.go)")
	g.Encoder(reflect.TypeFor[*persisted]())
	g.Encoder(reflect.TypeFor[*OCIState]())
	g.Decoder(reflect.TypeFor[persisted](), true)
	g.Decoder(reflect.TypeFor[stateHead](), true)
	return g.Source()
}
