package libbox

// What the relay reads of a connection's first bytes before it lets them
// through: the server name of a TLS ClientHello (SNI), or whether they are
// an HTTP/1 request (which the relay then reads whole and checks: see
// readRelayedRequest). Anything else is passed on as it is (the name is
// known from the address the client connected to).
//
// What counts as HTTP is decided generously, so that nothing a server would
// take for a request passes unread: a first word of token characters
// followed by whitespace, on a line that mentions "HTTP/" in any case,
// after any empty lines (RFC 9112 2.2 lets a server skip them). Such a line
// that is not a well-formed HTTP/1.0 or HTTP/1.1 request line (HTTP/2's
// "PRI * HTTP/2.0" preface, "HTTP/1.2", tabs between the words) is
// refused by the relay, never passed on.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
)

// sniffKind is what the first bytes of a connection turned out to be.
type sniffKind int

const (
	sniffMore  sniffKind = iota // not decided yet: read more
	sniffTLS                    // a TLS ClientHello; name is its SNI ("" for none)
	sniffHTTP                   // the start of an HTTP request: the relay reads it
	sniffOther                  // another protocol: nothing to check
)

// maxSniff bounds what is read before deciding: a TLS record (16 KiB plus
// its header) or an HTTP request line.
const maxSniff = 16<<10 + 5

var errSniffTooLong = errors.New("the request line is longer than 16 KiB")

// sniff looks at the first bytes of a connection. It returns sniffMore
// while b is a prefix of something it could still decide on, and an error
// for a TLS start that is malformed.
func sniff(b []byte) (sniffKind, string, error) {
	// Empty lines before a request line.
	b = bytes.TrimLeft(b, "\r\n")
	if len(b) == 0 {
		return sniffMore, "", nil
	}
	if b[0] == 0x16 {
		return sniffTLSHello(b)
	}
	return sniffRequestLine(b), "", nil
}

// sniffRequestLine: sniffHTTP for a first line that a server could take
// for an HTTP request line, sniffOther for anything else.
func sniffRequestLine(b []byte) sniffKind {
	// The first word: token characters up to whitespace (RFC 9112 3
	// lets a recipient split the request line on SP, HTAB, VT, FF or a
	// bare CR).
	i := 0
	for i < len(b) && b[i] < 0x80 && tchar[b[i]] {
		i++
	}
	switch {
	case i == len(b):
		return sniffMore
	case i == 0 || !strings.ContainsRune(" \t\v\f\r", rune(b[i])):
		return sniffOther // not a word, or one ended by something else (binary, LF)
	}
	eol := bytes.IndexByte(b, '\n')
	if eol < 0 {
		return sniffMore
	}
	if bytes.Contains(bytes.ToUpper(b[:eol]), []byte("HTTP/")) {
		return sniffHTTP
	}
	return sniffOther // "EHLO mail.example.com", "PING"
}

// sniffTLSHello reads the SNI of a ClientHello in the first TLS record.
func sniffTLSHello(b []byte) (sniffKind, string, error) {
	if len(b) < 5 {
		return sniffMore, "", nil
	}
	if b[1] != 3 {
		return sniffTLS, "", errors.New("not a TLS record")
	}
	n := int(binary.BigEndian.Uint16(b[3:5]))
	if n == 0 || n > 16<<10+2048 {
		return sniffTLS, "", errors.New("bad TLS record length")
	}
	if len(b) < 5+n {
		return sniffMore, "", nil
	}
	name, err := clientHelloSNI(b[5 : 5+n])
	return sniffTLS, name, err
}

// errShortHello is a ClientHello that goes on in a following record: the
// SNI is then not checked (rare: hellos are far below a record's 16 KiB).
var errShortHello = errors.New("truncated ClientHello")

// clientHelloSNI parses a handshake message (RFC 8446 4.1.2) and returns
// the host_name of its server_name extension (RFC 6066 3).
func clientHelloSNI(h []byte) (string, error) {
	r := tlsReader(h)
	typ, ok := r.u8()
	if !ok || typ != 1 {
		return "", errors.New("not a ClientHello")
	}
	length, ok := r.u24()
	if !ok {
		return "", errShortHello
	}
	if int(length) > len(r) {
		// The hello continues in the next record: read what is here.
		if len(r) < 2 {
			return "", errShortHello
		}
	} else {
		r = r[:length]
	}
	var body tlsReader
	if !r.skip(2+32) || !r.vec8(&body) || !r.vec16(&body) || !r.vec8(&body) {
		return "", errShortHello
	}
	if len(r) == 0 {
		return "", nil // no extensions
	}
	var exts tlsReader
	if !r.vec16(&exts) {
		return "", errShortHello
	}
	for len(exts) > 0 {
		typ, ok1 := exts.u16()
		var data tlsReader
		if !ok1 || !exts.vec16(&data) {
			return "", errors.New("malformed TLS extension")
		}
		if typ != 0 {
			continue
		}
		var list tlsReader
		if !data.vec16(&list) {
			return "", errors.New("malformed server_name extension")
		}
		for len(list) > 0 {
			kind, ok := list.u8()
			var name tlsReader
			if !ok || !list.vec16(&name) {
				return "", errors.New("malformed server_name extension")
			}
			if kind == 0 {
				if len(name) == 0 {
					return "", errors.New("empty server name")
				}
				return string(name), nil
			}
		}
		return "", nil
	}
	return "", nil
}

// tlsReader is a cursor over TLS wire data.
type tlsReader []byte

func (r *tlsReader) u8() (uint8, bool) {
	if len(*r) < 1 {
		return 0, false
	}
	v := (*r)[0]
	*r = (*r)[1:]
	return v, true
}

func (r *tlsReader) u16() (uint16, bool) {
	if len(*r) < 2 {
		return 0, false
	}
	v := binary.BigEndian.Uint16(*r)
	*r = (*r)[2:]
	return v, true
}

func (r *tlsReader) u24() (uint32, bool) {
	if len(*r) < 3 {
		return 0, false
	}
	v := uint32((*r)[0])<<16 | uint32((*r)[1])<<8 | uint32((*r)[2])
	*r = (*r)[3:]
	return v, true
}

func (r *tlsReader) skip(n int) bool {
	if len(*r) < n {
		return false
	}
	*r = (*r)[n:]
	return true
}

func (r *tlsReader) vec8(out *tlsReader) bool {
	n, ok := r.u8()
	if !ok || len(*r) < int(n) {
		return false
	}
	*out = (*r)[:n]
	*r = (*r)[n:]
	return true
}

func (r *tlsReader) vec16(out *tlsReader) bool {
	n, ok := r.u16()
	if !ok || len(*r) < int(n) {
		return false
	}
	*out = (*r)[:n]
	*r = (*r)[n:]
	return true
}
