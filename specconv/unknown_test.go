package specconv

import (
	"reflect"
	"testing"
)

func TestUnknownKeys(t *testing.T) {
	for _, tt := range []struct {
		json string
		want []string
	}{
		{`{"ociVersion": "1.0.2", "process": {"args": ["sh"], "terminal": true}, "root": {"path": "r"}}`, nil},
		// A typo anywhere, with its path.
		{`{"process": {"terminall": true, "capabilities": {"bounding": [], "bouding": []}}}`,
			[]string{"process.capabilities.bouding", "process.terminall"}},
		{`{"mounts": [{"destination": "/a"}, {"destination": "/b", "optionz": ["ro"]}]}`, []string{"mounts[1].optionz"}},
		{`{"linux": {"resources": {"memory": {"limitt": 1}, "devices": [{"allow": true, "acess": "rwm"}]}}}`,
			[]string{"linux.resources.devices[0].acess", "linux.resources.memory.limitt"}},
		{`{"hooks": {"prestart": [{"path": "/x", "timout": 1}]}, "future": {}}`, []string{"future", "hooks.prestart[0].timout"}},
		// Map keys are data; encoding/json matches names case-insensitively.
		{`{"annotations": {"anything": "x"}, "linux": {"sysctl": {"net.x": "1"}, "resources": {"unified": {"memory.max": "1"}}}}`, nil},
		{`{"Process": {"Args": ["sh"]}}`, nil},
		// Values of the wrong shape are the decoder's business.
		{`{"process": "sh", "mounts": {}}`, nil},
		{`not json`, nil},
	} {
		if got := UnknownKeys([]byte(tt.json)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("UnknownKeys(%s) = %q, want %q", tt.json, got, tt.want)
		}
	}
}
