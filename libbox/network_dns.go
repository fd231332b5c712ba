package libbox

// The resolver inside an allowlisted sandbox: it answers an allowed name
// with an address of its own on the sandbox's loopback (one per name, from
// addrPool), where the relay accepts the connection and dials the real
// host from the host's side; a name the policy does not let through gets
// NXDOMAIN. Nothing else answers: the sandbox has no route to any other
// resolver. Names are never resolved here; the relay does that, on the
// host's side, at connect time.

import (
	"net/netip"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsTTL is the TTL of the resolver's answers, in seconds. The address of
// a name never changes during a sandbox's life; the policy may, and it is
// applied again at every connection, so the TTL only bounds how long a
// denied name keeps resolving in a cache inside the sandbox.
const dnsTTL = 5

// addrPool hands out one loopback address per name, from 127.1.0.1 on
// (addresses ending in .0 and .255 are skipped), for the life of the
// sandbox: an address is never given to another name.
type addrPool struct {
	mu     sync.Mutex
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
	next   uint32
	limit  int
}

// poolSize bounds the names one sandbox can resolve.
const poolSize = 16384

func newAddrPool() *addrPool {
	return &addrPool{byName: map[string]netip.Addr{}, byAddr: map[netip.Addr]string{}, limit: poolSize}
}

// addr returns name's address, allocating one; ok is false when the pool
// is exhausted.
func (p *addrPool) addr(name string) (netip.Addr, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.byName[name]; ok {
		return a, true
	}
	if len(p.byName) >= p.limit {
		return netip.Addr{}, false
	}
	for {
		p.next++
		// 127.1.0.0/16 and on: 127.1.x.y, 127.2.x.y...
		v := 0x7f010000 + p.next
		if b := byte(v); b == 0 || b == 0xff {
			continue
		}
		a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		p.byName[name] = a
		p.byAddr[a] = name
		return a, true
	}
}

// name returns the name a was given to.
func (p *addrPool) name(a netip.Addr) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.byAddr[a.Unmap()]
	return n, ok
}

// dnsOutcome is what answering one query decided, for the denial record.
type dnsOutcome struct {
	name   string
	denied bool
	// v is the verdict of a denied name; reason is set instead when the
	// query was refused for another reason (the pool is full).
	v      verdict
	reason string
}

// dnsAnswer answers the DNS query q (one message, without the TCP length
// prefix) under policy p, allocating addresses from pool. It returns nil
// for what cannot be answered at all (not a query, not even a header).
func dnsAnswer(q []byte, p *netPolicy, pool *addrPool) ([]byte, dnsOutcome) {
	var parser dnsmessage.Parser
	hdr, err := parser.Start(q)
	if err != nil || hdr.Response {
		return nil, dnsOutcome{}
	}
	resp := dnsmessage.Header{
		ID: hdr.ID, Response: true, OpCode: hdr.OpCode, Authoritative: true,
		RecursionDesired: hdr.RecursionDesired, RecursionAvailable: true,
	}
	fail := func(code dnsmessage.RCode, qs ...dnsmessage.Question) []byte {
		resp.RCode = code
		b := dnsmessage.NewBuilder(nil, resp)
		b.EnableCompression()
		if len(qs) > 0 && b.StartQuestions() == nil {
			_ = b.Question(qs[0])
		}
		out, err := b.Finish()
		if err != nil {
			return nil
		}
		return out
	}
	if hdr.OpCode != 0 {
		return fail(dnsmessage.RCodeNotImplemented), dnsOutcome{}
	}
	qs, err := parser.AllQuestions()
	if err != nil || len(qs) != 1 {
		return fail(dnsmessage.RCodeFormatError), dnsOutcome{}
	}
	qq := qs[0]
	if qq.Class != dnsmessage.ClassINET {
		return fail(dnsmessage.RCodeRefused, qq), dnsOutcome{}
	}
	raw := qq.Name.String()
	name, ok := normalizeName(raw)
	out := dnsOutcome{name: name}
	if !ok {
		out.name = raw
		out.denied, out.reason = true, "not a domain name"
		return fail(dnsmessage.RCodeNameError, qq), out
	}
	var addr4, addr6 netip.Addr
	switch {
	case name == "localhost" || len(name) > len(".localhost") && name[len(name)-len(".localhost"):] == ".localhost":
		// RFC 6761: localhost is loopback, and never leaves the host.
		addr4, addr6 = netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()
	default:
		v := p.resolvable(name)
		if !v.allowed {
			out.denied, out.v = true, v
			return fail(dnsmessage.RCodeNameError, qq), out
		}
		a, ok := pool.addr(name)
		if !ok {
			out.denied, out.reason = true, "the resolver's address pool is exhausted"
			return fail(dnsmessage.RCodeServerFailure, qq), out
		}
		// No AAAA: the relay's addresses are IPv4 loopback ones; an
		// empty answer (NODATA) makes clients use the A record.
		addr4 = a
	}
	resp.RCode = dnsmessage.RCodeSuccess
	b := dnsmessage.NewBuilder(nil, resp)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(qq) != nil || b.StartAnswers() != nil {
		return nil, out
	}
	rh := dnsmessage.ResourceHeader{Name: qq.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
	switch {
	case qq.Type == dnsmessage.TypeA && addr4.IsValid():
		if b.AResource(rh, dnsmessage.AResource{A: addr4.As4()}) != nil {
			return nil, out
		}
	case qq.Type == dnsmessage.TypeAAAA && addr6.IsValid():
		if b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: addr6.As16()}) != nil {
			return nil, out
		}
	}
	msg, err := b.Finish()
	if err != nil {
		return nil, out
	}
	return msg, out
}
