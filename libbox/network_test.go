package libbox

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func mustPolicy(t *testing.T, allow, deny []string) *netPolicy {
	t.Helper()
	p, err := compileNetwork(Network{Mode: NetworkAllowlist, Allow: allow, Deny: deny})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNetRuleMatcher(t *testing.T) {
	p := mustPolicy(t,
		[]string{"api.example.com", "*.cdn.example.com", "db.example.com:5432", "Upper.Example.ORG."},
		[]string{"evil.cdn.example.com", "api.example.com:80"})
	for _, tc := range []struct {
		name    string
		port    uint16
		allowed bool
		rule    string
	}{
		{"api.example.com", 443, true, "allow api.example.com"},
		{"api.example.com", 80, false, "deny api.example.com:80"}, // deny wins, per port
		{"api.example.com", 8080, false, ""},                      // default ports only
		{"x.cdn.example.com", 443, true, "allow *.cdn.example.com"},
		{"a.b.cdn.example.com", 80, true, "allow *.cdn.example.com"},
		{"cdn.example.com", 443, false, ""}, // a wildcard does not match its own domain
		{"evil.cdn.example.com", 443, false, "deny evil.cdn.example.com"},
		{"evil.cdn.example.com", 5432, false, "deny evil.cdn.example.com"}, // no port: every port
		{"db.example.com", 5432, true, "allow db.example.com:5432"},
		{"db.example.com", 443, false, ""},
		{"upper.example.org", 443, true, "allow Upper.Example.ORG."},
		{"example.com", 443, false, ""},
		{"xapi.example.com", 443, false, ""},
		{"notcdn.example.com", 443, false, ""},
	} {
		v := p.decide(tc.name, tc.port)
		if v.allowed != tc.allowed || v.rule != tc.rule {
			t.Errorf("decide(%s, %d) = %+v, want allowed=%v rule=%q", tc.name, tc.port, v, tc.allowed, tc.rule)
		}
	}
	if v := p.resolvable("api.example.com"); !v.allowed {
		t.Errorf("api.example.com: %+v, want resolvable (443 is allowed)", v)
	}
	if v := p.resolvable("evil.cdn.example.com"); v.allowed || v.rule != "deny evil.cdn.example.com" {
		t.Errorf("evil.cdn.example.com: %+v, want denied by its rule", v)
	}
	if v := p.resolvable("other.test"); v.allowed || v.rule != "" {
		t.Errorf("other.test: %+v, want no rule", v)
	}
	if got := p.ports(); len(got) != 3 || got[0] != 80 || got[1] != 443 || got[2] != 5432 {
		t.Errorf("ports = %v", got)
	}
	if got := p.listenPorts(); len(got) != 5 || got[0] != 53 || got[3] != 3128 {
		t.Errorf("listenPorts = %v", got)
	}
	any := mustPolicy(t, []string{"*:8443"}, []string{"*.internal"})
	if !any.decide("anything.test", 8443).allowed || any.decide("anything.test", 443).allowed || any.decide("x.internal", 8443).allowed {
		t.Error(`"*:8443" with deny "*.internal" decided wrongly`)
	}
}

func TestNetRuleErrors(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{"", "empty"},
		{"a..b", "not a domain"},
		{"exa mple.com", "not a domain"},
		{"example.com:0", "not a TCP port"},
		{"example.com:99999", "not a TCP port"},
		{"example.com:http", "not a TCP port"},
		{"10.0.0.1", "not addresses"},
		{"[::1]:443", "not addresses"},
		{"*.", "empty"},
		{strings.Repeat("a", 64) + ".com", "longer than 63"},
	} {
		_, err := compileNetwork(Network{Mode: NetworkAllowlist, Allow: []string{tc.rule}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "network.allow[0]") {
			t.Errorf("rule %q: error %v, want one naming network.allow[0] and saying %q", tc.rule, err, tc.want)
		}
	}
	_, err := compileNetwork(Network{Mode: NetworkAllowlist, Hosts: map[string]string{"a.test": "not-an-ip"}})
	if err == nil || !strings.Contains(err.Error(), "network.hosts[a.test]") {
		t.Errorf("bad hosts entry: %v", err)
	}
	var many []string
	for i := 1; i <= maxNetPorts+1; i++ {
		many = append(many, "a.test:"+strconv.Itoa(10000+i))
	}
	if _, err := compileNetwork(Network{Mode: NetworkAllowlist, Allow: many}); err == nil || !strings.Contains(err.Error(), "ports") {
		t.Errorf("%d ports: %v, want an error", len(many), err)
	}
	o := Options{Network: Network{Mode: NetworkNone, AllowPrivateTargets: true}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "need mode allowlist") {
		t.Errorf("allowPrivateTargets in mode none: %v", err)
	}
}

func TestTargetRefusal(t *testing.T) {
	host := []netip.Addr{netip.MustParseAddr("203.0.113.7")}
	for _, tc := range []struct {
		addr, want string
	}{
		{"127.0.0.1", "loopback"},
		{"::1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"100.100.100.200", "shared"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "reserved"},
		{"224.0.0.1", "multicast"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:127.0.0.1", "loopback"},
		{"2002:a00:1::", "reserved"},
		{"64:ff9b::a00:1", "reserved"},
		{"::a00:1", "reserved"},
		{"::ffff:0:a00:1", "reserved"},
		{"::ffff:0:7f00:1", "reserved"},
		{"203.0.113.7", "this host"},
		{"93.184.216.34", ""},
		{"2606:4700::1111", ""},
	} {
		got := targetRefusal(netip.MustParseAddr(tc.addr), false, host)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.addr, got, tc.want)
		}
	}
	if got := targetRefusal(netip.MustParseAddr("127.0.0.1"), true, nil); got != "" {
		t.Errorf("127.0.0.1 with private targets allowed: %q", got)
	}
	if got := targetRefusal(netip.MustParseAddr("0.0.0.0"), true, nil); got == "" {
		t.Error("0.0.0.0 must be refused even with private targets allowed")
	}
}

func dnsQuery(t testing.TB, name string, typ dnsmessage.Type) []byte {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 42, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	q, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestDNSAnswers(t *testing.T) {
	p := mustPolicy(t, []string{"api.example.com", "*.cdn.example.com"}, []string{"bad.cdn.example.com"})
	pool := newAddrPool()
	parse := func(b []byte) dnsmessage.Message {
		t.Helper()
		var m dnsmessage.Message
		if err := m.Unpack(b); err != nil {
			t.Fatalf("answer does not parse: %v", err)
		}
		if m.ID != 42 || !m.Response || len(m.Questions) != 1 {
			t.Fatalf("answer header %+v", m.Header)
		}
		return m
	}
	resp, out := dnsAnswer(dnsQuery(t, "API.example.com.", dnsmessage.TypeA), p, pool)
	m := parse(resp)
	if out.denied || m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 1 {
		t.Fatalf("allowed name: %+v %+v", m.Header, out)
	}
	a := netip.AddrFrom4(m.Answers[0].Body.(*dnsmessage.AResource).A)
	if !netip.MustParsePrefix("127.0.0.0/8").Contains(a) || a == netip.MustParseAddr("127.0.0.1") {
		t.Errorf("address %s is not one of the relay's loopback addresses", a)
	}
	if n, ok := pool.name(a); !ok || n != "api.example.com" {
		t.Errorf("pool maps %s to %q", a, n)
	}
	// The same name gets the same address; another name another one.
	resp, _ = dnsAnswer(dnsQuery(t, "api.example.com.", dnsmessage.TypeA), p, pool)
	if b := parse(resp).Answers[0].Body.(*dnsmessage.AResource).A; netip.AddrFrom4(b) != a {
		t.Error("the same name got another address")
	}
	resp, _ = dnsAnswer(dnsQuery(t, "x.cdn.example.com.", dnsmessage.TypeA), p, pool)
	if b := parse(resp).Answers[0].Body.(*dnsmessage.AResource).A; netip.AddrFrom4(b) == a {
		t.Error("two names share an address")
	}
	// AAAA of an allowed name: NODATA.
	resp, out = dnsAnswer(dnsQuery(t, "api.example.com.", dnsmessage.TypeAAAA), p, pool)
	if m := parse(resp); m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 0 || out.denied {
		t.Errorf("AAAA: %+v, %d answers", m.Header, len(m.Answers))
	}
	for _, name := range []string{"other.test.", "bad.cdn.example.com.", "cdn.example.com."} {
		resp, out = dnsAnswer(dnsQuery(t, name, dnsmessage.TypeA), p, pool)
		if m := parse(resp); m.RCode != dnsmessage.RCodeNameError || len(m.Answers) != 0 || !out.denied {
			t.Errorf("%s: %+v denied=%v, want NXDOMAIN", name, m.Header, out.denied)
		}
	}
	if _, out = dnsAnswer(dnsQuery(t, "bad.cdn.example.com.", dnsmessage.TypeA), p, pool); out.v.rule != "deny bad.cdn.example.com" {
		t.Errorf("denial names rule %q", out.v.rule)
	}
	resp, _ = dnsAnswer(dnsQuery(t, "localhost.", dnsmessage.TypeA), p, pool)
	if m := parse(resp); len(m.Answers) != 1 || netip.AddrFrom4(m.Answers[0].Body.(*dnsmessage.AResource).A) != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("localhost: %+v", m)
	}
	if resp, _ := dnsAnswer([]byte{1, 2, 3}, p, pool); resp != nil {
		t.Error("garbage got an answer")
	}
	// A full pool fails the query instead of reusing an address.
	small := newAddrPool()
	small.limit = 1
	dnsAnswer(dnsQuery(t, "api.example.com.", dnsmessage.TypeA), p, small)
	resp, out = dnsAnswer(dnsQuery(t, "y.cdn.example.com.", dnsmessage.TypeA), p, small)
	if m := parse(resp); m.RCode != dnsmessage.RCodeServerFailure || !out.denied {
		t.Errorf("full pool: %+v", m.Header)
	}
}

func TestAddrPoolSkipsNetworkAndBroadcast(t *testing.T) {
	pool := newAddrPool()
	seen := map[netip.Addr]bool{}
	for i := 0; i < 600; i++ {
		a, ok := pool.addr("n" + strconv.Itoa(i) + ".test")
		if !ok {
			t.Fatal("pool exhausted early")
		}
		b := a.As4()
		if b[3] == 0 || b[3] == 255 || b[0] != 127 || seen[a] {
			t.Fatalf("bad or repeated address %s", a)
		}
		seen[a] = true
	}
}

// clientHello captures the first flight of a real TLS client.
func clientHello(t testing.TB, serverName string) []byte {
	c1, c2 := net.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tc := tls.Client(c1, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		_ = tc.Handshake()
	}()
	buf := make([]byte, 64<<10)
	n, err := c2.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
	c1.Close()
	wg.Wait()
	return buf[:n]
}

func TestSniffTLS(t *testing.T) {
	hello := clientHello(t, "api.example.com")
	for i := 0; i < len(hello); i++ {
		if k, _, err := sniff(hello[:i]); k != sniffMore || err != nil {
			t.Fatalf("prefix of %d bytes: kind %v err %v, want more", i, k, err)
		}
	}
	k, name, err := sniff(hello)
	if k != sniffTLS || name != "api.example.com" || err != nil {
		t.Fatalf("sniff = %v %q %v", k, name, err)
	}
	// No SNI (an IP address as the server name sends none).
	k, name, err = sniff(clientHello(t, "127.0.0.1"))
	if k != sniffTLS || name != "" || err != nil {
		t.Fatalf("no SNI: %v %q %v", k, name, err)
	}
	bad := append([]byte{}, hello...)
	bad[5] = 2 // not a ClientHello
	if k, _, err := sniff(bad); k != sniffTLS || err == nil {
		t.Errorf("ServerHello type: %v %v", k, err)
	}
}

func TestSniffHTTP(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind sniffKind
	}{
		{"GET / HTTP/1.1\r\nHost: api.example.com\r\nAccept: */*\r\n\r\n", sniffHTTP},
		{"POST /x HTTP/1.0\r\nhost: API.example.com:8080\r\n\r\nbody", sniffHTTP},
		{"GET / HTTP/1.1\r\n", sniffHTTP},
		{"GET / HTTP/1.1", sniffMore},
		{"GE", sniffMore},
		{"", sniffMore},
		{"\r\n\r\n", sniffMore},
		// What a lenient server would still take for a request: each is
		// read by the relay (and refused there when it is not a strict
		// HTTP/1.x request), never passed on unread.
		{"get / HTTP/1.1\r\n", sniffHTTP},
		{"\r\nGET / HTTP/1.1\r\n", sniffHTTP},
		{"GET / HTTP/1.1\nHost: evil.test\n\n", sniffHTTP},
		{"GET / HTTP/1.2\r\n", sniffHTTP},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", sniffHTTP},
		{"GET\t/\tHTTP/1.1\r\n", sniffHTTP},
		{"GET / http/1.1\r\n", sniffHTTP},
		{strings.Repeat("M", 40) + " / HTTP/1.1\r\n", sniffHTTP},
		// Other protocols.
		{"EHLO mail.example.com\r\n", sniffOther},
		{"SSH-2.0-OpenSSH_9.2\r\n", sniffOther},
		{"*1\r\n$4\r\nPING\r\n", sniffOther},
		{"PING\r\n", sniffOther},
		{"\x00\x00\x00\x08\x04\xd2\x16\x2f", sniffOther},
	} {
		k, host, err := sniff([]byte(tc.in))
		if k != tc.kind || host != "" || err != nil {
			t.Errorf("%q: %v %q %v, want %v", tc.in, k, host, err, tc.kind)
		}
	}
	// A first word that never ends, or a request line that never does:
	// undecided, which the relay refuses once it has read maxSniff bytes.
	for _, long := range []string{strings.Repeat("A", maxSniff), "GET /" + strings.Repeat("a", maxSniff)} {
		if k, _, _ := sniff([]byte(long)); k != sniffMore {
			t.Errorf("over-long first line: %v", k)
		}
	}
}

