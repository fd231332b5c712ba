package libbox

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func readHead(s string) (*proxyRequest, error) {
	return readProxyRequest(bufio.NewReaderSize(strings.NewReader(s), 8<<10))
}

func TestReadProxyRequest(t *testing.T) {
	req, err := readHead("GET http://Web.Test:8080/a/b?q=1 HTTP/1.1\r\nHost: ignored\r\nUser-Agent: curl\r\nX-A:  v  \r\n\r\nrest")
	if err != nil {
		t.Fatal(err)
	}
	if req.method != "GET" || req.authority != "Web.Test:8080" || req.host != "Web.Test" || req.port != "8080" || req.path != "/a/b?q=1" || req.proto != "HTTP/1.1" {
		t.Errorf("parsed %+v", req)
	}
	if len(req.fields) != 3 || req.fields[2] != (headerField{"X-A", "v"}) {
		t.Errorf("fields %q", req.fields)
	}
	for in, want := range map[string][3]string{
		"GET http://a.test HTTP/1.1\n\n":               {"a.test", "", "/"},
		"GET HTTP://a.test?x HTTP/1.0\r\n\r\n":         {"a.test", "", "/?x"},
		"GET http://a.test:/p HTTP/1.1\r\n\r\n":        {"a.test", "", "/p"},
		"GET http://[::1]:80/ HTTP/1.1\r\n\r\n":        {"::1", "80", "/"},
		"POST http://a.test/ HTTP/1.1\r\n\r\n":         {"a.test", "", "/"},
		"GET /origin-form HTTP/1.1\r\nHost: a\r\n\r\n": {"", "", ""},
		"GET https://a.test/ HTTP/1.1\r\n\r\n":         {"", "", ""},
	} {
		req, err := readHead(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := [3]string{req.host, req.port, req.path}; got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	req, err = readHead("CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\n\r\n\x16\x03\x01")
	if err != nil || req.method != "CONNECT" || req.target != "api.test:443" {
		t.Errorf("CONNECT: %+v, %v", req, err)
	}
	req, err = readHead("POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\nhello")
	if err != nil || req.contentLength != 5 || req.chunked {
		t.Errorf("repeated equal Content-Length: %+v, %v", req, err)
	}
	req, err = readHead("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n")
	if err != nil || !req.chunked || req.contentLength != -1 {
		t.Errorf("chunked: %+v, %v", req, err)
	}
}

// TestReadProxyRequestHostile: malformed and smuggling heads are refused.
func TestReadProxyRequestHostile(t *testing.T) {
	big := strings.Repeat("a", maxProxyHead)
	var many strings.Builder
	for range maxProxyFields + 1 {
		many.WriteString("X: y\r\n")
	}
	for name, in := range map[string]string{
		"empty":                      "",
		"no end of head":             "GET http://a.test/ HTTP/1.1\r\nHost: a\r\n",
		"no request line end":        "GET http://a.test/ HTTP/1.1",
		"two spaces":                 "GET  http://a.test/ HTTP/1.1\r\n\r\n",
		"space in target":            "GET http://a.test/a b HTTP/1.1\r\n\r\n",
		"no version":                 "GET http://a.test/\r\n\r\n",
		"HTTP/2":                     "GET http://a.test/ HTTP/2.0\r\n\r\n",
		"HTTP/1.1 lower":             "GET http://a.test/ http/1.1\r\n\r\n",
		"trailing space":             "GET http://a.test/ HTTP/1.1 \r\n\r\n",
		"bad method":                 "G(T http://a.test/ HTTP/1.1\r\n\r\n",
		"control in target":          "GET http://a.test/\x01 HTTP/1.1\r\n\r\n",
		"non-ASCII in target":        "GET http://a.test/\xc3\xa9 HTTP/1.1\r\n\r\n",
		"bare CR":                    "GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
		"bare CR ending":             "GET http://a.test/ HTTP/1.1\r\nX: a\r\r\n\r\n",
		"obs-fold":                   "GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
		"leading space":              "GET http://a.test/ HTTP/1.1\r\n X: a\r\n\r\n",
		"space before colon":         "GET http://a.test/ HTTP/1.1\r\nHost : a\r\n\r\n",
		"no colon":                   "GET http://a.test/ HTTP/1.1\r\nHost\r\n\r\n",
		"empty name":                 "GET http://a.test/ HTTP/1.1\r\n: a\r\n\r\n",
		"bad name":                   "GET http://a.test/ HTTP/1.1\r\nX(y): a\r\n\r\n",
		"NUL in value":               "GET http://a.test/ HTTP/1.1\r\nX: a\x00b\r\n\r\n",
		"two Host":                   "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",
		"conflicting Content-Length": "POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"Content-Length list":        "POST http://a.test/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
		"signed Content-Length":      "POST http://a.test/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
		"huge Content-Length":        "POST http://a.test/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
		"empty Content-Length":       "POST http://a.test/ HTTP/1.1\r\nContent-Length:\r\n\r\n",
		"CL and TE":                  "POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"TE and CL":                  "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
		"two TE":                     "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		"TE gzip, chunked":           "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"TE identity":                "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
		"TE in HTTP/1.0":             "POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		"userinfo":                   "GET http://allowed.test@evil.test/ HTTP/1.1\r\n\r\n",
		"fragment":                   "GET http://a.test/#x HTTP/1.1\r\n\r\n",
		"backslash":                  "GET http://a.test\\@evil.test/ HTTP/1.1\r\n\r\n",
		"empty host":                 "GET http:///p HTTP/1.1\r\n\r\n",
		"letters in port":            "GET http://a.test:8o/ HTTP/1.1\r\n\r\n",
		"unclosed bracket":           "GET http://[::1/ HTTP/1.1\r\n\r\n",
		"junk after bracket":         "GET http://[::1]x/ HTTP/1.1\r\n\r\n",
		"oversized line":             "GET http://a.test/" + big + " HTTP/1.1\r\n\r\n",
		"oversized head":             "GET http://a.test/ HTTP/1.1\r\nX: " + big + "\r\n\r\n",
		"too many fields":            "GET http://a.test/ HTTP/1.1\r\n" + many.String() + "\r\n",
	} {
		if req, err := readHead(in); err == nil {
			t.Errorf("%s: accepted: %+v", name, req)
		}
	}
	if _, err := readHead("GET http://a.test/" + big + " HTTP/1.1\r\n\r\n"); !errors.Is(err, errHeadTooLarge) {
		t.Errorf("oversized: %v", err)
	}
}

func TestProxyRequestWriteUpstream(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{{
		"hop-by-hop dropped, Host from the URL",
		"GET http://a.test:81/p?q HTTP/1.1\r\nHost: other\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic x\r\nKeep-Alive: 5\r\nUpgrade: h2c\r\nTE: trailers\r\nTrailer: X\r\nAccept: */*\r\n\r\nNEXT REQUEST",
		"GET /p?q HTTP/1.1\r\nHost: a.test:81\r\nAccept: */*\r\nConnection: close\r\n\r\n",
	}, {
		"exactly Content-Length bytes of body",
		"POST http://a.test/ HTTP/1.0\r\nContent-Length: 5\r\n\r\nhelloGET http://a.test/smuggled HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
	}, {
		"chunked re-framed, extension and trailer dropped, nothing after",
		"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n00A\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\na\r\n0123456789\r\n0\r\n\r\n",
	}, {
		"Connection cannot drop the framing",
		"POST http://a.test/ HTTP/1.1\r\nConnection: Content-Length\r\nContent-Length: 3\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
	}, {
		"Connection cannot drop chunked",
		"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: transfer-encoding\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n",
	}} {
		br := bufio.NewReader(strings.NewReader(tc.in))
		req, err := readProxyRequest(br)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var out bytes.Buffer
		if err := req.writeUpstream(&out, br); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if out.String() != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, out.String(), tc.want)
		}
	}
	for name, body := range map[string]string{
		"short body":           "Content-Length: 10\r\n\r\nhello",
		"bad chunk size":       "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
		"signed chunk size":    "Transfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
		"0x chunk size":        "Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
		"huge chunk size":      "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nhello\r\n0\r\n\r\n",
		"chunk longer":         "Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
		"no CRLF after chunk":  "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n",
		"no last chunk":        "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		"unterminated trailer": "Transfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n",
	} {
		br := bufio.NewReader(strings.NewReader("POST http://a.test/ HTTP/1.1\r\n" + body))
		req, err := readProxyRequest(br)
		if err != nil {
			t.Fatalf("%s: head: %v", name, err)
		}
		if err := req.writeUpstream(&bytes.Buffer{}, br); !errors.Is(err, errBadBody) {
			t.Errorf("%s: %v, want a bad body", name, err)
		}
	}
}

