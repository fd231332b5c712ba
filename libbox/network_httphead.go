package libbox

// The explicit proxy's reading of a request head (RFC 9112), in place of
// net/http's ReadRequest: net/http links crypto/tls and x509 into every
// program that embeds libbox (the runtime's binary 2.1 MB larger, the peak
// RSS of a run 1.7 MiB more, ~65 more page faults) for the one request the
// proxy reads per connection. What the proxy needs is small: the request line (CONNECT
// host:port, or an absolute http:// URL), the header fields to forward,
// and the body's framing. It is read strictly: anything net/http rejects
// is rejected, and so are the forms RFC 9112 lets a recipient refuse that
// make a proxy and the server behind it disagree on where a message ends
// (obs-fold, a bare CR, whitespace before a field's colon, Content-Length
// together with Transfer-Encoding, Transfer-Encoding in HTTP/1.0, a
// Transfer-Encoding other than chunked, differing Content-Lengths).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxProxyHead bounds a request head (the request line and the header
// fields, with their line ends); maxProxyFields the number of fields.
const (
	maxProxyHead   = 32 << 10
	maxProxyFields = 128
)

// errHeadTooLarge is a head over maxProxyHead or maxProxyFields.
var errHeadTooLarge = errors.New("request head too large")

// errBadBody marks a request body that does not match its framing (the
// client's fault, not the server's).
var errBadBody = errors.New("bad request body")

// proxyRequest is a request head read by readProxyRequest.
type proxyRequest struct {
	method string
	// target is the request-target as sent: host:port for CONNECT, an
	// absolute http:// URL otherwise.
	target string
	proto  string // "HTTP/1.0" or "HTTP/1.1"
	// For an absolute URL: its authority (host[:port]), host and port
	// (port "" when none is given) and the origin-form target to send
	// upstream (path and query, at least "/").
	authority, host, port, path string
	fields                      []headerField
	// The body: its length (-1: none given; 0 also when there is no
	// body), or chunked.
	contentLength int64
	chunked       bool
}

// headerField is one header field as received, its value trimmed.
type headerField struct{ name, value string }

// readProxyRequest reads one request head from br, and nothing after it.
func readProxyRequest(br *bufio.Reader) (*proxyRequest, error) {
	budget := maxProxyHead
	line, err := readHeadLine(br, &budget)
	if err != nil {
		return nil, err
	}
	req, err := parseRequestLine(line)
	if err != nil {
		return nil, err
	}
	req.contentLength = -1
	var sawLength, sawTE, sawHost bool
	for {
		line, err := readHeadLine(br, &budget)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if len(req.fields) == maxProxyFields {
			return nil, errHeadTooLarge
		}
		f, err := parseHeaderField(line)
		if err != nil {
			return nil, err
		}
		switch {
		case strings.EqualFold(f.name, "Host"):
			if sawHost {
				return nil, errors.New("too many Host headers")
			}
			sawHost = true
		case strings.EqualFold(f.name, "Content-Length"):
			n, err := parseContentLength(f.value)
			if err != nil {
				return nil, err
			}
			if sawLength && n != req.contentLength {
				return nil, errors.New("conflicting Content-Length headers")
			}
			sawLength, req.contentLength = true, n
		case strings.EqualFold(f.name, "Transfer-Encoding"):
			if sawTE {
				return nil, errors.New("too many Transfer-Encoding headers")
			}
			sawTE = true
			if !strings.EqualFold(f.value, "chunked") {
				return nil, fmt.Errorf("unsupported Transfer-Encoding %q", f.value)
			}
			req.chunked = true
		}
		req.fields = append(req.fields, f)
	}
	if sawTE && req.proto == "HTTP/1.0" {
		return nil, errors.New("a Transfer-Encoding in an HTTP/1.0 request")
	}
	if sawTE && sawLength {
		return nil, errors.New("both a Content-Length and a Transfer-Encoding")
	}
	return req, nil
}

