package libbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson"
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
	for _, cfg := range presetConfigs(t) {
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

// checkStateDecode holds decodeState to encoding/json on doc, for both
// the whole state and its head: the same value, or the same error. It
// reports whether the fast path decoded each.
func checkStateDecode(t *testing.T, doc []byte) (fastFull, fastHead bool) {
	t.Helper()
	return checkDecodeAs[persisted](t, doc), checkDecodeAs[stateHead](t, doc)
}

func checkDecodeAs[T any](t *testing.T, doc []byte) bool {
	t.Helper()
	var fast, slow, got T
	fastErr := fastDecodeState(doc, &fast)
	slowErr := slowDecodeState(doc, &slow)
	if fastErr != nil {
		if !errors.Is(fastErr, fastjson.ErrSlow) {
			t.Fatalf("%T: the fast path gave %v, not ErrSlow", fast, fastErr)
		}
		var zero T
		if !reflect.DeepEqual(fast, zero) {
			t.Fatalf("%T: the fast path left a value behind when it gave up on\n%s", fast, doc)
		}
	} else {
		if slowErr != nil {
			t.Fatalf("%T: the fast path decoded what encoding/json refuses (%v):\n%s", fast, slowErr, doc)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%T: the fast path decoded\n%s\nto %+v, encoding/json to %+v", fast, doc, fast, slow)
		}
	}
	err := decodeState(doc, &got)
	if (err == nil) != (slowErr == nil) || err != nil && err.Error() != slowErr.Error() || !reflect.DeepEqual(got, slow) {
		t.Fatalf("%T: decodeState gave %+v, %v; encoding/json %+v, %v", got, got, err, slow, slowErr)
	}
	return fastErr == nil
}

// TestStateJSONDecodeMatchesJSON: every state json.Marshal writes, the
// fast path decodes, to what encoding/json decodes.
func TestStateJSONDecodeMatchesJSON(t *testing.T) {
	for i, st := range testStates(t) {
		for _, indent := range []bool{false, true} {
			b, err := json.Marshal(st)
			if indent {
				b, err = json.MarshalIndent(st, "", "\t")
			}
			if err != nil {
				t.Fatal(err)
			}
			if full, head := checkStateDecode(t, b); !full || !head {
				t.Fatalf("state %d was left to encoding/json (whole: %v, head: %v):\n%s", i, !full, !head, b)
			}
		}
	}
}

// TestStateJSONLeavesDoubtToJSON: what encoding/json decodes by rules of
// its own (keys matched without regard to case, merged duplicates,
// U+FFFD for bad text, what follows the first value), refuses, or decodes
// into a type the fast path does not handle, the fast path leaves to it.
func TestStateJSONLeavesDoubtToJSON(t *testing.T) {
	const created = `"created": "2023-11-14T22:13:20Z"`
	for _, tc := range []struct {
		doc  string
		fast bool
	}{
		{`{"id": "c", "initPid": 1, ` + created + `, "config": {"rootfs": "/r"}}`, true},
		{` {"id": "c", "initPid": 1, "config": null, "cgroupPaths": null} ` + "\n", true},
		{`{"id": "c", "initPid": 1, "config": {"rootfs": "/r", "namespaces": [], "annotations": {}}, "cgroupPaths": {}}`, true},
		{`{"id": "c", "initPid": 1, "config": {"rootfs": "/r", "resources": {"memory": -1, "cpu_shares": 18446744073709551615}}}`, true},
		{`{"id": "c", "initPid": 1, "created": "2023-11-14T22:13:20.123456789+02:00", "config": {}}`, true},
		{`{"id": "c", "initPid": 1, "config": {"process": {"args": ["sh"], "env": null}}}`, true},
		// Keys of a newer runtime, or outside the head: skipped.
		{`{"id": "c", "initPid": 1, "future": {"a": [1, 2.5e-3, true, null, "x"]}, "config": {"rootfs": "/r", "later": -0.0}}`, true},
		{`null`, true},
		{`{}`, true},

		{`{"ID": "c", "initPid": 1, "config": {}}`, false},
		{`{"id": "c", "initpid": 1, "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "config": {"ROOTFS": "/r"}}`, false},
		{`{"id": "c", "initPid": 1, "config": {"cgroupspath": "x"}}`, false},
		{"{\"id\": \"c\", \"init\u017fid\": 1, \"config\": {}}", false},
		{`{"id": "c", "id": "d", "initPid": 1, "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "config": {}} x`, false},
		{`{"id": "c", "initPid": 1, "config": {}} {"id": "d"}`, false},
		{`{"id": "c", "initPid": 1, "config": {}`, false},
		{`{"id": "c", "initPid": 1, "config": {},}`, false},
		{`{"id": "c", "initPid": 1.0, "config": {}}`, false},
		{`{"id": "c", "initPid": 01, "config": {}}`, false},
		{`{"id": "c", "initPid": 1e2, "config": {}}`, false},
		{`{"id": "c", "initPid": "1", "config": {}}`, false},
		{`{"id": "c", "initPid": 9223372036854775808, "config": {}}`, false},
		{`{"id": "c", "initStartTime": -1, "initPid": 1, "config": {}}`, false},
		{`{"id": "c", "initStartTime": -0, "initPid": 1, "config": {}}`, false},
		{`{"id": 1, "initPid": 1, "config": {}}`, false},
		{"{\"id\": \"c\xff\", \"initPid\": 1, \"config\": {}}", false},
		{`{"id": "c\ud800", "initPid": 1, "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "created": null, "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "created": "2023-11-14T22:13:20\u005a", "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "created": "yesterday", "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "created": 1700000000, "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "future": [1, 2,], "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "future": 01, "config": {}}`, false},
		{`{"id": "c", "initPid": 1, "config": {"rootfs": "/r", "later": {"x": tru}}}`, false},
		{`{"id": "c", "initPid": 1, "config": []}`, false},
		{`[]`, false},
		{``, false},
		{`   `, false},
		{"\ufeff{}", false},
	} {
		full, head := checkStateDecode(t, []byte(tc.doc))
		if full != tc.fast || head != tc.fast {
			t.Errorf("%s: decoded by the fast path: whole %v, head %v; want %v", tc.doc, full, head, tc.fast)
		}
	}
}

// FuzzStateJSON: whatever the input, the fast path decodes it as
// encoding/json does or leaves it to it; and what encoding/json decodes,
// the generated encoder writes as json.Marshal does.
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
		checkStateDecode(t, doc)
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
