package fastjson

import (
	"encoding/base64"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// AppendString appends s as a JSON string, exactly as encoding/json's
// Marshal writes it: with <, > and & escaped (its HTML-safe default),
// U+2028 and U+2029 escaped, and each byte of invalid UTF-8 as \ufffd.
// (Go's appendString, of encoding/json/encode.go, with escapeHTML.)
func AppendString(dst []byte, src string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			if htmlSafe(b) {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	dst = append(dst, '"')
	return dst
}

// htmlSafe: an ASCII byte encoding/json writes as it is (its htmlSafeSet).
func htmlSafe(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' && b < utf8.RuneSelf
}

// AppendBytes appends b as encoding/json writes a []byte: base64, or
// null for nil.
func AppendBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// AppendTime appends t as encoding/json writes a time.Time (its
// MarshalJSON, whose output needs no compacting). Its error is not
// encoding/json's: the caller falls back to encoding/json for the whole
// value, which gives its own.
func AppendTime(dst []byte, t time.Time) ([]byte, error) {
	b, err := t.MarshalJSON()
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// AppendMarshal appends v as json.Marshal writes it: for a value the
// generated code leaves to encoding/json (one with a method of its own,
// an interface, a float). v must not be reached through a pointer
// receiver's method, which the generator refuses.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
