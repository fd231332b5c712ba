package libbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Every malformed option is a problem of its own, named by its JSON path.
func TestProblemsInvalidOptions(t *testing.T) {
	o := Options{WorkDir: "relative", Limits: Limits{Memory: -1}, Mounts: []Bind{{Target: "/x"}}}
	err := o.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad options")
	}
	ps := Problems(err)
	var fields []string
	for _, p := range ps {
		if p.Kind != ErrorInvalidOptions || p.Message == "" || !strings.HasPrefix(p.Message, p.Field+": ") {
			t.Errorf("problem %+v: want kind %s, a message starting with its field", p, ErrorInvalidOptions)
		}
		fields = append(fields, p.Field)
	}
	want := []string{"mounts[0].source", "workDir", "limits.memory"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %q, want %q (from %v)", fields, want, err)
	}
	// The message is the error's own text: Problems never rewords.
	for _, p := range ps {
		if !strings.Contains(err.Error(), p.Message) {
			t.Errorf("problem message %q is not part of the error %q", p.Message, err)
		}
	}
}

// A limit the host cannot enforce names the limit, why, and the fix:
// degradation, and what would let the host enforce it.
func TestProblemsLimitUnavailable(t *testing.T) {
	cg := cgroupProbe{version: 1, controllers: map[string]bool{}, why: "no cgroup for you", fix: "run as root"}
	o := Options{Limits: Limits{Memory: 64 * MB, Pids: 8, CPUs: 1, WallTime: 1e9}}
	_, err := planLimits(&o, true, cg, false)
	if err == nil {
		t.Fatal("planLimits enforced limits without a cgroup")
	}
	err = fmt.Errorf("sandbox options: %w", err)
	ps := Problems(err)
	if len(ps) != 3 {
		t.Fatalf("problems %+v, want memory, pids and cpus", ps)
	}
	for i, n := range []LimitName{LimitMemory, LimitPids, LimitCPUs} {
		p := ps[i]
		if p.Kind != ErrorLimitUnavailable || p.Limit != n || p.Field != "limits."+string(n) {
			t.Errorf("problem %d: %+v, want limit %s", i, p, n)
		}
		if !strings.Contains(p.Message, "no cgroup for you") || !strings.HasPrefix(p.Fix, "run as root; or allow degradation (allowDegraded: [\""+string(n)+"\"]") {
			t.Errorf("problem %d: message %q, fix %q: want the reason, the host's fix and the degradation", i, p.Message, p.Fix)
		}
	}
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Errorf("errors.As LimitError: %v", le)
	}
	// The one-line text is the same as it always was.
	want := `limits.memory: needs a cgroup with the memory controller: no cgroup for you; run as root; or allow degradation (allowDegraded: ["memory"], CLI --allow-degraded memory) to enforce it with RLIMIT_AS per process`
	if ps[0].Message != want {
		t.Errorf("message\n %q\nwant\n %q", ps[0].Message, want)
	}

	// Allowed to degrade: no error, and the report's reason has both.
	o.AllowDegraded = []LimitName{LimitMemory, LimitPids, LimitCPUs}
	p, err := planLimits(&o, true, cg, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.reports[LimitMemory]; r.Status != LimitDegraded || r.Reason != "no cgroup for you; run as root" {
		t.Errorf("degraded memory: %+v", r)
	}
}

func TestProblemsOtherErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind ErrorKind
		fix  bool
	}{
		{fmt.Errorf("create sandbox: %w", fmt.Errorf("exec %q: %w", "x", ErrProgramNotFound)), ErrorProgramNotFound, true},
		{fmt.Errorf("create sandbox: %w", ErrProgramNotExecutable), ErrorProgramNotExecutable, true},
		{fmt.Errorf("create sandbox: mount /proc: %w", os.ErrPermission), ErrorSetupFailed, false},
		{errors.New("plain"), ErrorSetupFailed, false},
	} {
		ps := Problems(tc.err)
		if len(ps) != 1 || ps[0].Kind != tc.kind || ps[0].Message != tc.err.Error() || (ps[0].Fix != "") != tc.fix {
			t.Errorf("Problems(%v) = %+v, want one %s with the whole message", tc.err, ps, tc.kind)
		}
	}
	if Problems(nil) != nil {
		t.Error("Problems(nil) is not nil")
	}
	// A join of typed and untyped errors keeps both.
	err := fmt.Errorf("x: %w", joinedError{fieldError("env[0]", "bad"), errors.New("other")})
	ps := Problems(err)
	if len(ps) != 2 || ps[0].Field != "env[0]" || ps[1].Kind != ErrorSetupFailed || ps[1].Message != "other" {
		t.Errorf("mixed join: %+v", ps)
	}
}

// Options that are not the contract's JSON are invalid options too, with
// no field, and the text of the decoder's error.
func TestProblemsOptionsJSON(t *testing.T) {
	for _, in := range []string{`{"version": 1, "limitz": {}}`, `{"limits": {}}`, `{"version": 1, "limits": {"memory": "1G"}}`} {
		var o Options
		err := json.Unmarshal([]byte(in), &o)
		ps := Problems(err)
		if err == nil || len(ps) != 1 || ps[0].Kind != ErrorInvalidOptions || ps[0].Field != "" || !strings.HasPrefix(err.Error(), "sandbox options: "+ps[0].Message) {
			t.Errorf("%s: error %v, problems %+v", in, err, ps)
		}
	}
}

// The report of a sandbox that could not be set up carries the problems,
// in the contract's JSON form.
func TestSetupErrorReport(t *testing.T) {
	err := fmt.Errorf("sandbox options: %w", joinedError{
		&LimitError{Limit: LimitPids, Reason: "needs a cgroup", Fix: "allow degradation"},
		fieldError("workDir", "must be absolute"),
	})
	rep := SetupErrorReport(err)
	b, jerr := json.Marshal(rep)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["status"] != "setup-error" || m["exitCode"] != float64(125) || m["errorKind"] != "limit-unavailable" || m["error"] != err.Error() {
		t.Errorf("report %s", b)
	}
	want := []any{
		map[string]any{"kind": "limit-unavailable", "field": "limits.pids", "limit": "pids", "message": "limits.pids: needs a cgroup; allow degradation", "fix": "allow degradation"},
		map[string]any{"kind": "invalid-options", "field": "workDir", "message": "workDir: must be absolute"},
	}
	if !reflect.DeepEqual(m["problems"], want) {
		t.Errorf("problems %v\nwant %v", m["problems"], want)
	}
	if m["isolation"].(map[string]any)["rootless"] != (os.Geteuid() != 0) {
		t.Errorf("isolation.rootless in %s", b)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Problems, rep.Problems) || back.ErrorKind != ErrorLimitUnavailable {
		t.Errorf("round trip: %+v %v", back, err)
	}
	if r := SetupErrorReport(fmt.Errorf("run: %w", ErrProgramNotFound)); r.ExitCode != ExitNotFound || r.ErrorKind != ErrorProgramNotFound {
		t.Errorf("not found: %+v", r)
	}
}

// New's errors have problems too: a mount source that does not exist is
// an invalid option, named by its field.
func TestNewProblems(t *testing.T) {
	_, err := New(Options{StateRoot: t.TempDir(), Mounts: []Bind{{Source: "/no/such/dir/here", Target: "/x"}}})
	ps := Problems(err)
	if len(ps) != 1 || ps[0].Kind != ErrorInvalidOptions || ps[0].Field != "mounts[0].source" {
		t.Fatalf("New: %v: problems %+v", err, ps)
	}
	if !strings.HasSuffix(err.Error(), "create it or fix the path") {
		t.Errorf("error %q lost its fix", err)
	}
}
