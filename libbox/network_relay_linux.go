package libbox

// The relay of an allowlisted sandbox: it accepts on listening sockets that
// live in the sandbox's network namespace (made there by init, or by a
// helper that joined it; network_linux.go) and dials from the network
// namespace of the process it runs in, the host's. Its listeners:
//
//	UDP 127.0.0.53:53        the resolver (network_dns.go)
//	TCP 0.0.0.0:PORT         for 53 (DNS over TCP on 127.0.0.53), 3128 (the
//	                         explicit proxy on 127.0.0.1) and every port of
//	                         the allow rules; a connection's local address
//	                         says which it is for: the resolver's, the
//	                         proxy's, or an address the resolver gave a
//	                         name (transparent relay of that name)
//
// It runs in the program that called Run (goroutines, no process of its
// own), or for containers made by create in a supervisor process
// (network_linux.go). Every decision is taken per connection, with the
// policy in force at that moment.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// dialTimeout bounds a connection to an allowed host.
const dialTimeout = 15 * time.Second

// netRelay serves one sandbox's listeners.
type netRelay struct {
	policy atomic.Pointer[netPolicy]
	pool   *addrPool
	rec    *netRecorder
	// lookup resolves a name on the host's side.
	lookup func(ctx context.Context, name string) ([]netip.Addr, error)
	// ns are the sandbox's namespaces, for listeners on new ports.
	ns *netNamespaces

	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	tcp    map[uint16]*net.TCPListener
	udp    *net.UDPConn
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	// setMu serialises policy changes.
	setMu sync.Mutex

	// hostAddrs reads the host's own addresses, at each connection: an
	// address the host gains while a long-lived sandbox runs is refused
	// as well.
	hostAddrs func() ([]netip.Addr, error)
}

