package libbox

// The machine-readable form of a sandbox's set-up errors: a program (a
// binding, a judge back-end) learns from the report's errorKind and
// problems what went wrong and what to change, without parsing the
// one-line message. The message stays the error's text: Problems only
// classifies errors, it never rewords them.

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorKind classifies a set-up error (Report.ErrorKind, Problem.Kind).
type ErrorKind string

// The kinds of set-up error.
const (
	// ErrorInvalidOptions: an option is malformed or contradicts another,
	// or names a host path that does not exist (Problem.Field names it).
	ErrorInvalidOptions ErrorKind = "invalid-options"
	// ErrorLimitUnavailable: a limit asked for cannot be enforced for this
	// caller on this host, and its degradation was not allowed
	// (Problem.Limit names it, Problem.Fix says what to do).
	ErrorLimitUnavailable ErrorKind = "limit-unavailable"
	// ErrorProgramNotFound and ErrorProgramNotExecutable: the program
	// could not be started (exit codes 127 and 126).
	ErrorProgramNotFound      ErrorKind = "program-not-found"
	ErrorProgramNotExecutable ErrorKind = "program-not-executable"
	// ErrorSetupFailed: anything else that kept the sandbox from being set
	// up (a mount, the cgroup, the kernel refusing a namespace...).
	ErrorSetupFailed ErrorKind = "setup-failed"
)

// OptionError is a bad option, named by its JSON path in the contract
// ("limits.memory", "mounts[0].source"), or options that are not the
// contract's JSON at all (Field "").
type OptionError struct {
	Field string
	// Err says what is wrong, phrased to follow the field name, and
	// usually what to do.
	Err error
}

func (e *OptionError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}
func (e *OptionError) Unwrap() error { return e.Err }

// LimitError is a limit that this host cannot enforce for the caller, as
// asked, when its degradation was not allowed.
type LimitError struct {
	Limit LimitName
	// Reason says why the limit cannot be enforced.
	Reason string
	// Fix says what the caller can do about it.
	Fix string
}

func (e *LimitError) Error() string {
	return "limits." + string(e.Limit) + ": " + e.Reason + "; " + e.Fix
}

// Problem is one cause of a set-up error, in the contract's form (the
// report's "problems").
type Problem struct {
	Kind ErrorKind `json:"kind"`
	// Field is the option at fault, by its JSON path, when one is.
	Field string `json:"field,omitempty"`
	// Limit is the limit that cannot be enforced (ErrorLimitUnavailable).
	Limit LimitName `json:"limit,omitempty"`
	// Message is this cause's one-line error.
	Message string `json:"message"`
	// Fix says what to do, when the runtime knows.
	Fix string `json:"fix,omitempty"`
}

// Problems breaks a set-up error (from New, Run or the CLI) down into its
// causes, in order: one Problem per bad option or unenforceable limit, or
// a single one for any other error. It returns nil for a nil error.
func Problems(err error) []Problem {
	if err == nil {
		return nil
	}
	ps, _ := problems(err)
	return ps
}

// problems walks err's tree; typed reports whether it found any
// OptionError or LimitError, whose problems then stand for the branch.
func problems(err error) (ps []Problem, typed bool) {
	var oe *OptionError
	var le *LimitError
	switch {
	case errors.As(err, &le) && isDirect(err, le):
		return []Problem{{Kind: ErrorLimitUnavailable, Field: "limits." + string(le.Limit), Limit: le.Limit, Message: le.Error(), Fix: le.Fix}}, true
	case errors.As(err, &oe) && isDirect(err, oe):
		return []Problem{{Kind: ErrorInvalidOptions, Field: oe.Field, Message: oe.Error()}}, true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			p, t := problems(e)
			ps = append(ps, p...)
			typed = typed || t
		}
		if typed {
			return ps, true
		}
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			if p, t := problems(inner); t {
				return p, true
			}
		}
	}
	// An error with no typed cause is one problem, with its whole text
	// (the outermost wrapper of a branch says the most).
	p := Problem{Kind: ErrorSetupFailed, Message: err.Error()}
	switch {
	case errors.Is(err, ErrProgramNotFound):
		p.Kind = ErrorProgramNotFound
		p.Fix = "the sandbox sees the host's /usr, /bin, /sbin and /lib* only, and has no PATH unless the environment sets one: use an absolute path, set PATH in env, or mount the directory the program is in"
	case errors.Is(err, ErrProgramNotExecutable):
		p.Kind = ErrorProgramNotExecutable
		p.Fix = "it must be a regular file the sandbox's user may execute, on a mount without noexec"
	}
	return []Problem{p}, false
}

// isDirect reports whether target is err itself, or reached from it
// through single wrappers only (not through a joined error, whose other
// branches must be walked too).
func isDirect(err, target error) bool {
	for err != nil {
		if err == target {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// SetupErrorReport is the report of a sandbox that could not be set up
// because of err (a New that failed, say): status setup-error, the exit
// code a shell would give (125; 126 not executable; 127 not found), the
// one-line error and its problems.
func SetupErrorReport(err error) *Report {
	rep := &Report{Version: ContractVersion, Status: StatusSetupError, ExitCode: ExitSetupError}
	rep.Isolation.Rootless = hostRootless()
	rep.setError(err)
	return rep
}

// setError records a set-up error in the report.
func (r *Report) setError(err error) {
	r.Error = err.Error()
	r.Problems = Problems(err)
	if len(r.Problems) > 0 {
		r.ErrorKind = r.Problems[0].Kind
	}
	switch {
	case errors.Is(err, ErrProgramNotFound):
		r.ExitCode = ExitNotFound
	case errors.Is(err, ErrProgramNotExecutable):
		r.ExitCode = ExitNotExecutable
	}
}

// fieldError is a bad option, named by its JSON path.
func fieldError(field, format string, args ...any) error {
	return &OptionError{Field: field, Err: fmt.Errorf(format, args...)}
}

// joinFix joins the parts of a fix that are not empty with "; ".
func joinFix(parts ...string) string {
	var s []string
	for _, p := range parts {
		if p != "" {
			s = append(s, p)
		}
	}
	return strings.Join(s, "; ")
}
