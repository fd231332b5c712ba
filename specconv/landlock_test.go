package specconv

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// fakeLandlock answers CheckLandlock as a kernel with the given report
// status would, for the duration of a test.
func fakeLandlock(t *testing.T, r libbox.LandlockReport) {
	t.Helper()
	saved := checkLandlock
	t.Cleanup(func() { checkLandlock = saved })
	checkLandlock = func(l *libbox.Landlock) (libbox.LandlockReport, error) {
		if err := l.Validate(); err != nil {
			return libbox.LandlockReport{}, err
		}
		if l.Required && r.Status != libbox.LandlockEnforced {
			return r, errors.New("landlock is required but")
		}
		return r, nil
	}
}

func TestLandlockAnnotation(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	fakeLandlock(t, libbox.LandlockReport{ABI: 7, Status: libbox.LandlockEnforced})
	spec := Example()
	spec.Annotations = map[string]string{LandlockAnnotation: `{
		"readOnly": ["/bin", "/etc/"], "readWrite": ["/tmp/../tmp"],
		"restrictNetwork": true, "allowBind": [8080], "allowConnect": [443, 53],
		"required": true}`}
	c, w := mustConvert(t, spec, Options{})
	want := &libbox.Landlock{
		ReadOnly: []string{"/bin", "/etc"}, ReadWrite: []string{"/tmp"},
		RestrictNetwork: true, AllowBind: []uint16{8080}, AllowConnect: []uint16{443, 53},
		Required: true,
	}
	if !reflect.DeepEqual(c.Landlock, want) || w.contains("landlock") {
		t.Errorf("landlock %+v, want %+v (warnings %q)", c.Landlock, want, w)
	}
	// The annotation is still echoed in the state, like any other.
	if c.Annotations[LandlockAnnotation] == "" {
		t.Error("annotation dropped")
	}

	spec.Annotations = nil
	if c, _ := mustConvert(t, spec, Options{}); c.Landlock != nil {
		t.Errorf("landlock %+v without the annotation", c.Landlock)
	}
}

func TestLandlockAnnotationErrors(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	fakeLandlock(t, libbox.LandlockReport{ABI: 7, Status: libbox.LandlockEnforced})
	for _, tc := range []struct{ value, want string }{
		{`{"readOnly": ["/bin"], "readWrit": ["/tmp"]}`, `unknown field "readWrit"`},
		{`{"readOnly": ["/bin"]} {}`, "trailing data"},
		{`["/bin"]`, "cannot unmarshal array"},
		{`{"readOnly": ["bin"]}`, `readOnly path "bin" must be an absolute container path`},
		{`{"readWrite": ["/tmp", ""]}`, `readWrite path "" must be an absolute`},
		{`{}`, "nothing to restrict"},
		{`{"readOnly": ["/"], "allowConnect": [443]}`, "allowBind and allowConnect need restrictNetwork"},
		{`{"restrictNetwork": true, "allowBind": [70000]}`, "cannot unmarshal number 70000"},
		{`not json`, "invalid character"},
	} {
		spec := Example()
		spec.Annotations = map[string]string{LandlockAnnotation: tc.value}
		_, _, err := convert(t, spec, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "annotations[org.nanobox.landlock]") {
			t.Errorf("%s: error %v, want %q", tc.value, err, tc.want)
		}
	}
}

func TestLandlockAnnotationDegraded(t *testing.T) {
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Annotations = map[string]string{LandlockAnnotation: `{"readOnly": ["/"], "restrictNetwork": true}`}

	fakeLandlock(t, libbox.LandlockReport{ABI: 2, Status: libbox.LandlockDegraded,
		NotEnforced: []string{"truncation (needs Landlock ABI 3)", "TCP bind and connect (needs Landlock ABI 4)"}})
	c, w := mustConvert(t, spec, Options{})
	if c.Landlock == nil || !w.contains("Landlock ABI 2) does not enforce: truncation (needs Landlock ABI 3), TCP bind") {
		t.Errorf("landlock %+v warnings %q", c.Landlock, w)
	}

	fakeLandlock(t, libbox.LandlockReport{Status: libbox.LandlockUnavailable})
	c, w = mustConvert(t, spec, Options{})
	if c.Landlock == nil || !w.contains("this kernel has no Landlock") {
		t.Errorf("landlock %+v warnings %q", c.Landlock, w)
	}

	spec.Annotations[LandlockAnnotation] = `{"readOnly": ["/"], "required": true}`
	if _, _, err := convert(t, spec, Options{}); err == nil || !strings.Contains(err.Error(), "landlock is required") {
		t.Errorf("required on a kernel without Landlock: %v", err)
	}
}

func TestLandlockAgainstRunningKernel(t *testing.T) {
	// No fake: libbox.CheckLandlock asks the kernel. Whatever it has, a
	// best-effort policy converts; a required one converts exactly when
	// the kernel enforces it whole.
	fakeHost(t, unix.CAP_LAST_CAP)
	spec := Example()
	spec.Annotations = map[string]string{LandlockAnnotation: `{"readOnly": ["/"], "restrictNetwork": true, "required": true}`}
	_, _, err := convert(t, spec, Options{})
	abi := libbox.LandlockABI()
	t.Logf("kernel Landlock ABI %d", abi)
	if (abi >= 5) != (err == nil) {
		t.Errorf("ABI %d: required policy error %v", abi, err)
	}
}