// newNetRelay takes over the listeners in files (closing them, whatever
// happens) and starts serving them with policy p.
func newNetRelay(p *netPolicy, files *netFiles, onDenied func(Denial)) (*netRelay, error) {
	r := &netRelay{
		pool:  newAddrPool(),
		rec:   &netRecorder{onDenied: onDenied, conns: map[string]int{}},
		tcp:   map[uint16]*net.TCPListener{},
		conns: map[net.Conn]struct{}{},
		ns:    files.ns,
		lookup: func(ctx context.Context, name string) ([]netip.Addr, error) {
			// Fully qualified: the host's search domains must not turn
			// a name the policy allowed into one it did not
			// (internal.allowed.example.corp.test).
			return net.DefaultResolver.LookupNetIP(ctx, "ip", name+".")
		},
		hostAddrs: hostAddresses,
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.policy.Store(p)
	files.ns = nil
	err := r.adopt(files)
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// adopt wraps listening sockets in files and serves them.
func (r *netRelay) adopt(files *netFiles) error {
	defer files.close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("network relay: closed")
	}
	if files.udp != nil {
		pc, err := net.FilePacketConn(files.udp)
		if err != nil {
			return fmt.Errorf("network relay: resolver socket: %w", err)
		}
		r.udp = pc.(*net.UDPConn)
		r.wg.Add(1)
		go r.serveDNSUDP(r.udp)
	}
	for i, f := range files.tcp {
		port := files.ports[i]
		if _, ok := r.tcp[port]; ok {
			continue
		}
		l, err := net.FileListener(f)
		if err != nil {
			return fmt.Errorf("network relay: listener on port %d: %w", port, err)
		}
		tl := l.(*net.TCPListener)
		r.tcp[port] = tl
		r.wg.Add(1)
		go r.acceptLoop(tl)
	}
	return nil
}

// ports are the TCP ports listened on.
func (r *netRelay) ports() []uint16 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ports []uint16
	for p := range r.tcp {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	return ports
}

// setPolicy makes p the policy for new connections and queries, first
// listening on the ports it adds.
func (r *netRelay) setPolicy(p *netPolicy) error {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	have := r.ports()
	var missing []uint16
	for _, port := range p.listenPorts() {
		if !slices.Contains(have, port) {
			missing = append(missing, port)
		}
	}
	if len(missing) > 0 {
		if r.ns == nil {
			return errors.New("network: the sandbox's namespaces are not known to the relay, so no port can be added: allow the new names on ports the sandbox started with")
		}
		files, err := r.ns.listen(missing)
		if err != nil {
			return fmt.Errorf("network: listen on ports %v in the sandbox: %w", missing, err)
		}
		if err := r.adopt(files); err != nil {
			return err
		}
	}
	r.policy.Store(p)
	return nil
}

// close stops every listener and connection and waits for them.
func (r *netRelay) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.cancel()
		for _, l := range r.tcp {
			l.Close()
		}
		if r.udp != nil {
			r.udp.Close()
		}
		for c := range r.conns {
			c.Close()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
	r.ns.close()
	r.ns = nil
}

// track registers c for close; false when the relay is closing.
func (r *netRelay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *netRelay) untrack(c net.Conn) {
	c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

func (r *netRelay) acceptLoop(l *net.TCPListener) {
	defer r.wg.Done()
	for {
		c, err := l.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and the like: the connection stays in the backlog;
			// try again a little later rather than spin.
			select {
			case <-r.ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if !r.track(c) {
			c.Close()
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(c)
			r.handle(c)
		}()
	}
}

// handle dispatches a connection by the address it was made to.
func (r *netRelay) handle(c *net.TCPConn) {
	local := c.LocalAddr().(*net.TCPAddr).AddrPort()
	addr, port := local.Addr().Unmap(), local.Port()
	switch {
	case addr == resolverAddr && port == dnsPort:
		r.serveDNSTCP(c)
	case addr == proxyAddr && port == proxyPort:
		r.serveProxy(c)
	default:
		name, ok := r.pool.name(addr)
		if !ok {
			// Reset, not closed: the program sees its connection refused
			// (the handshake was done by the kernel before accept).
			_ = c.SetLinger(0)
			r.rec.deny(Denial{Name: addr.String(), Port: int(port), Via: "connect",
				Reason: "the sandbox may connect only to the addresses its resolver gives allowed names"})
			return
		}
		r.serveTransparent(c, name, port)
	}
}

// serveTransparent relays a connection made to the address of name.
func (r *netRelay) serveTransparent(c *net.TCPConn, name string, port uint16) {
	p := r.policy.Load()
	target := name + ":" + strconv.Itoa(int(port))
	if v := p.decide(name, port); !v.allowed {
		_ = c.SetLinger(0)
		r.rec.deny(Denial{Name: name, Port: int(port), Via: "connect", Rule: v.rule, Reason: denialText(target, v)})
		return
	}
	up, err := r.dial(p, name, port)
	if err != nil {
		_ = c.SetLinger(0)
		r.dialFailed(name, port, "connect", err)
		return
	}
	r.relay(c, up, name, port, nil)
}

// dialFailed records a refused target as a denial; other failures (the
// host is down) are not the policy's doing and are not recorded.
func (r *netRelay) dialFailed(name string, port uint16, via string, err error) {
	var rt *refusedTarget
	if errors.As(err, &rt) {
		r.rec.deny(Denial{Name: name, Port: int(port), Via: via, Rule: rt.rule, Reason: rt.Error()})
	}
}

// refusedTarget is an allowed name that leads only to refused addresses.
type refusedTarget struct {
	rule, msg string
}

func (e *refusedTarget) Error() string { return e.msg }

// dial connects to name:port from the host's side: the name is resolved
// now (Network.Hosts first), refused addresses are dropped, and the first
// address that answers is used.
func (r *netRelay) dial(p *netPolicy, name string, port uint16) (*net.TCPConn, error) {
	ctx, cancel := context.WithTimeout(r.ctx, dialTimeout)
	defer cancel()
	addrs := p.hosts[name]
	if len(addrs) == 0 {
		var err error
		if addrs, err = r.lookup(ctx, name); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", name, err)
		}
	}
	var host []netip.Addr
	if !p.allowPrivate {
		var err error
		if host, err = r.hostAddrs(); err != nil {
			// Not knowing the host's addresses, any target could be one.
			return nil, &refusedTarget{rule: p.decide(name, port).rule, msg: fmt.Sprintf("connection to %s refused: %v", name, err)}
		}
	}
	var ok []netip.Addr
	var refusal string
	for _, a := range addrs {
		if why := targetRefusal(a, p.allowPrivate, host); why != "" {
			if refusal == "" {
				refusal = fmt.Sprintf("%s resolves to %s, %s", name, a.Unmap(), why)
			}
			continue
		}
		ok = append(ok, a.Unmap())
	}
	if len(ok) == 0 {
		if refusal == "" {
			return nil, fmt.Errorf("resolve %s: no address", name)
		}
		return nil, &refusedTarget{rule: p.decide(name, port).rule, msg: refusal + ": private, loopback, link-local and host addresses are refused unless private targets are allowed (--allow-private-targets)"}
	}
	var d net.Dialer
	var last error
	for _, a := range ok {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c.(*net.TCPConn), nil
		}
		last = err
	}
	return nil, last
}

// hostAddresses are the addresses of this host's interfaces.
func hostAddresses() ([]netip.Addr, error) {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("read the host's addresses: %w", err)
	}
	var out []netip.Addr
	for _, a := range ifaddrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, pfx.Addr().Unmap())
		}
	}
	return out, nil
}

