package libbox

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// FuzzParseState feeds arbitrary state.json bytes to parseState, which
// every command that loads a container runs on a file in the state root:
// no input may panic, and whatever it accepts has a valid id, an init pid
// and a config. parseStateHead (LoadLight's) accepts all that too, with the
// same values. Seeds in testdata/fuzz/FuzzParseState; `make fuzz` runs a
// short pass.
func FuzzParseState(f *testing.F) {
	good, err := json.Marshal(&persisted{
		ID: "c1", InitPid: 42, InitStartTime: 12345, Created: time.Unix(1700000000, 0).UTC(), Owner: "root",
		Config: &Config{
			Rootfs:     "/bundle/rootfs",
			Namespaces: []Namespace{{Type: NEWNS}, {Type: NEWPID}},
			Process:    Process{Args: []string{"sh"}, Cwd: "/"},
		},
		CgroupPaths: map[string]string{"": "/sys/fs/cgroup/c1"},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"id": "../x", "initPid": 1, "config": {}}`))
	f.Add([]byte(`{"id": "c", "initPid": -1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseState(data)
		sh, herr := parseStateHead(data)
		if herr != nil && !errors.Is(herr, ErrInvalidState) {
			t.Fatalf("parseStateHead error %v is not ErrInvalidState", herr)
		}
		if (herr == nil) != (sh != nil) {
			t.Fatalf("parseStateHead returned %+v and %v", sh, herr)
		}
		if err == nil {
			if herr != nil {
				t.Fatalf("parseStateHead refused what parseState accepts: %v", herr)
			}
			h, c := sh.Config, st.Config
			want := stateHead{
				ID: st.ID, InitPid: st.InitPid, InitStartTime: st.InitStartTime, Created: st.Created, Owner: st.Owner,
				Config: &configHead{
					OCIVersion: c.OCIVersion, Bundle: c.Bundle, Rootfs: c.Rootfs, Namespaces: c.Namespaces,
					Annotations: c.Annotations, CgroupsPath: c.CgroupsPath, Resources: c.Resources,
				},
				CgroupPaths: st.CgroupPaths,
			}
			if !reflect.DeepEqual(*sh, want) {
				t.Fatalf("parseStateHead read %+v (config %+v), parseState %+v", sh, h, want)
			}
		}
		if err != nil {
			if st != nil {
				t.Fatalf("parseState returned a state and the error %v", err)
			}
			if !errors.Is(err, ErrInvalidState) {
				t.Fatalf("error %v is not ErrInvalidState", err)
			}
			return
		}
		if ValidateID(st.ID) != nil || st.InitPid <= 0 || st.Config == nil {
			t.Fatalf("accepted an invalid state: %+v", st)
		}
	})
}
