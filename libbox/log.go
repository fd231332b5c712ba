package libbox

// Logger receives what the runtime has to say that is not an error: the
// parent side's warnings (a cgroup that already holds processes), and what
// a container's init or an exec'd process logs while it sets up, forwarded
// over the sync socket at the level it was logged (sync.go). A nil Logger
// drops it all. *logrus.Logger is one. Its methods may be called from more
// than one goroutine at once (create makes the cgroup on one of its own).
type Logger interface {
	Debugf(format string, args ...any)
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	Errorf(format string, args ...any)
}

type nopLogger struct{}

func (nopLogger) Debugf(string, ...any) {}
func (nopLogger) Infof(string, ...any)  {}
func (nopLogger) Warnf(string, ...any)  {}
func (nopLogger) Errorf(string, ...any) {}

// orNop is l, or a Logger that drops everything.
func orNop(l Logger) Logger {
	if l == nil {
		return nopLogger{}
	}
	return l
}
