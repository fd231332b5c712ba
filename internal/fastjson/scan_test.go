package fastjson

import (
	"encoding/json"
	"errors"
	"testing"
)

// checkSkip holds Skip to encoding/json: what it reads whole is one valid
// JSON value.
func checkSkip(t *testing.T, doc []byte) bool {
	t.Helper()
	s := NewScanner(doc)
	err := s.Skip()
	if err == nil {
		err = s.End()
	}
	if err != nil {
		if !errors.Is(err, ErrSlow) {
			t.Fatalf("%q: %v, want ErrSlow", doc, err)
		}
		return false
	}
	if !json.Valid(doc) {
		t.Fatalf("Skip read %q, which encoding/json refuses", doc)
	}
	return true
}

func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"a": [1, -2, 0, 0.5, -0.0e+10, 1E-3, 12e7, true, false, null, "x\u00e9\n", {}, []]}`, true},
		{` [ ] `, true},
		{`"s"`, true},
		{`-0`, true},
		{`01`, false},
		{`1.`, false},
		{`.5`, false},
		{`1e`, false},
		{`1e+`, false},
		{`-`, false},
		{`+1`, false},
		{`[1,]`, false},
		{`{"a":1,}`, false},
		{`{"a" 1}`, false},
		{`{1: 2}`, false},
		{`nul`, false},
		{`tru`, false},
		{`[1] 2`, false},
		{"\"\xff\"", false},
		{``, false},
		{`NaN`, false},
	} {
		if got := checkSkip(t, []byte(tc.doc)); got != tc.ok {
			t.Errorf("%q: Skip read it: %v, want %v", tc.doc, got, tc.ok)
		}
	}
	deep := make([]byte, 0, 2*(maxSkipDepth+1))
	for range maxSkipDepth + 1 {
		deep = append(deep, '[')
	}
	for range maxSkipDepth + 1 {
		deep = append(deep, ']')
	}
	if checkSkip(t, deep) {
		t.Error("Skip read a value nested deeper than maxSkipDepth")
	}
	if !checkSkip(t, deep[1:len(deep)-1]) {
		t.Error("Skip refused a value nested maxSkipDepth deep")
	}
}

func TestUnknown(t *testing.T) {
	names := []string{"id", "initPid", "cgroupPaths"}
	for key, slow := range map[string]bool{
		"other":        false,
		"initpid":      true,
		"INITPID":      true,
		"ID":           true,
		"Id":           true,
		"i":            false,
		"cgroupPaths_": false,
		"\u212a":       true, // Kelvin sign: left to encoding/json's Unicode folding
		"caf\u00e9":    true,
	} {
		if err := Unknown(key, names); (err != nil) != slow {
			t.Errorf("Unknown(%q) = %v, want ErrSlow: %v", key, err, slow)
		}
	}
}

// FuzzSkip: whatever Skip reads whole, encoding/json takes for one
// valid value.
func FuzzSkip(f *testing.F) {
	f.Add([]byte(`{"a": [1, -2.5e3, true, null, "x\u00e9"]}`))
	f.Add([]byte(`[[], {}, 0]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkSkip(t, doc)
	})
}
