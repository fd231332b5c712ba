package specconv

// A fast path for decoding config.json. encoding/json builds its
// reflection data for every type the first time a process meets it, and
// the runtime is a new process for every container: decoding a 3 KB
// config.json into specs.Spec cost about 0.8 ms, of which the decoding
// itself is a small part, on the path of every create and run.
//
// fastjson_gen.go (generated from the specs-go types by
// TestFastJSONGenerated; `go test ./specconv -run TestFastJSONGenerated
// -update` after the runtime-spec module changes) decodes the documents
// that encoding/json would decode without any doubt: exact key names, each
// once per object, values of the field's JSON type, integers that fit,
// valid UTF-8. Anything else (an unknown or differently cased key, a
// duplicate, a syntax error, a number that does not fit, a field whose
// type it does not handle) makes it give up with errSlow, and ParseSpec
// decodes the document with encoding/json as before, which gives the same
// result or the same error it always gave. TestFastJSONMatchesJSON and
// FuzzFastJSON hold every result of the fast path to encoding/json's.
// The scanner is internal/fastjson's, the generator internal/fastjson/fjgen.

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nanobox-sandbox/nanobox-runc/internal/fastjson"
)

// errSlow: the fast path does not decide this document.
var errSlow = fastjson.ErrSlow

// fastSpec decodes data as encoding/json would, or returns errSlow.
func fastSpec(data []byte) (*specs.Spec, error) {
	s := fastjson.NewScanner(data)
	var spec specs.Spec
	if err := fjSpecsSpec(s, &spec); err != nil {
		return nil, errSlow
	}
	if err := s.End(); err != nil {
		return nil, errSlow
	}
	return &spec, nil
}
