package libbox

// The network policy of a sandbox or container: none, host, or a domain
// allowlist. This file holds the policy itself (modes, rules, the matcher);
// network_dns.go the resolver's answers, network_sniff.go the TLS SNI and
// HTTP Host parsers, network_relay_linux.go the proxy and relay, and
// network_linux.go the kernel side (listeners made in the sandbox's network
// namespace, the supervisor of containers). docs/network.md describes it
// for users.

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// NetworkMode is how the sandbox reaches the network.
type NetworkMode string

// The network modes.
const (
	// NetworkNone is a network namespace of the sandbox's own with only
	// loopback: no route out, and abstract unix sockets private to it.
	NetworkNone NetworkMode = "none"
	// NetworkHost shares the caller's network namespace.
	NetworkHost NetworkMode = "host"
	// NetworkAllowlist is a network namespace with only loopback, as
	// NetworkNone, in which the runtime provides a resolver and a proxy
	// that reach the allowed domains, and nothing else.
	NetworkAllowlist NetworkMode = "allowlist"
)

// Network is the sandbox's network policy; the zero value is NoNetwork().
//
// In allowlist mode, Allow and Deny are domain rules, each DOMAIN[:PORT]:
// DOMAIN is a name ("api.example.com"), a wildcard for every name below a
// domain ("*.example.com", which does not match example.com itself), or
// "*" for every name; PORT is a TCP port. An allow rule without a port
// allows ports 80 and 443; a deny rule without a port denies every port. A
// deny rule wins over any allow rule. Names are compared case-insensitively
// and without a trailing dot.
type Network struct {
	Mode  NetworkMode `json:"mode,omitempty"`
	Allow []string    `json:"allow,omitempty"`
	Deny  []string    `json:"deny,omitempty"`
	// AllowPrivateTargets lets an allowed name reach loopback, private,
	// link-local (the cloud metadata address 169.254.169.254 among them),
	// shared (100.64.0.0/10) and the host's own addresses, which are
	// refused otherwise: an allowed name must not become a way into the
	// host or its network.
	AllowPrivateTargets bool `json:"allowPrivateTargets,omitempty"`
	// Hosts maps names to addresses for the runtime's own, host-side
	// resolution (as `curl --resolve`, or docker's --add-host): a name
	// listed here is not looked up. The policy still applies to it.
	Hosts map[string]string `json:"hosts,omitempty"`
	// OnDenied, when set, is called (from the runtime's goroutines, never
	// concurrently) with every denied attempt, as it happens: a way to log
	// them. The report has them too.
	OnDenied func(Denial) `json:"-"`
}

// Validate checks the policy's form: the mode, and in allowlist mode every
// rule and hosts entry. Errors name the field by its JSON path.
func (n Network) Validate() error {
	switch n.mode() {
	case NetworkNone, NetworkHost:
		if len(n.Allow)+len(n.Deny)+len(n.Hosts) > 0 || n.AllowPrivateTargets {
			return fieldError("network", "allow, deny, hosts and allowPrivateTargets need mode allowlist")
		}
	case NetworkAllowlist:
		_, err := compileNetwork(n)
		return err
	default:
		return fieldError("network.mode", "unknown mode %q: use none, host or allowlist", n.Mode)
	}
	return nil
}

// NoNetwork is a private network namespace with loopback only.
func NoNetwork() Network { return Network{Mode: NetworkNone} }

// HostNetwork shares the caller's network (the report says so).
func HostNetwork() Network { return Network{Mode: NetworkHost} }

// AllowDomains lets the sandbox reach only the given domains
// (DOMAIN[:PORT] rules, see Network), through the runtime's resolver and
// proxy, also for programs that ignore proxy settings.
func AllowDomains(rules ...string) Network {
	return Network{Mode: NetworkAllowlist, Allow: slices.Clone(rules)}
}

func (n Network) mode() NetworkMode {
	if n.Mode == "" {
		return NetworkNone
	}
	return n.Mode
}

// clone is a deep copy of n.
func (n Network) clone() Network {
	c := n
	c.Allow = slices.Clone(n.Allow)
	c.Deny = slices.Clone(n.Deny)
	if n.Hosts != nil {
		c.Hosts = make(map[string]string, len(n.Hosts))
		for k, v := range n.Hosts {
			c.Hosts[k] = v
		}
	}
	return c
}

// The addresses and ports the runtime takes inside an allowlisted
// sandbox's network namespace.
const (
	// proxyPort is the explicit HTTP proxy's, on 127.0.0.1.
	proxyPort = 3128
	// dnsPort is the resolver's, on resolverAddr (UDP and TCP).
	dnsPort = 53
	// maxNetPorts bounds the distinct ports of the allow rules (each is a
	// listening socket passed over one SCM_RIGHTS message).
	maxNetPorts = 64
	// defaultPorts are an allow rule's without a port.
	defaultHTTPPort, defaultHTTPSPort = 80, 443
)