// relay checks the first bytes the client sends (prefix: what was already
// read of them) against name, then copies both ways until both sides are
// done. The server's bytes flow from the start, for protocols in which the
// server speaks first.
func (r *netRelay) relay(c, up *net.TCPConn, name string, port uint16, prefix []byte) {
	if !r.track(up) {
		up.Close()
		return
	}
	defer r.untrack(up)
	down := make(chan struct{})
	go func() {
		defer close(down)
		_, _ = io.Copy(c, up)
		_ = c.CloseWrite()
	}()
	buf := make([]byte, maxSniff)
	n := copy(buf, prefix)
	kind, got, err := sniff(buf[:n])
	for kind == sniffMore && n < len(buf) {
		m, rerr := c.Read(buf[n:])
		n += m
		kind, got, err = sniff(buf[:n])
		if rerr != nil {
			break
		}
	}
	if n == 0 {
		// The client sent nothing before closing its side.
		_ = up.CloseWrite()
		<-down
		return
	}
	if kind == sniffMore {
		// A TLS hello or HTTP request line that ended early, or is too
		// long: what it names cannot be checked.
		kind, err = sniffTLS, errShortHello
		if first := bytes.TrimLeft(buf[:n], "\r\n"); len(first) == 0 || first[0] != 0x16 {
			kind, err = sniffHTTP, errSniffTooLong
			if n < len(buf) {
				err = errors.New("the request line ended early")
			}
		}
	}
	if kind == sniffHTTP && err == nil {
		r.relayHTTP(c, up, name, port, buf[:n], down)
		return
	}
	if kind == sniffTLS || kind == sniffHTTP {
		what := "TLS server name"
		if kind == sniffHTTP {
			what = "HTTP request"
		}
		reason := ""
		switch norm, _ := normalizeName(got); {
		case err != nil:
			reason = fmt.Sprintf("the %s could not be read: %v", what, err)
		case got != "" && norm != name:
			reason = fmt.Sprintf("the %s %q does not match %s, the name the connection was allowed for", what, got, name)
		}
		if reason != "" {
			who := name
			if got != "" {
				who = got
			}
			r.refuseRelayed(c, up, Denial{Name: who, Port: int(port), Via: "connect", Reason: reason}, down)
			return
		}
	}
	r.rec.connected(name)
	if _, err := up.Write(buf[:n]); err == nil {
		_, _ = io.Copy(up, c)
	}
	_ = up.CloseWrite()
	<-down
}

