package edgetest

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson"
	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson/fjgen"
)

var update = flag.Bool("update", false, "rewrite edge_gen.go (TestEdgeGenerated)")

// TestEdgeGenerated fails when edge_gen.go is not what fjgen writes for
// Edge today: go test ./internal/fastjson/fjgen/edgetest -run
// TestEdgeGenerated -update after a change to the generator.
func TestEdgeGenerated(t *testing.T) {
	g := fjgen.New("edgetest", reflect.TypeFor[Edge]().PkgPath(), "TestEdgeGenerated (edge_test.go)")
	g.Encoder(reflect.TypeFor[*Edge]())
	g.Decoder(reflect.TypeFor[Edge](), true)
	src, err := g.Source()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("edge_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("edge_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Fatal("edge_gen.go is out of date: run go test ./internal/fastjson/fjgen/edgetest -run TestEdgeGenerated -update")
	}
}

func edges() []*Edge {
	yes := true
	ts := time.Date(2024, 2, 29, 12, 30, 0, 5, time.FixedZone("x", 3600))
	full := &Edge{
		S: "<a href=\"x\">&amp;</a>\u2028\u2029\xff\x00\x7f", SE: "é", SZ: "z",
		B: []byte{0, 1, 2, 0xff}, BE: []byte{},
		F: 1e21, FE: -0.0, FZ: 3.5,
		I: map[string]any{"k": []any{1.5, "<", nil}}, IE: 0,
		MI: map[int]string{-1: "a", 10: "b", 2: "c"}, MU: map[uint8]bool{255: true, 0: false},
		MK: map[Key]Inner{"b": {A: "x"}, "a<": {N: 1}, "": {}}, MT: map[Text]int{{1, 2}: 1, {0, 0}: 2},
		T: ts, TP: &ts, TZ: ts, Z: Inner{A: "z"}, P: &Inner{}, PS: []*Inner{nil, {A: "p"}},
		M: Marsh{V: "m<"}, MP: &Marsh{}, N: -32768, NE: 1, Arr: [2]int{1, -1},
		Raw: json.RawMessage(` { "r" : [ 1 , "<" ] } `), SS: []string{}, SB: []Named{1},
		MS:       map[string]*bool{"t": &yes, "n": nil},
		Embedded: Embedded{E1: "e1", E2: math.MaxUint64},
		Skip:     func() {}, unexp: 1, NoTag: -1, U8: 255, B2: true,
	}
	negZero := math.Copysign(0, -1)
	return []*Edge{
		nil, {}, full,
		{FE: negZero, FZ: float32(negZero), F: 5e-324, SS: nil, MK: map[Key]Inner{}, PS: []*Inner{}},
		{F: 1e20, FE: 1e-7, FZ: 1e21, I: float32(0.1), IE: []byte("x")},
	}
}

// TestEdgeMatchesMarshal: the generated encoder writes json.Marshal's
// bytes, or fails where json.Marshal fails.
func TestEdgeMatchesMarshal(t *testing.T) {
	for i, e := range edges() {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fjePtrEdge(nil, e)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("edge %d: the generated encoder wrote\n%s (%v)\njson.Marshal\n%s", i, got, err, want)
		}
	}
	for _, e := range []*Edge{{F: math.NaN()}, {FE: math.Inf(1)}, {I: func() {}}, {T: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}} {
		if _, err := json.Marshal(e); err == nil {
			t.Fatalf("json.Marshal took %+v", e)
		}
		if _, err := fjePtrEdge(nil, e); err == nil {
			t.Fatalf("the generated encoder took %+v", e)
		}
	}
}

// TestEdgeDecode: what the generated decoder decodes, encoding/json
// decodes to the same value; what it leaves (the fields it does not
// handle), encoding/json decides.
func TestEdgeDecode(t *testing.T) {
	type doc struct {
		s    string
		fast bool
	}
	docs := []doc{
		{`{"s": "a", "e1": "x", "e2": 18446744073709551615, "NoTag": -128, "U8": 255, "n": -2, "ss": ["<"], "z": {"a": "q"}, "ms": {"a": true, "b": null}, "unknown": {"x": [1.5e3]}}`, true},
		{`{"mk": {"a": {"a": "x", "n": 1}}, "ps": [null, {"a": "p"}], "p": null, "t": "2024-02-29T12:30:00.000000005+01:00"}`, true},
		{`{"f": 1.5}`, false}, {`{"b": "AAEC"}`, false}, {`{"i": 1}`, false}, {`{"mi": {"1": "a"}}`, false},
		{`{"mt": {"t<y": 1}}`, false}, {`{"m": {"V": "x"}}`, true}, {`{"arr": [1, 2]}`, false}, {`{"raw": 1}`, false},
		{`{"U8": 256}`, false}, {`{"NoTag": 128}`, false}, {`{"notag": 1}`, false}, {`{"E1": "x"}`, false},
		{`{"s": "a", "s": "b"}`, false},
	}
	for _, e := range edges()[1:] {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc{string(b), false}) // each has a float
	}
	for _, d := range docs {
		var fast, slow Edge
		s := fastjson.NewScanner([]byte(d.s))
		err := fjsEdge(s, &fast)
		if err == nil {
			err = s.End()
		}
		if (err == nil) != d.fast {
			t.Errorf("%s: decoded on the fast path: %v, want %v", d.s, err == nil, d.fast)
		}
		if err != nil {
			continue
		}
		if serr := json.Unmarshal([]byte(d.s), &slow); serr != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: the fast path decoded %+v, encoding/json %+v (%v)", d.s, fast, slow, serr)
		}
	}
}