var (
	proxyAddr    = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	resolverAddr = netip.AddrFrom4([4]byte{127, 0, 0, 53})
)

// ProxyURL is the explicit proxy of an allowlisted sandbox, as its
// HTTP_PROXY and HTTPS_PROXY variables give it.
const ProxyURL = "http://127.0.0.1:3128"

// netRule is one parsed allow or deny rule.
type netRule struct {
	text string // as written, for messages
	deny bool
	// any matches every name; otherwise name is the exact name, or with
	// wildcard the domain whose subdomains match.
	any      bool
	wildcard bool
	name     string
	// ports: nil means every port (deny rules without a port).
	ports []uint16
}

func (r *netRule) String() string {
	if r.deny {
		return "deny " + r.text
	}
	return "allow " + r.text
}

func (r *netRule) matchName(name string) bool {
	switch {
	case r.any:
		return true
	case r.wildcard:
		return strings.HasSuffix(name, "."+r.name)
	}
	return name == r.name
}

func (r *netRule) matchPort(port uint16) bool {
	return r.ports == nil || slices.Contains(r.ports, port)
}

// parseNetRule reads DOMAIN[:PORT].
func parseNetRule(s string, deny bool) (netRule, error) {
	r := netRule{text: s, deny: deny}
	if strings.Count(s, ":") > 1 {
		return r, fmt.Errorf("rule %q: rules name domains, not addresses (an address has no name for the sandbox's resolver to answer)", s)
	}
	host, portText, hasPort := strings.Cut(strings.TrimSpace(s), ":")
	if hasPort {
		p, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || p == 0 {
			return r, fmt.Errorf("rule %q: port %q is not a TCP port (1-65535)", s, portText)
		}
		r.ports = []uint16{uint16(p)}
	} else if !deny {
		r.ports = []uint16{defaultHTTPPort, defaultHTTPSPort}
	}
	host = strings.ToLower(host)
	switch {
	case host == "*":
		r.any = true
		return r, nil
	case strings.HasPrefix(host, "*."):
		r.wildcard = true
		host = host[2:]
	}
	host = strings.TrimSuffix(host, ".")
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return r, fmt.Errorf("rule %q: rules name domains, not addresses (an address has no name for the sandbox's resolver to answer)", s)
	}
	if err := checkDomain(host); err != nil {
		return r, fmt.Errorf("rule %q: %w", s, err)
	}
	r.name = host
	return r, nil
}

// checkDomain accepts a DNS name of letters, digits, hyphens and
// underscores, in labels of 1 to 63 characters, 253 at most in all, whose
// last label is not all digits: "198.51.100.3" and "2130706433" are
// addresses, not names, and a rule such as "*" must not let a program
// reach an address by writing it where a name goes.
func checkDomain(name string) error {
	if name == "" {
		return errors.New("the domain is empty")
	}
	if len(name) > 253 {
		return errors.New("the domain is longer than 253 characters")
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return fmt.Errorf("%q is an address, not a domain name (its last label is all digits)", name)
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q is not a domain name (empty label, or one longer than 63 characters)", name)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q is not a domain name (only letters, digits, '-' and '_'; IDNs in their xn-- form)", name)
			}
		}
	}
	return nil
}

// normalizeName lower-cases name and drops a trailing dot; ok is false for
// what is not a domain name.
func normalizeName(name string) (string, bool) {
	n := strings.TrimSuffix(strings.ToLower(name), ".")
	return n, checkDomain(n) == nil
}

// netPolicy is a validated allowlist policy, immutable once made: a change
// of policy swaps the whole value.
type netPolicy struct {
	allow, deny  []netRule
	allowPrivate bool
	hosts        map[string][]netip.Addr
	// spec is the policy as given (for the control socket's get).
	spec Network
}