// refuseRelayed records d, resets the client's connection and closes the
// server's, and waits for the copy from the server (down) to end.
func (r *netRelay) refuseRelayed(c, up *net.TCPConn, d Denial, down <-chan struct{}) {
	r.rec.deny(d)
	_ = c.SetLinger(0)
	up.Close()
	c.Close()
	<-down
}

// relayHTTP passes one plain-HTTP request on a connection allowed for
// name: head is what was read of it so far (at least its request line).
// The request is read whole and checked (readRelayedRequest), sent on as
// writeUpstream sends the explicit proxy's (Connection: close, the body
// exactly as framed), and nothing the client sends after it is passed on:
// a second request on the connection, pipelined or kept alive, could name
// another site on the same server, so the client makes a new connection
// for it, which is checked in turn. The server's answer flows back as it
// comes (down).
func (r *netRelay) relayHTTP(c, up *net.TCPConn, name string, port uint16, head []byte, down <-chan struct{}) {
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), c), 8<<10)
	req, asked, reason := readRelayedRequest(br, name, port)
	if reason != "" {
		r.refuseRelayed(c, up, Denial{Name: asked, Port: int(port), Via: "connect", Reason: reason}, down)
		return
	}
	r.rec.connected(name)
	if err := req.writeUpstream(up, br); err != nil {
		// A body that does not match its framing, or a server gone.
		_ = c.SetLinger(0)
		up.Close()
		c.Close()
		<-down
		return
	}
	_ = up.CloseWrite()
	<-down
}

// readRelayedRequest reads the head of a plain-HTTP request made on a
// connection to name's address and readies it for writeUpstream: it is
// refused (reason, with the name it asked for) when it cannot be read
// strictly (readProxyRequest), is a CONNECT (a tunnel to wherever the
// server lets it), or names a host other than name: in its Host header, or
// in an absolute-form target (http://other/, which servers obey over the
// Host header). A request with no Host header is sent with name's.
func readRelayedRequest(br *bufio.Reader, name string, port uint16) (req *proxyRequest, asked, reason string) {
	// Empty lines before the request line (RFC 9112 2.2): skipped, not
	// sent on.
	for {
		b, err := br.Peek(1)
		if err != nil || (b[0] != '\r' && b[0] != '\n') {
			break
		}
		_, _ = br.ReadByte()
	}
	req, err := readProxyRequest(br)
	if err != nil {
		return nil, name, "the HTTP request could not be read: " + err.Error()
	}
	if req.method == "CONNECT" {
		return nil, name, "a CONNECT request on a connection to " + name + " would open a tunnel past the policy"
	}
	host := ""
	for _, f := range req.fields {
		if strings.EqualFold(f.name, "Host") {
			host = f.value
		}
	}
	var hostName string
	if host != "" {
		var ok bool
		if hostName, ok = splitHostHeader(host); !ok {
			return nil, host, fmt.Sprintf("the HTTP Host %q is not a host[:port]", truncate([]byte(host)))
		}
	}
	switch {
	case req.authority != "":
		// Absolute form: the URL's host is the one servers use.
		if host != "" && !strings.EqualFold(strings.TrimSuffix(hostName, "."), strings.TrimSuffix(req.host, ".")) {
			return nil, req.host, fmt.Sprintf("the HTTP request's URL names %q and its Host header %q", req.host, host)
		}
		hostName = req.host
	case strings.HasPrefix(req.target, "/") || (req.target == "*" && req.method == "OPTIONS"):
		req.path = req.target
		req.authority = host
		if host == "" {
			req.authority = name
			if port != defaultHTTPPort {
				req.authority += ":" + strconv.Itoa(int(port))
			}
		}
	default:
		return nil, name, fmt.Sprintf("the HTTP request target %q is neither a path nor an http:// URL", truncate([]byte(req.target)))
	}
	if hostName != "" {
		if norm, _ := normalizeName(hostName); norm != name {
			return nil, hostName, fmt.Sprintf("the HTTP Host %q does not match %s, the name the connection was allowed for", hostName, name)
		}
	}
	return req, "", ""
}

