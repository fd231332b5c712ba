package libbox

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fillRandom sets every field of v that JSON sends to a random value:
// scalars anything in their range, pointers, slices and maps nil, empty
// or filled (depth bounds the nesting).
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == timeType {
		// In UTC (what the runtime stamps) or the local zone: the
		// decoded time must keep which (the state hooks receive prints
		// it), and reflect.DeepEqual tells the two apart.
		t := time.Unix(r.Int63n(1<<34)-1<<33, r.Int63n(int64(time.Second)))
		if r.Intn(2) == 0 {
			t = t.UTC()
		}
		v.Set(reflect.ValueOf(t))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int63() - r.Int63())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(r.Uint64())
	case reflect.String:
		words := []string{"", "a", "/usr/lib", "ünïcode ✓", "quote\" back\\slash", "nl\nnul\x00", strings.Repeat("x", 300)}
		v.SetString(words[r.Intn(len(words))])
	case reflect.Pointer:
		if depth <= 0 || r.Intn(4) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(r, p.Elem(), depth-1)
		v.Set(p)
	case reflect.Slice:
		switch k := r.Intn(4); {
		case depth <= 0 || k == 0:
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+r.Intn(3), 3)
			for i := range s.Len() {
				fillRandom(r, s.Index(i), depth-1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch k := r.Intn(4); {
		case depth <= 0 || k == 0:
		case k == 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + r.Intn(3) {
				key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fillRandom(r, key, depth-1)
				fillRandom(r, val, depth-1)
				m.SetMapIndex(key, val)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if sent, _ := jsonField(v.Type().Field(i)); sent {
				fillRandom(r, v.Field(i), depth)
			}
		}
	}
}

// codecExpect is what the codec must give back for v: v itself, but for
// the fields JSON does not send (zero) and empty slices and maps under
// omitempty (nil, as JSON leaves them out).
func codecExpect(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			codecExpect(v.Elem())
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				codecExpect(v.Index(i))
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			x := reflect.New(v.Type().Elem()).Elem()
			x.Set(v.MapIndex(k))
			codecExpect(x)
			v.SetMapIndex(k, x)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			sent, omit := jsonField(f)
			if !sent {
				if fv.CanSet() {
					fv.SetZero()
				}
				continue
			}
			if omit && (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.Len() == 0 {
				fv.SetZero()
			}
			codecExpect(fv)
		}
	}
}

// checkCodecRoundTrip puts v (a pointer to a codec root) through the codec
// (roundTrip) and through JSON, and compares.
func checkCodecRoundTrip[T any](t *testing.T, what string, v *T, roundTrip func(*T) (*T, error)) {
	t.Helper()
	got, err := roundTrip(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	// The exact value, field for field.
	want := new(T)
	reflect.ValueOf(want).Elem().Set(deepCopy(reflect.ValueOf(v).Elem()))
	codecExpect(reflect.ValueOf(want).Elem())
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		ej, _ := json.Marshal(want)
		t.Fatalf("%s: the codec changed the value:\ngot  %s\nwant %s", what, gj, ej)
	}
	// What JSON would have delivered, as JSON sees it.
	viaJSON := new(T)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal(b, viaJSON); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	a, _ := json.Marshal(got)
	j, _ := json.Marshal(viaJSON)
	if !bytes.Equal(a, j) {
		t.Fatalf("%s: the codec and a JSON round trip differ:\ncodec %s\njson  %s", what, a, j)
	}
}

// presetConfigs are the container configs of the default sandbox and of
// each preset, by name.
func presetConfigs(t *testing.T) map[string]*Config {
	t.Helper()
	dir := t.TempDir()
	out := map[string]*Config{}
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
		out[name] = cfg
	}
	return out
}

func initConfigRoundTrip(ic *initConfig) (*initConfig, error) {
	return decodeInitConfig(encodeInitConfig(ic))
}

func execConfigRoundTrip(ec *execConfig) (*execConfig, error) {
	return decodeExecConfig(encodeExecConfig(ec))
}

func syncMsgRoundTrip(m *syncMsg) (*syncMsg, error) {
	got, err := decodeSyncBinary(encodeSyncMsg(m))
	return &got, err
}

// deepCopy copies v with nothing shared (codecExpect changes its copy).
func deepCopy(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(deepCopy(v.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				s.Index(i).Set(deepCopy(v.Index(i)))
			}
			out.Set(s)
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(v.Type(), v.Len())
			for _, k := range v.MapKeys() {
				m.SetMapIndex(k, deepCopy(v.MapIndex(k)))
			}
			out.Set(m)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			out.Set(v)
			break
		}
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
	default:
		out.Set(v)
	}
	return out
}

