package libbox

// What the relay reads of a connection's first bytes before it lets them
// through: the server name of a TLS ClientHello (SNI) or the Host header of
// an HTTP/1 request, to check it against the name the connection was
// authorized for. Anything else is passed on as it is (the name is known
// from the address the client connected to).

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
	sniffHTTP                   // an HTTP/1 request head; name is its Host ("" for none)
	sniffOther                  // another protocol: nothing to check
)

// maxSniff bounds what is read before deciding: a TLS record (16 KiB plus
// its header) or an HTTP request head.
const maxSniff = 16<<10 + 5

var errSniffTooLong = errors.New("the request head is longer than 16 KiB")

// sniff looks at the first bytes of a connection. It returns sniffMore
// while b is a prefix of something it could still decide on, and an error
// for a TLS or HTTP start that is malformed or too long.
func sniff(b []byte) (sniffKind, string, error) {
	if len(b) == 0 {
		return sniffMore, "", nil
	}
	if b[0] == 0x16 {
		return sniffTLSHello(b)
	}
	if looksLikeHTTP(b) {
		return sniffHTTPHost(b)
	}
	return sniffOther, "", nil
}

// looksLikeHTTP: an upper-case method token followed by a space (of what
// there is so far).
func looksLikeHTTP(b []byte) bool {
	for i, c := range b {
		switch {
		case c == ' ':
			return i > 0
		case c < 'A' || c > 'Z' || i >= 16:
			return false
		}
	}
	return true // a prefix of a method: wait
}

// sniffHTTPHost reads the Host header of a request head.
//
// A first line that is not "METHOD TARGET HTTP/1.x" is another protocol
// that happens to start with an upper-case word (SMTP's "EHLO host"): it
// is not HTTP, and it is not waited on.
func sniffHTTPHost(b []byte) (sniffKind, string, error) {
	eol := bytes.Index(b, []byte("\r\n"))
	if eol < 0 {
		if len(b) >= maxSniff {
			return sniffHTTP, "", errSniffTooLong
		}
		return sniffMore, "", nil
	}
	if f := strings.Fields(string(b[:eol])); len(f) != 3 || (f[2] != "HTTP/1.1" && f[2] != "HTTP/1.0") {
		return sniffOther, "", nil
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) >= maxSniff {
			return sniffHTTP, "", errSniffTooLong
		}
		return sniffMore, "", nil
	}
	lines := strings.Split(string(b[:end]), "\r\n")
	host := ""
	seen := false
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return sniffHTTP, "", errors.New("malformed HTTP header line")
		}
		if strings.EqualFold(strings.TrimSpace(k), "host") {
			if seen {
				// Two Host headers: servers and proxies disagree on
				// which one counts.
				return sniffHTTP, "", errors.New("more than one Host header")
			}
			seen = true
			host = strings.TrimSpace(v)
		}
	}
	return sniffHTTP, hostOnly(host), nil
}

// hostOnly strips a port (and IPv6 brackets) from a Host value.
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[1:i]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[:i], ":") {
		return h[:i]
	}
	return h
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