// splitHostHeader reads a Host value (RFC 9110 7.2) with splitAuthority,
// stricter: a port, when there is a colon, of 1 to 5 digits, and a name of
// letters, digits, '-', '_' and '.' (or a bracketed address). It returns
// the host.
func splitHostHeader(v string) (string, bool) {
	host, port, ok := splitAuthority(v)
	if !ok || len(port) > 5 || (port == "" && strings.HasSuffix(v, ":")) {
		return "", false
	}
	if strings.HasPrefix(v, "[") {
		return host, true
	}
	for _, c := range []byte(host) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", false
		}
	}
	return host, true
}

// serveProxy is the explicit HTTP proxy: CONNECT host:port, or a request
// with an absolute http:// URL, one per connection.
func (r *netRelay) serveProxy(c *net.TCPConn) {
	br := bufio.NewReaderSize(c, 8<<10)
	req, err := readProxyRequest(br)
	if err != nil {
		proxyError(c, statusBadRequest, "nanobox-runc: bad proxy request: "+err.Error())
		return
	}
	var host, portText string
	if req.method == "CONNECT" {
		host, portText, err = net.SplitHostPort(req.target)
		if err != nil {
			proxyError(c, statusBadRequest, "nanobox-runc: CONNECT needs host:port")
			return
		}
	} else {
		if req.authority == "" {
			proxyError(c, statusBadRequest, "nanobox-runc: this is the sandbox's HTTP proxy: send it absolute http:// URLs, or CONNECT host:port")
			return
		}
		host, portText = req.host, req.port
		if portText == "" {
			portText = "80"
		}
	}
	port64, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port64 == 0 {
		proxyError(c, statusBadRequest, "nanobox-runc: bad port "+strconv.Quote(portText))
		return
	}
	port := uint16(port64)
	target := host + ":" + portText
	name, ok := normalizeName(host)
	if !ok {
		reason := target + " is not allowed: rules name domains, and addresses are never reached directly"
		r.rec.deny(Denial{Name: host, Port: int(port), Via: "proxy", Reason: reason})
		proxyError(c, statusForbidden, "nanobox-runc: "+reason)
		return
	}
	p := r.policy.Load()
	if v := p.decide(name, port); !v.allowed {
		reason := denialText(target, v)
		r.rec.deny(Denial{Name: name, Port: int(port), Via: "proxy", Rule: v.rule, Reason: reason})
		proxyError(c, statusForbidden, "nanobox-runc: "+reason)
		return
	}
	up, err := r.dial(p, name, port)
	if err != nil {
		r.dialFailed(name, port, "proxy", err)
		var rt *refusedTarget
		if errors.As(err, &rt) {
			proxyError(c, statusForbidden, "nanobox-runc: "+err.Error())
		} else {
			proxyError(c, statusBadGateway, "nanobox-runc: "+target+": "+err.Error())
		}
		return
	}
	if req.method == "CONNECT" {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			up.Close()
			return
		}
		var prefix []byte
		if n := br.Buffered(); n > 0 {
			prefix, _ = br.Peek(n)
			prefix = slices.Clone(prefix)
		}
		r.relay(c, up, name, port, prefix)
		return
	}
	if !r.track(up) {
		up.Close()
		return
	}
	defer r.untrack(up)
	r.rec.connected(name)
	// One request per connection: the upstream is asked to close after
	// its response, which then flows back as it comes.
	if err := req.writeUpstream(up, br); err != nil {
		if errors.Is(err, errBadBody) {
			proxyError(c, statusBadRequest, "nanobox-runc: bad proxy request: "+err.Error())
		} else {
			proxyError(c, statusBadGateway, "nanobox-runc: "+target+": "+err.Error())
		}
		return
	}
	_ = up.CloseWrite()
	_, _ = io.Copy(c, up)
}

