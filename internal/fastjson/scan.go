// Package fastjson is what the generated JSON fast paths of the runtime
// share: a scanner that decodes only the documents encoding/json would
// decode without any doubt, and gives up with ErrSlow on anything else,
// and the encoding of strings exactly as encoding/json writes them.
//
// A new process pays for every type encoding/json first meets (it builds
// its decoders and encoders by reflection, and the field lists of every
// struct), and the runtime is a new process for every command: the
// generated code (specconv/fastjson_gen.go for config.json,
// libbox/statejson_gen.go for state.json; internal/fastjson/fjgen writes
// both) does the same work without reflection. Whatever it does not
// decide, the caller gives to encoding/json, whose results and errors
// are thus unchanged.
package fastjson

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSlow: the fast path does not decide this document.
var ErrSlow = errors.New("fastjson: left to encoding/json")

// maxSkipDepth bounds the nesting of a value Skip reads: deeper is left
// to encoding/json (whose own limit is 10000).
const maxSkipDepth = 1000

// Scanner reads one JSON document; every method either consumes a whole
// well-formed value of the kind asked for or returns ErrSlow.
type Scanner struct {
	b     []byte
	i     int
	depth int
}

// NewScanner reads b.
func NewScanner(b []byte) *Scanner { return &Scanner{b: b} }

// End returns ErrSlow unless only white space is left.
func (s *Scanner) End() error {
	s.ws()
	if s.i != len(s.b) {
		return ErrSlow
	}
	return nil
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Null consumes a null literal, if that is what comes next.
func (s *Scanner) Null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// Expect consumes the byte c, after white space.
func (s *Scanner) Expect(c byte) error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return nil
	}
	return ErrSlow
}

// Object reads an object, calling member for each key with s positioned
// at its value, which member must consume.
func (s *Scanner) Object(member func(key string) error) error {
	done, err := s.open('{', '}')
	for !done && err == nil {
		s.ws()
		var key string
		if key, err = s.Str(); err != nil {
			break
		}
		if err = s.Expect(':'); err != nil {
			break
		}
		if err = member(key); err != nil {
			break
		}
		done, err = s.next('}')
	}
	return err
}

// Array reads an array, calling elem with s positioned at each element,
// which elem must consume.
func (s *Scanner) Array(elem func() error) error {
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
func (s *Scanner) open(opening, closing byte) (done bool, err error) {
	if err := s.Expect(opening); err != nil {
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
func (s *Scanner) next(closing byte) (done bool, err error) {
	s.ws()
	if s.i >= len(s.b) {
		return true, ErrSlow
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return true, ErrSlow
}

// Str reads a string. Invalid UTF-8 and lone surrogates, which
// encoding/json replaces with U+FFFD, are left to it.
func (s *Scanner) Str() (string, error) {
	if err := s.Expect('"'); err != nil {
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
				return "", ErrSlow
			}
			return string(raw), nil
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", ErrSlow
		}
		s.i++
	}
	return "", ErrSlow
}

// RawStr reads a string as Str does, and returns its text as the
// document has it, quotes and escapes included: what encoding/json
// hands an Unmarshaler.
func (s *Scanner) RawStr() ([]byte, error) {
	s.ws()
	start := s.i
	if _, err := s.Str(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// escaped finishes a string that has an escape at s.i, begun at start.
func (s *Scanner) escaped(start int) (string, error) {
	out := make([]byte, 0, s.i-start+16)
	out = append(out, s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(out) {
				return "", ErrSlow
			}
			return string(out), nil
		case c < 0x20:
			return "", ErrSlow
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", ErrSlow
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
				return "", ErrSlow
			}
			if utf16.IsSurrogate(r) {
				if s.i+1 >= len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
					return "", ErrSlow
				}
				s.i += 2
				r2, ok := s.hex4()
				if !ok {
					return "", ErrSlow
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", ErrSlow
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", ErrSlow
		}
	}
	return "", ErrSlow
}

func (s *Scanner) hex4() (rune, bool) {
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

// Bool reads true or false.
func (s *Scanner) Bool() (bool, error) {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true, nil
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false, nil
	}
	return false, ErrSlow
}

// integer reads a number that is an integer literal (no fraction, no
// exponent: encoding/json refuses those for integer fields, with an
// error of its own) and returns its text.
func (s *Scanner) integer() (string, error) {
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
		return "", ErrSlow
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return "", ErrSlow
		}
	}
	return string(s.b[start:s.i]), nil
}

// Int reads an integer that fits in a signed integer of bits bits.
func (s *Scanner) Int(bits int) (int64, error) {
	lit, err := s.integer()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(lit, 10, bits)
	if err != nil {
		return 0, ErrSlow
	}
	return v, nil
}

// Uint reads an integer that fits in an unsigned integer of bits bits.
func (s *Scanner) Uint(bits int) (uint64, error) {
	lit, err := s.integer()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(lit, 10, bits)
	if err != nil {
		return 0, ErrSlow
	}
	return v, nil
}

// Skip reads a well-formed value of any kind, for a key the destination
// has no field for (encoding/json ignores its value, but not a syntax
// error in it).
func (s *Scanner) Skip() error {
	s.ws()
	if s.i >= len(s.b) {
		return ErrSlow
	}
	switch c := s.b[s.i]; {
	case c == '{' || c == '[':
		if s.depth++; s.depth > maxSkipDepth {
			return ErrSlow
		}
		var err error
		if c == '{' {
			err = s.Object(func(string) error { return s.Skip() })
		} else {
			err = s.Array(s.Skip)
		}
		s.depth--
		return err
	case c == '"':
		_, err := s.Str()
		return err
	case c == 't' || c == 'f':
		_, err := s.Bool()
		return err
	case c == 'n':
		if s.Null() {
			return nil
		}
		return ErrSlow
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return ErrSlow
}

// number reads a number as JSON's grammar has it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) number() error {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return ErrSlow
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return ErrSlow
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return ErrSlow
		}
	}
	return nil
}

func (s *Scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// Seen marks field bit of an object as read, or returns ErrSlow if it was
// (a duplicate key: encoding/json merges the two values).
func Seen(mask *uint64, bit uint) error {
	if *mask&(1<<bit) != 0 {
		return ErrSlow
	}
	*mask |= 1 << bit
	return nil
}

// Unknown decides a key that names none of an object's fields: nil (the
// value is to be skipped, as encoding/json skips it) unless encoding/json
// could match it to one of names without regard to case, which is left
// to it (as is any key outside ASCII, rather than fold Unicode as it
// does).
func Unknown(key string, names []string) error {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return ErrSlow
		}
	}
	for _, n := range names {
		if asciiEqualFold(key, n) {
			return ErrSlow
		}
	}
	return nil
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
