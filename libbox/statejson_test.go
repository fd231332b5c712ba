package libbox

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// nastyStrings are what encoding/json escapes or replaces: HTML, control
// characters, U+2028 and U+2029, invalid UTF-8 (a stray byte, a
// truncated sequence, an encoded surrogate), quotes and backslashes.
var nastyStrings = []string{
	"", "plain", "<script>alert('&')</script>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"a\u2028b\u2029c", "\xff", "caf\xc3", "\xed\xa0\x80", "\"\\/", "é😀\U0010FFFF", "\ufffd",
}

// nastify sets every string under v, map keys included, to one of
// nastyStrings.
func nastify(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(nastyStrings[r.Intn(len(nastyStrings))])
		}
	case reflect.Pointer:
		if !v.IsNil() {
			nastify(r, v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			nastify(r, v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		m := reflect.MakeMap(v.Type())
		for _, k := range v.MapKeys() {
			nk, nv := reflect.New(k.Type()).Elem(), reflect.New(v.Type().Elem()).Elem()
			nk.Set(k)
			nv.Set(v.MapIndex(k))
			nastify(r, nk)
			nastify(r, nv)
			m.SetMapIndex(nk, nv)
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		for i := range v.NumField() {
			if sent, _ := jsonField(v.Type().Field(i)); sent {
				nastify(r, v.Field(i))
			}
		}
	}
}

// testStates are states of every shape: random ones (every field, nil,
// empty or filled, with plain and with nasty strings), the presets'
// configs, and zero values.
func testStates(t *testing.T) []*persisted {
	r := rand.New(rand.NewSource(2))
	var out []*persisted
	for i := range 300 {
		st := new(persisted)
		fillRandom(r, reflect.ValueOf(st).Elem(), 1+i%5)
		if i%2 == 1 {
			nastify(r, reflect.ValueOf(st).Elem())
		}
		out = append(out, st)
	}
	dir := t.TempDir()
	for name, opts := range map[string]Options{
		"default":        {},
		"agent-executor": AgentExecutor(dir),
		"code-judge":     CodeJudge(dir),
		"data-analysis":  DataAnalysis(dir, dir),
	} {
		cfg, _, err := ContainerConfig(opts, "", []string{"/bin/true"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, &persisted{
			ID: "c1", InitPid: 42, InitStartTime: 12345, Created: time.Now().UTC(), Owner: "root",
			Config: cfg, CgroupPaths: map[string]string{"": "/sys/fs/cgroup/c1"},
		})
	}
	return append(out, &persisted{}, &persisted{Config: &Config{}},
		&persisted{Config: &Config{Namespaces: []Namespace{}, Annotations: map[string]string{}}, CgroupPaths: map[string]string{}})
}

// TestStateJSONMatchesMarshal: the generated encoder writes what
// json.Marshal writes, byte for byte, and does not leave it to
// json.Marshal.
func TestStateJSONMatchesMarshal(t *testing.T) {
	for i, st := range append(testStates(t), nil) {
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fjePtrPersisted(nil, st)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("state %d: the generated encoder wrote\n%s\njson.Marshal\n%s", i, got, want)
		}
		if st == nil {
			continue
		}
		var cfg Config
		if st.Config != nil {
			cfg = *st.Config
		}
		s := ociState(st.ID, &cfg, Running, st.InitPid, st.Created, st.Owner)
		want, _ = json.Marshal(s)
		if got, err := fjePtrOCIState(nil, s); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("state %d: the OCI state encoder wrote %s (%v), json.Marshal %s", i, got, err, want)
		}
		if got := marshalState(s); !bytes.Equal(got, want) {
			t.Fatalf("state %d: marshalState wrote %s, json.Marshal %s", i, got, want)
		}
	}
}

// TestStateJSONMarshalFails: a state json.Marshal refuses (a time outside
// years 0-9999) is refused with json.Marshal's own error.
func TestStateJSONMarshalFails(t *testing.T) {
	for _, created := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		st := &persisted{ID: "c", Created: created, Config: &Config{}}
		_, want := json.Marshal(st)
		if want == nil {
			t.Fatalf("json.Marshal took %v", created)
		}
		if _, err := fjePtrPersisted(nil, st); err == nil {
			t.Fatalf("the generated encoder took %v", created)
		}
		b, err := marshalPersisted(st)
		if err == nil || err.Error() != want.Error() || b != nil {
			t.Fatalf("marshalPersisted: %q, %v; want json.Marshal's error %v", b, err, want)
		}
		s := &OCIState{Created: created}
		if got, want := marshalState(s), func() []byte { b, _ := json.Marshal(s); return b }(); !bytes.Equal(got, want) {
			t.Fatalf("marshalState: %q, json.Marshal %q", got, want)
		}
	}
}

// FuzzStateJSON: what encoding/json decodes from the input, the
// generated encoder writes as json.Marshal does.
func FuzzStateJSON(f *testing.F) {
	r := rand.New(rand.NewSource(3))
	for i := range 4 {
		st := new(persisted)
		fillRandom(r, reflect.ValueOf(st).Elem(), 1+i)
		nastify(r, reflect.ValueOf(st).Elem())
		b, err := json.Marshal(st)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id": "c", "initPid": 1, "created": "2023-11-14T22:13:20Z", "config": {"rootfs": "/r", "x": [1]}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var st persisted
		if json.Unmarshal(doc, &st) != nil {
			return
		}
		want, werr := json.Marshal(&st)
		got, err := marshalPersisted(&st)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !bytes.Equal(got, want) {
			t.Fatalf("marshalPersisted wrote %s (%v), json.Marshal %s (%v)", got, err, want, werr)
		}
		if werr == nil {
			if fast, err := fjePtrPersisted(nil, &st); err != nil || !bytes.Equal(fast, want) {
				t.Fatalf("the generated encoder wrote %s (%v), json.Marshal %s", fast, err, want)
			}
		}
	})
}