// TestCodecMatchesJSON: every field of the init and exec configs, at
// random and as the presets fill them, comes back from the codec exactly
// as it went in (but for what JSON drops as well), and as a JSON round
// trip has it.
func TestCodecMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := range 300 {
		ic := new(initConfig)
		fillRandom(r, reflect.ValueOf(ic).Elem(), 1+i%4)
		checkCodecRoundTrip(t, "random init config", ic, initConfigRoundTrip)
		ec := new(execConfig)
		fillRandom(r, reflect.ValueOf(ec).Elem(), 1+i%4)
		checkCodecRoundTrip(t, "random exec config", ec, execConfigRoundTrip)
		m := new(syncMsg)
		fillRandom(r, reflect.ValueOf(m).Elem(), 1+i%4)
		checkCodecRoundTrip(t, "random sync message", m, syncMsgRoundTrip)
	}
	// The messages as init and the runtime send them.
	src := 3
	for _, m := range []syncMsg{
		{Type: syncReady},
		{Type: syncError, Error: "exec: \"nope\": not found", ErrorKind: "not-found"},
		{Type: syncHeldFds, Held: 2},
		{Type: syncMountSource, Source: &src},
		{Type: syncLog, Log: &logEntry{Level: "debug", Msg: "m"}},
		{Type: syncNetFds, Net: &netFdsMsg{UDP: true, Ports: []uint16{53, 8080}, NetNS: true}},
		{Type: syncMountOp, MountOp: &mountOp{Op: "add", Source: "/a", Target: "/b", ReadOnly: true}},
		{Type: syncMountDone, MountDone: &mountReply{MountID: 7, Target: "/b"}},
	} {
		checkCodecRoundTrip(t, string(m.Type), &m, syncMsgRoundTrip)
	}
	for name, cfg := range presetConfigs(t) {
		state := ociState("x", cfg, Creating, 1, time.Now().UTC(), "root")
		checkCodecRoundTrip(t, name, &initConfig{Config: cfg, ID: "x", State: state}, initConfigRoundTrip)
		checkCodecRoundTrip(t, name, &execConfig{Process: &cfg.Process, Seccomp: cfg.Seccomp, Landlock: cfg.Landlock, State: []byte("{}")}, execConfigRoundTrip)
	}
}

// TestCodecRefusesDamage: a wrong version or kind, a truncated or an
// overlong encoding is an error, never a half-read config.
func TestCodecRefusesDamage(t *testing.T) {
	cfg, _, err := ContainerConfig(Options{}, "", []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	b := encodeInitConfig(&initConfig{Config: cfg, ID: "x"})
	if _, err := decodeInitConfig(append([]byte{codecVersion + 1}, b[1:]...)); err == nil {
		t.Error("another version was decoded")
	}
	if _, err := decodeExecConfig(b); err == nil {
		t.Error("an init config was decoded as an exec config")
	}
	if m, err := decodeSyncBinary(b); err != nil || m.Type != syncConfig || m.Config == nil {
		t.Errorf("decodeSyncBinary = %v, %v; want the config", m.Type, err)
	}
	if m, err := decodeSyncBinary(encodeExecConfig(&execConfig{LogLevel: "debug"})); err != nil || m.Type != syncExec || m.Exec.LogLevel != "debug" {
		t.Errorf("decodeSyncBinary = %v, %v; want the exec config", m.Type, err)
	}
	held := encodeSyncMsg(&syncMsg{Type: syncHeldFds, Held: 2})
	if m, err := decodeSyncBinary(held); err != nil || m.Type != syncHeldFds || m.Held != 2 {
		t.Errorf("decodeSyncBinary = %+v, %v; want the held-fds message", m, err)
	}
	for n := range len(held) {
		if _, err := decodeSyncBinary(held[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes of a sync message were decoded", n, len(held))
		}
	}
	if _, err := decodeSyncBinary([]byte(`{"type":"ready"}`)); err == nil {
		t.Error("a JSON message was decoded: every peer speaks the codec")
	}
	if _, err := decodeInitConfig(append(b[:len(b):len(b)], 0)); err == nil {
		t.Error("a trailing byte was accepted")
	}
	for n := range len(b) {
		if _, err := decodeInitConfig(b[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes were decoded", n, len(b))
		}
	}
}

// FuzzCodecDecode: no input makes the decoders panic or allocate more than
// their input allows, and what decodes goes through the codec again
// unchanged.
func FuzzCodecDecode(f *testing.F) {
	// Small seeds: the fuzzer minimizes every input that finds new
	// coverage, and a whole sandbox's config (1.2 KB) takes it longer to
	// minimize than a short run lasts.
	f.Add(encodeInitConfig(&initConfig{ID: "x", MountSources: []int{1}, Config: &Config{
		Hostname:    "h",
		Mounts:      []Mount{{Source: "/a", Destination: "/b", Flags: 1}},
		Annotations: map[string]string{"k": "v"},
		Process:     Process{Args: []string{"/bin/true"}, Env: []string{}},
	}}))
	f.Add(encodeExecConfig(&execConfig{Process: &Process{Args: []string{"sh"}}, State: []byte("{}")}))
	f.Add(encodeSyncMsg(&syncMsg{Type: syncError, Error: "e", Log: &logEntry{Level: "info", Msg: "m"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeSyncBinary(b)
		if err != nil {
			return
		}
		switch {
		case len(b) > 1 && b[1] == codecSyncMsg:
			again, err := syncMsgRoundTrip(&m)
			codecExpect(reflect.ValueOf(&m).Elem())
			if err != nil || !reflect.DeepEqual(*again, m) {
				t.Fatalf("a decoded sync message changed on its way through the codec again (%v)", err)
			}
		case m.Type == syncConfig:
			again, err := initConfigRoundTrip(m.Config)
			codecExpect(reflect.ValueOf(m.Config).Elem())
			if err != nil || !reflect.DeepEqual(again, m.Config) {
				t.Fatalf("a decoded init config changed on its way through the codec again (%v)", err)
			}
		case m.Type == syncExec:
			again, err := execConfigRoundTrip(m.Exec)
			codecExpect(reflect.ValueOf(m.Exec).Elem())
			if err != nil || !reflect.DeepEqual(again, m.Exec) {
				t.Fatalf("a decoded exec config changed on its way through the codec again (%v)", err)
			}
		}
	})
}