// readHeadLine reads one line of a head without its line end (CRLF, or a
// bare LF as net/http takes it), charging it to budget. A CR anywhere else
// is refused (RFC 9112 2.2).
func readHeadLine(br *bufio.Reader, budget *int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		*budget -= len(chunk)
		if *budget < 0 {
			return nil, errHeadTooLarge
		}
		if err == nil || errors.Is(err, bufio.ErrBufferFull) {
			if line == nil && err == nil {
				line = chunk // the common case: no copy
			} else {
				line = append(line, chunk...)
			}
			if err == nil {
				break
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line)+len(chunk) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if bytes.IndexByte(line, '\r') >= 0 {
		return nil, errors.New("bare CR in the request head")
	}
	return line, nil
}

// parseRequestLine reads "METHOD SP request-target SP HTTP/1.x".
func parseRequestLine(line []byte) (*proxyRequest, error) {
	bad := func() (*proxyRequest, error) {
		return nil, fmt.Errorf("malformed request line %q", truncate(line))
	}
	method, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return bad()
	}
	target, proto, ok := bytes.Cut(rest, []byte{' '})
	if !ok || len(method) == 0 || len(target) == 0 || !isToken(method) {
		return bad()
	}
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return bad()
		}
	}
	req := &proxyRequest{method: string(method), target: string(target), proto: string(proto)}
	if req.proto != "HTTP/1.1" && req.proto != "HTTP/1.0" {
		return nil, fmt.Errorf("unsupported protocol version %q", truncate(proto))
	}
	if req.method == "CONNECT" {
		// host:port, checked by the caller.
		return req, nil
	}
	if err := req.parseAbsolute(); err != nil {
		return nil, err
	}
	return req, nil
}

// parseAbsolute reads an absolute http:// target (RFC 9112 3.2.2) into
// authority, host, port and path. Anything else (origin-form, another
// scheme) leaves them empty: the proxy answers that it wants an absolute
// http:// URL. userinfo and fragments are refused: a client never sends
// them, and "http://allowed@other/" is the kind of name confusion an
// allowlist must not meet.
func (r *proxyRequest) parseAbsolute() error {
	scheme, rest, ok := strings.Cut(r.target, "://")
	if !ok || !strings.EqualFold(scheme, "http") {
		return nil
	}
	if strings.ContainsAny(rest, "#\\") {
		return fmt.Errorf("malformed request target %q", truncate([]byte(r.target)))
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth, path := rest[:end], rest[end:]
	if strings.Contains(auth, "@") {
		return errors.New("a request target with userinfo")
	}
	host, port, ok := splitAuthority(auth)
	if !ok {
		return fmt.Errorf("malformed host or port in %q", truncate([]byte(r.target)))
	}
	if path == "" {
		path = "/"
	} else if path[0] == '?' {
		path = "/" + path
	}
	r.authority, r.host, r.port, r.path = auth, host, port, path
	return nil
}

// splitAuthority splits host[:port] (RFC 3986 3.2): a bracketed IPv6
// address or a host without brackets, and a port of digits ("" when none
// is given). ok is false for anything else.
func splitAuthority(auth string) (host, port string, ok bool) {
	host = auth
	if strings.HasPrefix(auth, "[") {
		i := strings.IndexByte(auth, ']')
		if i < 0 {
			return "", "", false
		}
		host, port = auth[1:i], auth[i+1:]
		if port != "" && port[0] != ':' {
			return "", "", false
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.IndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i+1:]
	}
	if host == "" || strings.ContainsAny(host, "[]") {
		return "", "", false
	}
	for _, c := range []byte(port) {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	return host, port, true
}

// parseHeaderField reads "name: value": name a token with no whitespace
// before the colon; a line starting with whitespace (obs-fold) is refused
// (RFC 9112 5.2); the value has no control character but HTAB.
func parseHeaderField(line []byte) (headerField, error) {
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok || len(name) == 0 || !isToken(name) {
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			return headerField{}, errors.New("obsolete line folding in the request head")
		}
		return headerField{}, fmt.Errorf("malformed header line %q", truncate(line))
	}
	value = bytes.Trim(value, " \t")
	for _, c := range value {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return headerField{}, fmt.Errorf("invalid value of header %q", truncate(name))
		}
	}
	return headerField{name: string(name), value: string(value)}, nil
}

// parseContentLength: decimal digits only (no sign, no list).
func parseContentLength(v string) (int64, error) {
	if v == "" || len(v) > 18 {
		return 0, fmt.Errorf("bad Content-Length %q", truncate([]byte(v)))
	}
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad Content-Length %q", truncate([]byte(v)))
		}
	}
	return strconv.ParseInt(v, 10, 64)
}

// isToken: RFC 9110 5.6.2's tchar, at least one.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c >= 0x80 || !tchar[c] {
			return false
		}
	}
	return true
}

