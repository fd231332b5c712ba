package libbox

// state.json without encoding/json's reflection, most of the time. A new
// process pays for every type encoding/json first meets: it builds an
// encoder or decoder for each of the ~100 types under Config, and the
// field list of every struct (encoding/json.typeFields), before it
// encodes a byte. Writing a sandbox's 10 KB state took 0.45 ms and
// 196 KB of allocations (of the 660 KB a `run` allocated), reading it
// 0.6 ms, where the work itself is a tenth of that.
//
// statejson_gen.go is generated from the types (statejson_gen_test.go,
// by internal/fastjson/fjgen; `go test ./libbox -run
// TestStateJSONGenerated -update` after a change to one):
//
//   - an encoder whose output is json.Marshal's, byte for byte (the
//     same field order, omitempty and omitzero, escaping, sorted map
//     keys); a value with a method of its own is written by that method
//     or by json.Marshal. Should it fail (a time json.Marshal refuses),
//     json.Marshal encodes the whole state again, for its own error.
//   - decoders that decode what encoding/json decodes without doubt
//     (exact keys, each once; values of the field's type; integers that
//     fit; valid UTF-8; one object and nothing after it but white
//     space). Anything else goes to encoding/json, which decodes it as it
//     always did, from a zero value, with its own errors. A key that
//     names no field is skipped as encoding/json skips it, unless it
//     could match one without regard to case.
//
// TestStateJSONMatchesMarshal, TestStateJSONDecodeMatchesJSON,
// TestStateJSONLeavesDoubtToJSON and FuzzStateJSON hold both to
// encoding/json.

import (
	"encoding/json"

	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson"
)

// marshalPersisted is json.Marshal(st).
func marshalPersisted(st *persisted) ([]byte, error) {
	// A sandbox's state is ~10 KiB: one buffer, not three of a
	// growing one.
	if b, err := fjePtrPersisted(make([]byte, 0, stateReadSize), st); err == nil {
		return b, nil
	}
	return json.Marshal(st)
}

// marshalOCIState is json.Marshal(s).
func marshalOCIState(s *OCIState) ([]byte, error) {
	if b, err := fjePtrOCIState(make([]byte, 0, 512), s); err == nil {
		return b, nil
	}
	return json.Marshal(s)
}

// fastDecodeState decodes b into st as json.NewDecoder(...).Decode would,
// or returns fastjson.ErrSlow and leaves st alone.
func fastDecodeState(b []byte, st any) error {
	switch st := st.(type) {
	case *persisted:
		return fastDecode(b, st, fjsPersisted)
	case *stateHead:
		return fastDecode(b, st, fjsStateHead)
	}
	return fastjson.ErrSlow
}

// fastDecode decodes into a zero T, which only a whole success copies to
// st: encoding/json, should it have to decide, decodes into st as it is.
func fastDecode[T any](b []byte, st *T, dec func(*fastjson.Scanner, *T) error) error {
	s := fastjson.NewScanner(b)
	var v T
	if err := dec(s, &v); err != nil {
		return fastjson.ErrSlow
	}
	if err := s.End(); err != nil {
		return fastjson.ErrSlow
	}
	*st = v
	return nil
}