// TestReadRelayedRequest: a plain-HTTP request on a connection to
// allowed.test's address goes on only when everything in it that can name
// a site names allowed.test (the domain-fronting bypasses a hostile
// program tried: an absolute URL, a Host that is not a host, HTTP/2's
// preface, other versions, CONNECT), and goes on as one request with
// Connection: close.
func TestReadRelayedRequest(t *testing.T) {
	for _, tc := range []struct {
		in       string
		port     uint16
		want     string // the head sent upstream ("" for refused)
		asked    string // for a refusal: the name reported
		leftover string // what writeUpstream leaves unread
	}{
		{in: "GET /a HTTP/1.1\r\nHost: allowed.test\r\nAccept: */*\r\n\r\n", port: 80,
			want: "GET /a HTTP/1.1\r\nHost: allowed.test\r\nAccept: */*\r\nConnection: close\r\n\r\n"},
		{in: "GET /a HTTP/1.1\r\nHost: ALLOWED.test.:8080\r\n\r\n", port: 8080,
			want: "GET /a HTTP/1.1\r\nHost: ALLOWED.test.:8080\r\nConnection: close\r\n\r\n"},
		{in: "\r\nGET / HTTP/1.0\r\n\r\n", port: 8080,
			want: "GET / HTTP/1.1\r\nHost: allowed.test:8080\r\nConnection: close\r\n\r\n"},
		{in: "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n", port: 80,
			want: "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"},
		{in: "GET http://allowed.test/x?q HTTP/1.1\r\nHost: allowed.test\r\n\r\n", port: 80,
			want: "GET /x?q HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"},
		// Pipelined and kept-alive requests: only the first goes on.
		{in: "GET /1 HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n", port: 80,
			want:     "GET /1 HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
			leftover: "GET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n"},
		{in: "POST /1 HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabcGET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n", port: 80,
			want:     "POST /1 HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
			leftover: "GET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n"},
		{in: "GET / HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", port: 80,
			want: "GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"},
		// Refused.
		{in: "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", port: 80, asked: "evil.test"},
		{in: "get / HTTP/1.1\r\nHost: evil.test\r\n\r\n", port: 80, asked: "evil.test"},
		{in: "GET / HTTP/1.1\nHost: evil.test\n\n", port: 80, asked: "evil.test"},
		{in: "GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", port: 80, asked: "evil.test"},
		{in: "GET http://evil.test/ HTTP/1.1\r\n\r\n", port: 80, asked: "evil.test"},
		{in: "GET https://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", port: 80, asked: "allowed.test"},
		{in: "GET http://198.51.100.3/ HTTP/1.1\r\n\r\n", port: 80, asked: "198.51.100.3"},
		{in: "GET / HTTP/1.1\r\nHost: 198.51.100.3\r\n\r\n", port: 80, asked: "198.51.100.3"},
		{in: "GET / HTTP/1.1\r\nHost: allowed.test@evil.test\r\n\r\n", port: 80, asked: "allowed.test@evil.test"},
		{in: "GET / HTTP/1.1\r\nHost: allowed.test:80x\r\n\r\n", port: 80, asked: "allowed.test:80x"},
		{in: "GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: evil.test\r\n\r\n", port: 80, asked: "allowed.test"},
		{in: "GET / HTTP/1.2\r\nHost: allowed.test\r\n\r\n", port: 80, asked: "allowed.test"},
		{in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", port: 80, asked: "allowed.test"},
		{in: "GET\t/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", port: 80, asked: "allowed.test"},
		{in: "CONNECT evil.test:443 HTTP/1.1\r\nHost: allowed.test\r\n\r\n", port: 80, asked: "allowed.test"},
		{in: "GET / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", port: 80, asked: "allowed.test"},
	} {
		br := bufio.NewReader(strings.NewReader(tc.in))
		req, asked, reason := readRelayedRequest(br, "allowed.test", tc.port)
		if tc.want == "" {
			if reason == "" || asked != tc.asked {
				t.Errorf("%q: asked %q, reason %q; want refused, asked %q", tc.in, asked, reason, tc.asked)
			}
			continue
		}
		if reason != "" {
			t.Errorf("%q: refused: %s", tc.in, reason)
			continue
		}
		var out bytes.Buffer
		if err := req.writeUpstream(&out, br); err != nil {
			t.Errorf("%q: writeUpstream: %v", tc.in, err)
			continue
		}
		if out.String() != tc.want {
			t.Errorf("%q: sent %q, want %q", tc.in, out.String(), tc.want)
		}
		rest, _ := io.ReadAll(br)
		if string(rest) != tc.leftover {
			t.Errorf("%q: left %q unsent, want %q", tc.in, rest, tc.leftover)
		}
	}
}

func FuzzSniff(f *testing.F) {
	f.Add(clientHello(f, "api.example.com"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	f.Add([]byte{0x16, 3, 1, 0, 4, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, name, err := sniff(b)
		if k == sniffMore && err != nil {
			t.Fatal("more with an error")
		}
		if len(name) > len(b) {
			t.Fatal("name longer than the input")
		}
		// Deciding never changes with more data once decided, except
		// from "more".
		if k != sniffMore {
			k2, name2, _ := sniff(append(append([]byte{}, b...), 'x'))
			if k2 != k && !(k == sniffHTTP && err == nil) {
				t.Fatalf("kind %v became %v with one more byte", k, k2)
			}
			if k == sniffTLS && err == nil && name2 != name {
				t.Fatalf("SNI %q became %q with a trailing byte", name, name2)
			}
		}
	})
}

func FuzzDNSAnswer(f *testing.F) {
	f.Add(dnsQuery(f, "api.example.com.", dnsmessage.TypeA))
	f.Add(dnsQuery(f, "other.test.", dnsmessage.TypeAAAA))
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	p, err := compileNetwork(Network{Mode: NetworkAllowlist, Allow: []string{"api.example.com", "*.example.org"}, Deny: []string{"x.example.org"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		pool := newAddrPool()
		resp, out := dnsAnswer(q, p, pool)
		if resp == nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(resp); err != nil {
			t.Fatalf("answer does not parse: %v", err)
		}
		for _, a := range m.Answers {
			if r, ok := a.Body.(*dnsmessage.AResource); ok {
				addr := netip.AddrFrom4(r.A)
				if !netip.MustParsePrefix("127.0.0.0/8").Contains(addr) {
					t.Fatalf("answered a non-loopback address %s", addr)
				}
				if n, ok := pool.name(addr); ok && !p.resolvable(n).allowed {
					t.Fatalf("answered %s, which the policy denies", n)
				}
			}
		}
		if m.RCode == dnsmessage.RCodeSuccess && len(m.Answers) > 0 && out.denied {
			t.Fatal("answered a denied query")
		}
	})
}

func FuzzNetRule(f *testing.F) {
	for _, s := range []string{"api.example.com", "*.example.com:8443", "*", "a_b.test:1", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseNetRule(s, false)
		if err != nil {
			return
		}
		if r.name == "" && !r.any {
			t.Fatalf("rule %q parsed with no name", s)
		}
		if len(r.ports) == 0 {
			t.Fatalf("allow rule %q parsed with no port", s)
		}
		if !r.any && !r.wildcard && !r.matchName(r.name) {
			t.Fatalf("rule %q does not match its own name", s)
		}
	})
}