func FuzzProxyRequest(f *testing.F) {
	f.Add([]byte("GET http://a.test:8080/p?q HTTP/1.1\r\nHost: a\r\nConnection: x\r\nX: y\r\n\r\n"))
	f.Add([]byte("CONNECT a.test:443 HTTP/1.1\r\n\r\n"))
	f.Add([]byte("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte("POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		br := bufio.NewReader(bytes.NewReader(b))
		req, err := readProxyRequest(br)
		if err != nil {
			return
		}
		if req.chunked && req.contentLength != -1 {
			t.Fatal("both chunked and a length")
		}
		if req.authority != "" && (req.host == "" || !strings.HasPrefix(req.path, "/")) {
			t.Fatalf("absolute target with host %q path %q", req.host, req.path)
		}
		var out bytes.Buffer
		if err := req.writeUpstream(&out, br); err != nil {
			return
		}
		if req.method == "CONNECT" || req.authority == "" {
			return
		}
		// What goes upstream is one well-formed request that reads back
		// the same, and nothing after it.
		obr := bufio.NewReader(bytes.NewReader(out.Bytes()))
		again, err := readProxyRequest(obr)
		if err != nil {
			t.Fatalf("upstream request unreadable: %v\n%q", err, out.Bytes())
		}
		if again.method != req.method || again.chunked != req.chunked || again.contentLength != req.contentLength {
			t.Fatalf("upstream request differs: %+v vs %+v", again, req)
		}
		var body bytes.Buffer
		again.authority, again.path = "a", "/"
		if err := again.writeUpstream(&body, obr); err != nil {
			t.Fatalf("upstream body unreadable: %v\n%q", err, out.Bytes())
		}
		if obr.Buffered() != 0 {
			t.Fatalf("bytes after the upstream request: %q", out.Bytes())
		}
	})
}
