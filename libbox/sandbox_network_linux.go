package libbox

// A sandbox's network allowlist: its relay runs in the process that called
// Run, as goroutines (no process start on the way to the program), and
// serves a control socket in the sandbox's state directory, so that
// `nanobox-runc update --root STATE-ROOT --allow-net ... ID` reaches a
// running sandbox as it reaches a container.

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// sandboxNet is the network state of a Sandbox shared by its runs.
type sandboxNet struct {
	mu     sync.Mutex
	policy *netPolicy
	// spec is the policy as given (Options().Network), with OnDenied.
	spec   Network
	active map[*instanceNet]struct{}
}

// instanceNet is one run's relay and control socket.
type instanceNet struct {
	relay *netRelay
	ctl   *net.UnixListener
}

// initNetwork prepares s for allowlist runs (New has validated opts).
func (s *Sandbox) initNetwork() error {
	n := s.opts.Network
	if n.mode() != NetworkAllowlist {
		return nil
	}
	p, err := compileNetwork(n)
	if err != nil {
		return fmt.Errorf("sandbox options: %w", err)
	}
	s.net = &sandboxNet{policy: p, spec: n.clone(), active: map[*instanceNet]struct{}{}}
	return nil
}

// networkConfig is the Network of a run's Config (nil unless allowlist).
func (s *Sandbox) networkConfig() *Network {
	if s.net == nil {
		return nil
	}
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	n := s.net.policy.spec.clone()
	return &n
}

// network is the sandbox's current Network.
func (s *Sandbox) network() Network {
	if s.net == nil {
		return s.opts.Network.clone()
	}
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	return s.net.spec.clone()
}

// SetNetwork replaces the rules of an allowlist sandbox: the runs in
// progress follow them for every new connection and resolver query, and
// later runs start with them. The mode cannot change (a running sandbox
// keeps its network namespace): n must be an allowlist too.
func (s *Sandbox) SetNetwork(n Network) error {
	if s.net == nil {
		return fmt.Errorf("sandbox: network mode %s cannot change: only an allowlist's rules can (make a new Sandbox for another mode)", s.opts.Network.mode())
	}
	if n.mode() != NetworkAllowlist {
		return fmt.Errorf("sandbox: network mode %s: an allowlist sandbox's rules can change, not its mode", n.mode())
	}
	p, err := compileNetwork(n)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	var errs []error
	for in := range s.net.active {
		if err := in.relay.setPolicy(p); err != nil {
			errs = append(errs, err)
		}
	}
	s.net.policy = p
	s.net.spec = n.clone()
	if len(errs) > 0 {
		return fmt.Errorf("sandbox: %w", errors.Join(errs...))
	}
	return nil
}

// startNetwork starts the relay of a run whose container was just created.
func (in *instance) startNetwork() error {
	s := in.sb
	if s.net == nil {
		return nil
	}
	files := in.ctr.net
	in.ctr.net = nil
	if files == nil {
		return errors.New("sandbox: the network allowlist's listeners did not arrive from init")
	}
	s.net.mu.Lock()
	p, onDenied := s.net.policy, s.net.spec.OnDenied
	s.net.mu.Unlock()
	relay, err := newNetRelay(p, files, onDenied)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	ctl, err := listenControl(in.ctr.dir)
	if err != nil {
		relay.close()
		return fmt.Errorf("sandbox: %w", err)
	}
	in.net = &instanceNet{relay: relay, ctl: ctl}
	// A change through the control socket applies to this run only.
	go serveControl(ctl, relay, nil)
	s.net.mu.Lock()
	// A policy change between the copy above and now is applied here.
	if s.net.policy != p {
		_ = relay.setPolicy(s.net.policy)
	}
	s.net.active[in.net] = struct{}{}
	s.net.mu.Unlock()
	return nil
}

// stopNetwork stops the relay; the report's network part is kept.
func (in *instance) stopNetwork() {
	if in.net == nil {
		return
	}
	s := in.sb
	s.net.mu.Lock()
	delete(s.net.active, in.net)
	s.net.mu.Unlock()
	in.net.ctl.Close()
	in.net.relay.close()
}

// networkReport is the report's network part, nil without an allowlist.
func (in *instance) networkReport() *NetworkReport {
	if in == nil || in.net == nil {
		return nil
	}
	return in.net.relay.report()
}
