package specconv

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// checkFast holds fastSpec to encoding/json on data: when the fast path
// decodes it, encoding/json must decode it to the same value, and find no
// unknown key. It reports whether the fast path decoded it.
func checkFast(t *testing.T, data []byte) bool {
	t.Helper()
	fast, err := fastSpec(data)
	if err != nil {
		if !errors.Is(err, errSlow) || fast != nil {
			t.Fatalf("fastSpec gave %v, %v: only errSlow and no spec may come of a document it leaves", fast, err)
		}
		return false
	}
	var want specs.Spec
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fastSpec decoded what encoding/json refuses (%v):\n%s", err, data)
	}
	if !reflect.DeepEqual(*fast, want) {
		t.Fatalf("fastSpec decoded\n%s\nto %+v, encoding/json to %+v", data, *fast, want)
	}
	if keys := UnknownKeys(data); len(keys) > 0 {
		t.Fatalf("fastSpec decoded a document with unknown keys %q:\n%s", keys, data)
	}
	return true
}

// filled returns a value of t with every field set (each string, number
// and bool different, at the edges of their range), so that a JSON round
// trip reaches every decoding function of fastjson_gen.go.
func filled(t reflect.Type, n *int) reflect.Value {
	*n++
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Pointer:
		v.Set(filled(t.Elem(), n).Addr())
	case reflect.Slice:
		s := reflect.MakeSlice(t, 0, 2)
		s = reflect.Append(s, filled(t.Elem(), n), filled(t.Elem(), n))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(t)
		for _, k := range []string{"k\u00e9y", "k\"2\n"} {
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), filled(t.Elem(), n))
		}
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && f.Type.Kind() != reflect.Interface {
				v.Field(i).Set(filled(f.Type, n))
			}
		}
	case reflect.String:
		v.SetString(strings.Repeat("s", *n%3) + "<&>\"\\/\t\u2028\U0001F600" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(*n%2 == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if *n%2 == 0 {
			v.SetInt(-1 << (t.Bits() - 1))
		} else {
			v.SetInt(1<<(t.Bits()-1) - 1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if *n%2 == 0 {
			v.SetUint(math.MaxUint64 >> (64 - t.Bits()))
		} else {
			v.SetUint(uint64(*n))
		}
	}
	return v
}

// TestFastJSONMatchesJSON: on real configs and on one with every field
// set, the fast path decodes what encoding/json decodes, to the same value.
func TestFastJSONMatchesJSON(t *testing.T) {
	var docs [][]byte
	add := func(spec *specs.Spec) {
		b, err := json.MarshalIndent(spec, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	add(Example())
	rootless := Example()
	ToRootless(rootless)
	add(rootless)
	for _, name := range libbox.PresetNames {
		dirs := []string{t.TempDir()}
		if name == "data-analysis" {
			dirs = append(dirs, t.TempDir())
		}
		opts, err := libbox.Preset(name, dirs...)
		if err != nil {
			t.Fatal(err)
		}
		spec, _, err := SandboxSpec(opts, "rootfs", []string{"true"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		add(spec)
	}
	n := 0
	full := filled(reflect.TypeOf(specs.Spec{}), &n).Interface().(specs.Spec)
	add(&full)
	for i, d := range docs {
		if !checkFast(t, d) {
			t.Errorf("document %d was left to encoding/json: the fast path should decode every config it writes\n%s", i, d)
		}
	}
	// The one with every field set once more, compact.
	b, err := json.Marshal(&full)
	if err != nil {
		t.Fatal(err)
	}
	if !checkFast(t, b) {
		t.Error("the compact document with every field set was left to encoding/json")
	}
}

// TestFastJSONLeavesDoubtToJSON: what encoding/json decodes with rules of
// its own (case-insensitive keys, merged duplicates, U+FFFD for bad text),
// refuses, or decodes into a type the fast path does not handle, the fast
// path leaves to it; what it decodes, it decodes as encoding/json does.
func TestFastJSONLeavesDoubtToJSON(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		fast bool
	}{
		{`{"ociVersion": "1.0.2", "process": {"args": ["a", "b"], "cwd": "/"}, "root": {"path": "rootfs"}}`, true},
		{` {"hostname": null, "process": null, "mounts": null, "annotations": null} `, true},
		{`{"mounts": [], "annotations": {}, "process": {"args": [], "env": null}}`, true},
		{`null`, true},
		{`{}`, true},
		{`{"hostname": "\n\t\"\\\/\b\f\r\u00e9\ud83d\ude00"}`, true},
		{`{"process": {"user": {"uid": 4294967295, "gid": 0}, "oomScoreAdj": -0}}`, true},
		{`{"linux": {"resources": {"cpu": {"quota": -9223372036854775808, "period": 18446744073709551615}}}}`, true},
		{`{"process": {"terminal": true, "noNewPrivileges": false}}`, true},
		{`{"process": {"user": {"uid": null}}}`, true},

		{`{"ociVersion": "1.0.2", "typo": 1}`, false},
		{`{"OCIVersion": "1.0.2"}`, false},
		{`{"hostname": "a", "hostname": "b"}`, false},
		{`{"process": {"user": {"uid": 1.0}}}`, false},
		{`{"process": {"user": {"uid": 1e3}}}`, false},
		{`{"process": {"user": {"uid": 4294967296}}}`, false},
		{`{"process": {"user": {"uid": -1}}}`, false},
		{`{"process": {"user": {"uid": 01}}}`, false},
		{`{"process": {"user": {"uid": "1"}}}`, false},
		{`{"hostname": true}`, false},
		{"{\"hostname\": \"\xff\"}", false},
		{`{"hostname": "\ud800"}`, false},
		{`{"hostname": "\ud800\u0041"}`, false},
		{"{\"hostname\": \"a\tb\"}", false},
		{`{"hostname": "\x"}`, false},
		{`{"hostname": "a"} x`, false},
		{`{"hostname": "a",}`, false},
		{`{"hostname" "a"}`, false},
		{`[]`, false},
		{``, false},
		{`{"windows": {"credentialSpec": {"a": 1}}}`, false},
		{`{"process": {"args": ["a",]}}`, false},
		{`{"process": {"args": ["a"`, false},
	} {
		if got := checkFast(t, []byte(tc.doc)); got != tc.fast {
			t.Errorf("%q: decoded by the fast path: %v, want %v", tc.doc, got, tc.fast)
		}
	}
}

// TestParseSpecFallsBack: a document the fast path leaves still decodes,
// and still warns of its unknown keys; one it takes warns of none.
func TestParseSpecFallsBack(t *testing.T) {
	var warned []string
	warnf := func(format string, args ...any) { warned = append(warned, format) }
	spec, err := ParseSpec([]byte(`{"process": {"args": ["sh"]}, "root": {"path": "r"}, "Hostname": "h", "typo": 1}`), "config.json", warnf)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Hostname != "h" || len(warned) != 1 {
		t.Errorf("hostname %q (want h, matched case-insensitively), warnings %q (want the one unknown key)", spec.Hostname, warned)
	}
	warned = nil
	if _, err := ParseSpec([]byte(`{"process": {"args": ["sh"]}, "root": {"path": "r"}}`), "config.json", warnf); err != nil || len(warned) != 0 {
		t.Errorf("a plain config: %v, warnings %q", err, warned)
	}
	if _, err := ParseSpec([]byte(`{"process": {"args": ["sh"]}, "root": {"path": "r"}, "hostname": 1}`), "config.json", nil); err == nil ||
		!strings.Contains(err.Error(), "parse config.json: line 1, column") {
		t.Errorf("a type error: %v, want encoding/json's error with its position", err)
	}
}

// FuzzFastJSON: whatever the input, the fast path either leaves it to
// encoding/json or decodes it exactly as encoding/json does.
func FuzzFastJSON(f *testing.F) {
	b, err := json.Marshal(Example())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	n := 0
	full := filled(reflect.TypeOf(specs.Spec{}), &n).Interface().(specs.Spec)
	if b, err = json.Marshal(&full); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"hostname": "\ud83d\ude00", "process": {"user": {"uid": 1}}, "mounts": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
	})
}