var tchar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// truncate keeps error messages about hostile input short.
func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// writeUpstream writes the request to the server as an origin-form
// request, one per connection: the hop-by-hop fields (RFC 9110 7.6.1, and
// those the client's Connection names) dropped, Host set to the target's
// authority, Connection: close (the framing fields are kept even when
// Connection names them); then the body, exactly as framed (a
// chunked one is re-framed chunk by chunk, its trailer dropped), and
// nothing the client sent after it.
func (r *proxyRequest) writeUpstream(w io.Writer, body *bufio.Reader) error {
	drop := []string{"Host", "Connection", "Proxy-Connection", "Proxy-Authorization", "Keep-Alive", "Upgrade", "Te", "Trailer"}
	for _, f := range r.fields {
		if strings.EqualFold(f.name, "Connection") {
			for h := range strings.SplitSeq(f.value, ",") {
				// The body's framing is never dropped: the body is
				// sent as framed, and without its framing the server
				// would read it as another request.
				if h = strings.TrimSpace(h); h != "" && !strings.EqualFold(h, "Content-Length") && !strings.EqualFold(h, "Transfer-Encoding") {
					drop = append(drop, h)
				}
			}
		}
	}
	var head strings.Builder
	head.Grow(256)
	head.WriteString(r.method + " " + r.path + " HTTP/1.1\r\nHost: " + r.authority + "\r\n")
	for _, f := range r.fields {
		if !containsFold(drop, f.name) {
			head.WriteString(f.name + ": " + f.value + "\r\n")
		}
	}
	head.WriteString("Connection: close\r\n\r\n")
	bw := bufio.NewWriterSize(w, 4<<10)
	if _, err := bw.WriteString(head.String()); err != nil {
		return err
	}
	if r.chunked || r.contentLength > 0 {
		// The head goes first, on its own: a client that sent
		// "Expect: 100-continue" waits for the server's answer to it
		// before it sends the body.
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	switch {
	case r.chunked:
		if err := copyChunked(bw, body); err != nil {
			return err
		}
	case r.contentLength > 0:
		if _, err := io.CopyN(bw, body, r.contentLength); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: it ended before its Content-Length", errBadBody)
			}
			return fmt.Errorf("request body: %w", err)
		}
	}
	return bw.Flush()
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// maxChunkLine bounds a chunk-size line (with its extensions) and a
// trailer line.
const maxChunkLine = 4 << 10

// copyChunked copies a chunked body (RFC 9112 7.1) from r to w: each
// chunk's size is read strictly (hex digits; extensions dropped), its
// data and CRLF checked, the last chunk's trailer read and dropped.
func copyChunked(w *bufio.Writer, r *bufio.Reader) error {
	for {
		budget := maxChunkLine
		line, err := readHeadLine(r, &budget)
		if err != nil {
			return fmt.Errorf("%w: chunked: %w", errBadBody, err)
		}
		size, _, _ := bytes.Cut(line, []byte{';'})
		size = bytes.TrimRight(size, " \t")
		if len(size) == 0 || len(size) > 15 {
			return fmt.Errorf("%w: chunked: bad chunk size", errBadBody)
		}
		n, err := strconv.ParseUint(string(size), 16, 64)
		if err != nil {
			return fmt.Errorf("%w: chunked: bad chunk size", errBadBody)
		}
		if n == 0 {
			break
		}
		if _, err := fmt.Fprintf(w, "%x\r\n", n); err != nil {
			return err
		}
		if _, err := io.CopyN(w, r, int64(n)); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: chunked: a chunk ended early", errBadBody)
			}
			return fmt.Errorf("chunked body: %w", err)
		}
		var crlf [2]byte
		if _, err := io.ReadFull(r, crlf[:]); err != nil || crlf != [2]byte{'\r', '\n'} {
			return fmt.Errorf("%w: chunked: no CRLF after a chunk", errBadBody)
		}
		if _, err := w.WriteString("\r\n"); err != nil {
			return err
		}
	}
	// The trailer section: read to its empty line, dropped.
	budget := maxChunkLine
	for {
		line, err := readHeadLine(r, &budget)
		if err != nil {
			return fmt.Errorf("%w: chunked trailer: %w", errBadBody, err)
		}
		if len(line) == 0 {
			break
		}
	}
	_, err := w.WriteString("0\r\n\r\n")
	return err
}
