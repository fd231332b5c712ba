package libbox

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestRelayHostAddresses: the relay reads the host's own addresses at each
// connection, so that one the host gains while a long-lived sandbox runs is
// refused too, and refuses the connection when it cannot read them (fail
// closed: any target could be the host). No connection is attempted here:
// every dial is refused before it.
func TestRelayHostAddresses(t *testing.T) {
	p, err := compileNetwork(Network{Mode: NetworkAllowlist, Allow: []string{"svc.example"}})
	if err != nil {
		t.Fatal(err)
	}
	// A public address, which only being the host's makes a refusal.
	public := netip.MustParseAddr("8.8.8.8")
	var reads int
	var readErr error
	r := &netRelay{
		ctx:    context.Background(),
		lookup: func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{public}, nil },
		hostAddrs: func() ([]netip.Addr, error) {
			reads++
			if readErr != nil {
				return nil, readErr
			}
			return []netip.Addr{public}, nil
		},
	}
	var refused *refusedTarget
	c, err := r.dial(p, "svc.example", 443)
	if c != nil || !errors.As(err, &refused) || !strings.Contains(err.Error(), "host addresses are refused") {
		t.Fatalf("a target that is the host's address: %v, want refused", err)
	}
	readErr = errors.New("netlink: too many open files")
	c, err = r.dial(p, "svc.example", 443)
	if c != nil || !errors.As(err, &refused) || !strings.Contains(err.Error(), "too many open files") {
		t.Fatalf("host addresses unreadable: %v, want refused", err)
	}
	if reads != 2 {
		t.Errorf("host addresses read %d times for 2 connections", reads)
	}
}
