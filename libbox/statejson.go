package libbox

// state.json without encoding/json's reflection, most of the time. A new
// process pays for every type encoding/json first meets: it builds an
// encoder or decoder for each of the ~100 types under Config, and the
// field list of every struct (encoding/json.typeFields), before it
// encodes a byte. That was 197 KB of the 660 KB a `run` allocated, and
// ~0.3 ms of its CPU (prepareState), to write a few KB.
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
//
// TestStateJSONMatchesMarshal and FuzzStateJSON hold it to json.Marshal.

import "encoding/json"

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
