package specconv

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// LandlockAnnotation gives a bundle a Landlock policy: runtime-spec 1.3 has
// no field for one. Its value is a JSON object (landlockPolicy):
//
//	{
//	  "readOnly":        ["/bin", "/lib", "/etc"],
//	  "readWrite":       ["/tmp", "/work"],
//	  "restrictNetwork": true,
//	  "allowBind":       [8080],
//	  "allowConnect":    [443],
//	  "required":        false
//	}
//
// The keys, all optional:
//   - readOnly: container paths the process may read, list and execute,
//     with everything beneath them;
//   - readWrite: paths it may also write, truncate, create in, remove from,
//     rename and link across, and whose devices it may use with ioctl.
//     With either list non-empty, every other file access is denied (the
//     program itself must be under one of them); with both empty, the
//     filesystem is not restricted;
//   - restrictNetwork: deny TCP bind(2) and connect(2), except to the
//     ports in allowBind and allowConnect (which need it). UDP is not
//     restricted;
//   - required: fail create when the kernel cannot enforce all of the
//     policy. Without it the runtime enforces what the kernel's Landlock
//     ABI allows and warns about the rest (none at all without Landlock).
//
// Unknown keys are an error, so that a misspelt rule is never ignored.
// Enforcing the policy sets no_new_privs on a process that does not keep
// CAP_SYS_ADMIN (the kernel requires one or the other).
const LandlockAnnotation = "org.nanobox.landlock"

// landlockPolicy is the annotation's value; see LandlockAnnotation.
type landlockPolicy struct {
	ReadOnly        []string `json:"readOnly"`
	ReadWrite       []string `json:"readWrite"`
	RestrictNetwork bool     `json:"restrictNetwork"`
	AllowBind       []uint16 `json:"allowBind"`
	AllowConnect    []uint16 `json:"allowConnect"`
	Required        bool     `json:"required"`
}

// checkLandlock asks the running kernel; tests replace it.
var checkLandlock = libbox.CheckLandlock

// convertLandlock reads the Landlock policy of the annotations, if any, and
// reports through warnf what of it the running kernel cannot enforce.
func convertLandlock(annotations map[string]string, warnf func(string, ...any)) (*libbox.Landlock, error) {
	v, ok := annotations[LandlockAnnotation]
	if !ok {
		return nil, nil
	}
	field := "annotations[" + LandlockAnnotation + "]"
	var p landlockPolicy
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: trailing data after the JSON object", field)
	}
	l := &libbox.Landlock{
		ReadOnly:        cleanPaths(p.ReadOnly),
		ReadWrite:       cleanPaths(p.ReadWrite),
		RestrictNetwork: p.RestrictNetwork,
		AllowBind:       p.AllowBind,
		AllowConnect:    p.AllowConnect,
		Required:        p.Required,
	}
	r, err := checkLandlock(l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	switch r.Status {
	case libbox.LandlockUnavailable:
		warnf("%s: this kernel has no Landlock: the policy is not enforced", field)
	case libbox.LandlockDegraded:
		warnf("%s: this kernel (Landlock ABI %d) does not enforce: %s", field, r.ABI, strings.Join(r.NotEnforced, ", "))
	}
	return l, nil
}

// cleanPaths cleans the absolute paths (relative ones are left for
// Validate to refuse).
func cleanPaths(in []string) []string {
	var out []string
	for _, p := range in {
		if strings.HasPrefix(p, "/") {
			p = filepath.Clean(p)
		}
		out = append(out, p)
	}
	return out
}
