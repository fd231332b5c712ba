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

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// errSlow: the fast path does not decide this document.
var errSlow = errors.New("fastjson: left to encoding/json")

// fastSpec decodes data as encoding/json would, or returns errSlow.
func fastSpec(data []byte) (*specs.Spec, error) {
	s := &jscan{b: data}
	var spec specs.Spec
	if err := fjSpecsSpec(s, &spec); err != nil {
		return nil, errSlow
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, errSlow
	}
	return &spec, nil
}

// jscan reads one JSON document; every method either consumes a whole
// well-formed value of the kind asked for or returns errSlow.
type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// null consumes a null literal, if that is what comes next.
func (s *jscan) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

func (s *jscan) expect(c byte) error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return nil
	}
	return errSlow
}

// object reads an object, calling member for each key with s positioned
// at its value, which member must consume.
func (s *jscan) object(member func(key string) error) error {
	done, err := s.open('{', '}')
	for !done && err == nil {
		s.ws()
		var key string
		if key, err = s.str(); err != nil {
			break
		}
		if err = s.expect(':'); err != nil {
			break
		}
		if err = member(key); err != nil {
			break
		}
		done, err = s.next('}')
	}
	return err
}

// array reads an array, calling elem with s positioned at each element,
// which elem must consume.
func (s *jscan) array(elem func() error) error {
	done, err := s.open('[', ']')
	for !done && err == nil {
		if err = elem(); err != nil {
			break
		}
		done, err = s.next(']')
	}
	return err
}

// open reads the opening byte of an object or array, and its closing one
// if it is empty (done).
func (s *jscan) open(opening, closing byte) (done bool, err error) {
	if err := s.expect(opening); err != nil {
		return true, err
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closing {
		s.i++
		return true, nil
	}
	return false, nil
}

// next reads what follows a member or an element: a comma, or the closing
// byte (done).
func (s *jscan) next(closing byte) (done bool, err error) {
	s.ws()
	if s.i >= len(s.b) {
		return true, errSlow
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return true, errSlow
}

// str reads a string. Invalid UTF-8 and lone surrogates, which
// encoding/json replaces with U+FFFD, are left to it.
func (s *jscan) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !utf8.Valid(raw) {
				return "", errSlow
			}
			return string(raw), nil
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", errSlow
		}
		s.i++
	}
	return "", errSlow
}

// escaped finishes a string that has an escape at s.i, begun at start.
func (s *jscan) escaped(start int) (string, error) {
	out := make([]byte, 0, s.i-start+16)
	out = append(out, s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(out) {
				return "", errSlow
			}
			return string(out), nil
		case c < 0x20:
			return "", errSlow
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", errSlow
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", errSlow
			}
			if utf16.IsSurrogate(r) {
				if s.i+1 >= len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
					return "", errSlow
				}
				s.i += 2
				r2, ok := s.hex4()
				if !ok {
					return "", errSlow
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", errSlow
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", errSlow
		}
	}
	return "", errSlow
}

func (s *jscan) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}

func (s *jscan) boolean() (bool, error) {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true, nil
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false, nil
	}
	return false, errSlow
}

// integer reads a number that is an integer literal (no fraction, no
// exponent: encoding/json refuses those for integer fields, with an
// error of its own) and returns its text.
func (s *jscan) integer() (string, error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || (n > 1 && s.b[digits] == '0') {
		return "", errSlow
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return "", errSlow
		}
	}
	return string(s.b[start:s.i]), nil
}

func (s *jscan) int(bits int) (int64, error) {
	lit, err := s.integer()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(lit, 10, bits)
	if err != nil {
		return 0, errSlow
	}
	return v, nil
}

func (s *jscan) uint(bits int) (uint64, error) {
	lit, err := s.integer()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(lit, 10, bits)
	if err != nil {
		return 0, errSlow
	}
	return v, nil
}

// seen marks field bit of an object as read, or returns errSlow if it was
// (a duplicate key: encoding/json merges the two values).
func seen(mask *uint64, bit uint) error {
	if *mask&(1<<bit) != 0 {
		return errSlow
	}
	*mask |= 1 << bit
	return nil
}
