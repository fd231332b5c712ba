package specconv

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// NetworkAnnotation gives a bundle a network allowlist (runtime-spec has no
// field for one), for podman, containerd and anyone else who runs bundles
// through create/start. Its value is the sandbox contract's network object
// (docs/network.md):
//
//	{
//	  "mode": "allowlist",
//	  "allow": ["api.example.com", "*.example.org:8443"],
//	  "deny": ["bad.example.org"],
//	  "allowPrivateTargets": false,
//	  "hosts": {"pinned.example.com": "203.0.113.5"}
//	}
//
// The container must have a network namespace with loopback only: a new
// one (linux.namespaces has {"type": "network"} without a path), or a
// joined one that has no other interface (podman --network none). Unknown
// keys are an error, so that a misspelt rule is never ignored. Mode none
// and host are accepted and change nothing: the namespaces decide.
const NetworkAnnotation = "org.nanobox.network"

// convertNetwork reads the network annotation, if any.
func convertNetwork(annotations map[string]string) (*libbox.Network, error) {
	v, ok := annotations[NetworkAnnotation]
	if !ok {
		return nil, nil
	}
	field := "annotations[" + NetworkAnnotation + "]"
	var n libbox.Network
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: trailing data after the JSON object", field)
	}
	if err := n.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if n.Mode != libbox.NetworkAllowlist {
		return nil, nil
	}
	return &n, nil
}