// compileNetwork checks an allowlist policy and compiles it. Errors name the
// field by its JSON path ("network.allow[1]: ...").
func compileNetwork(n Network) (*netPolicy, error) {
	p := &netPolicy{allowPrivate: n.AllowPrivateTargets, spec: n.clone()}
	p.spec.OnDenied = nil
	var errs []error
	for i, s := range n.Allow {
		r, err := parseNetRule(s, false)
		if err != nil {
			errs = append(errs, fieldError(fmt.Sprintf("network.allow[%d]", i), "%v", err))
			continue
		}
		p.allow = append(p.allow, r)
	}
	for i, s := range n.Deny {
		r, err := parseNetRule(s, true)
		if err != nil {
			errs = append(errs, fieldError(fmt.Sprintf("network.deny[%d]", i), "%v", err))
			continue
		}
		p.deny = append(p.deny, r)
	}
	if len(n.Hosts) > 0 {
		p.hosts = map[string][]netip.Addr{}
	}
	for name, addr := range n.Hosts {
		f := "network.hosts[" + name + "]"
		norm, ok := normalizeName(name)
		if !ok {
			errs = append(errs, fieldError(f, "%q is not a domain name", name))
			continue
		}
		a, err := netip.ParseAddr(addr)
		if err != nil {
			errs = append(errs, fieldError(f, "%q is not an IP address", addr))
			continue
		}
		p.hosts[norm] = append(p.hosts[norm], a.Unmap())
	}
	if len(errs) == 0 {
		if ports := p.ports(); len(ports) > maxNetPorts {
			errs = append(errs, fieldError("network.allow", "the rules name %d ports: at most %d are supported", len(ports), maxNetPorts))
		}
	}
	if len(errs) > 0 {
		return nil, oneLine(errs)
	}
	return p, nil
}

// verdict is the policy's decision on one name (and port).
type verdict struct {
	allowed bool
	// rule is the rule that decided ("allow *.example.com", "deny
	// evil.example.com:443"), "" when no allow rule matched.
	rule string
}

// decide applies the rules to a connection to name:port. name must be
// normalized.
func (p *netPolicy) decide(name string, port uint16) verdict {
	for i := range p.deny {
		if r := &p.deny[i]; r.matchName(name) && r.matchPort(port) {
			return verdict{rule: r.String()}
		}
	}
	for i := range p.allow {
		if r := &p.allow[i]; r.matchName(name) && r.matchPort(port) {
			return verdict{allowed: true, rule: r.String()}
		}
	}
	return verdict{}
}

// resolvable decides whether the resolver answers name: when some port of
// an allow rule matching it is not denied.
func (p *netPolicy) resolvable(name string) verdict {
	var denied verdict
	for i := range p.allow {
		r := &p.allow[i]
		if !r.matchName(name) {
			continue
		}
		for _, port := range r.ports {
			v := p.decide(name, port)
			if v.allowed {
				return v
			}
			if denied.rule == "" {
				denied = v
			}
		}
	}
	return denied
}

// ports are the distinct ports of the allow rules, sorted.
func (p *netPolicy) ports() []uint16 {
	var ports []uint16
	for _, r := range p.allow {
		for _, port := range r.ports {
			if !slices.Contains(ports, port) {
				ports = append(ports, port)
			}
		}
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	return ports
}

// listenPorts are the TCP ports the runtime listens on inside the
// sandbox's namespace: the resolver's (DNS over TCP), the proxy's and the
// allow rules'.
func (p *netPolicy) listenPorts() []uint16 {
	ports := p.ports()
	for _, port := range []uint16{dnsPort, proxyPort} {
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	return ports
}

// denialText is the one-line explanation of a denial, for the proxy's 403
// page and the log.
func denialText(target string, v verdict) string {
	if v.rule == "" {
		return fmt.Sprintf("%s is not allowed: no allow rule matches it", target)
	}
	return fmt.Sprintf("%s is denied by the rule %q", target, v.rule)
}

// Denial is one refused attempt to reach the network, in the report's
// network.denied list.
type Denial struct {
	Time time.Time `json:"time"`
	// Name is the name asked for (the resolver's query, the proxy's
	// target, the name behind the address connected to, or the TLS SNI or
	// HTTP Host that did not match it).
	Name string `json:"name"`
	// Port is the TCP port, 0 for a resolver query.
	Port int `json:"port,omitempty"`
	// Via is where the attempt was stopped: "dns" (the resolver answered
	// NXDOMAIN), "proxy" (the explicit proxy answered 403), "connect" (a
	// direct connection to an address the resolver gave was closed).
	Via string `json:"via"`
	// Rule is the rule that denied it ("deny *.example.com"), or "" when
	// no allow rule matched.
	Rule string `json:"rule,omitempty"`
	// Reason says what was wrong, in words.
	Reason string `json:"reason"`
	// Count is the number of identical attempts in a row this entry
	// stands for (at least 1): a lookup asks for A and AAAA records.
	Count int `json:"count"`
}

// NetworkReport is the network part of the execution report (allowlist
// mode only).
type NetworkReport struct {
	// Allow and Deny are the rules in force when the run ended.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Denied are the refused attempts, the first MaxReportedDenials of
	// them; DeniedTotal counts all of them.
	Denied      []Denial `json:"denied,omitempty"`
	DeniedTotal int      `json:"deniedTotal"`
	// Connections counts the connections let through, per name (at most
	// MaxReportedHosts names; the rest are counted under "*").
	Connections map[string]int `json:"connections,omitempty"`
}

// Bounds of the network report.
const (
	MaxReportedDenials = 256
	MaxReportedHosts   = 1024
)