// The statuses the proxy answers with.
const (
	statusBadRequest = 400
	statusForbidden  = 403
	statusBadGateway = 502
)

// proxyError answers a proxy request with status and a plain-text body.
func proxyError(c net.Conn, status int, msg string) {
	text := map[int]string{statusBadRequest: "Bad Request", statusForbidden: "Forbidden", statusBadGateway: "Bad Gateway"}[status]
	body := msg + "\n"
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, text, len(body), body)
}

// serveDNSUDP answers the resolver's UDP queries.
func (r *netRelay) serveDNSUDP(u *net.UDPConn) {
	defer r.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, from, err := u.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if resp := r.answer(buf[:n]); resp != nil {
			_, _ = u.WriteToUDPAddrPort(resp, from)
		}
	}
}

// serveDNSTCP answers DNS over TCP (length-prefixed messages).
func (r *netRelay) serveDNSTCP(c *net.TCPConn) {
	br := bufio.NewReader(c)
	var lenBuf [2]byte
	for {
		if _, err := io.ReadFull(br, lenBuf[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
		if _, err := io.ReadFull(br, q); err != nil {
			return
		}
		resp := r.answer(q)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

func (r *netRelay) answer(q []byte) []byte {
	resp, out := dnsAnswer(q, r.policy.Load(), r.pool)
	if out.denied {
		reason := out.reason
		if reason == "" {
			reason = denialText(out.name, out.v)
		}
		r.rec.deny(Denial{Name: out.name, Via: "dns", Rule: out.v.rule, Reason: reason})
	}
	return resp
}

// netRecorder keeps the denials and connection counts of one sandbox.
type netRecorder struct {
	mu       sync.Mutex
	denied   []Denial
	total    int
	conns    map[string]int
	onDenied func(Denial)
	// cbMu keeps onDenied calls from overlapping.
	cbMu sync.Mutex
}

func (r *netRecorder) deny(d Denial) {
	d.Time = time.Now().UTC()
	d.Count = 1
	r.mu.Lock()
	r.total++
	if n := len(r.denied); n > 0 && sameDenial(&r.denied[n-1], &d) {
		r.denied[n-1].Count++
	} else if n < MaxReportedDenials {
		r.denied = append(r.denied, d)
	}
	r.mu.Unlock()
	if r.onDenied != nil {
		r.cbMu.Lock()
		r.onDenied(d)
		r.cbMu.Unlock()
	}
}

func sameDenial(a, b *Denial) bool {
	return a.Name == b.Name && a.Port == b.Port && a.Via == b.Via && a.Rule == b.Rule && a.Reason == b.Reason
}

func (r *netRecorder) connected(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.conns[name]; !ok && len(r.conns) >= MaxReportedHosts {
		name = "*"
	}
	r.conns[name]++
}

// report is the network part of the report, with the policy's rules.
func (r *netRelay) report() *NetworkReport {
	p := r.policy.Load()
	rep := &NetworkReport{Allow: slices.Clone(p.spec.Allow), Deny: slices.Clone(p.spec.Deny)}
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	rep.Denied = slices.Clone(r.rec.denied)
	rep.DeniedTotal = r.rec.total
	if len(r.rec.conns) > 0 {
		rep.Connections = make(map[string]int, len(r.rec.conns))
		for k, v := range r.rec.conns {
			rep.Connections[k] = v
		}
	}
	return rep
}

// netFiles are listening sockets made in a sandbox's network namespace,
// and that namespace (with its user namespace) for more of them later.
type netFiles struct {
	udp   *os.File
	tcp   []*os.File
	ports []uint16 // of tcp, in order
	ns    *netNamespaces
}

func (f *netFiles) close() {
	if f == nil {
		return
	}
	if f.udp != nil {
		f.udp.Close()
		f.udp = nil
	}
	for _, t := range f.tcp {
		t.Close()
	}
	f.tcp = nil
	f.ns.close()
	f.ns = nil
}
