package libbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Stream is where one of a spawned program's standard streams goes: Pipe,
// Null, Inherit, File(f) or a PTY. A nil Stream is the default: Null for
// stdin, Pipe for stdout and stderr.
type Stream interface{ isStream() }

// StreamKind is a Stream that needs nothing of the caller's.
type StreamKind int

const (
	// Pipe connects the stream to the caller: Child.Stdin is written, and
	// Child.Stdout and Child.Stderr are read, by the caller.
	Pipe StreamKind = iota + 1
	// Null is /dev/null.
	Null
	// Inherit passes the caller's own stdin, stdout or stderr.
	Inherit
)

func (StreamKind) isStream() {}

func (k StreamKind) String() string {
	switch k {
	case Pipe:
		return "pipe"
	case Null:
		return "null"
	case Inherit:
		return "inherit"
	}
	return fmt.Sprintf("StreamKind(%d)", int(k))
}

type fileStream struct{ f *os.File }

func (fileStream) isStream() {}

// File passes f itself as the stream: a file, a socket, a pipe, or the
// slave side of a pty of the caller's. f stays the caller's: libbox never
// closes it. A terminal given as stdin becomes the program's controlling
// terminal (a session of its own), so that ^C and job control work; it must
// not be another session's controlling terminal already (use Inherit for
// the caller's own terminal).
func File(f *os.File) Stream { return fileStream{f} }

// Stdio are the standard streams of a spawned program.
type Stdio struct {
	Stdin, Stdout, Stderr Stream
}

// Terminal is a pseudo-terminal libbox makes for a program (PTY): inside the
// sandbox, in its own devpts, it is the program's stdin, stdout, stderr and
// controlling terminal; the caller has its master side, as Child.Stdin
// (keys typed) and Child.Stdout (what the terminal shows). Give it as any of
// the three streams; the others must then be the same Terminal or nil. A
// Terminal serves one program.
type Terminal struct {
	rows, cols uint16

	mu     sync.Mutex
	master *os.File
	used   bool
}

// PTY is a new pseudo-terminal of rows by cols characters for one program.
func PTY(rows, cols uint16) *Terminal { return &Terminal{rows: rows, cols: cols} }

func (*Terminal) isStream() {}

// Resize sets the terminal's size; the program gets SIGWINCH.
func (t *Terminal) Resize(rows, cols uint16) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows, t.cols = rows, cols
	if t.master == nil {
		return nil // applied when the program starts
	}
	ws := unix.Winsize{Row: rows, Col: cols}
	if err := unix.IoctlSetWinsize(int(t.master.Fd()), unix.TIOCSWINSZ, &ws); err != nil {
		return fmt.Errorf("resize terminal: %w", err)
	}
	return nil
}

// Size is the terminal's size, as set by PTY or Resize.
func (t *Terminal) Size() (rows, cols uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rows, t.cols
}

// claim marks t as used by one program.
func (t *Terminal) claim() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.used {
		return errors.New("stdio: this Terminal already serves another program: make a new one with PTY")
	}
	t.used = true
	return nil
}

func (t *Terminal) setMaster(m *os.File) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.master = m
	ws := unix.Winsize{Row: t.rows, Col: t.cols}
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &ws); err != nil {
		return fmt.Errorf("set terminal size: %w", err)
	}
	return nil
}

func (t *Terminal) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master != nil {
		t.master.Close()
		t.master = nil
	}
}

// streamHighWater is what an output stream keeps unread for the caller
// while the program runs; beyond it the runtime stops reading the pipe, and
// the program blocks writing once the pipe is full, as with a pipe of its
// own.
const streamHighWater = 64 << 10

// outStream carries one of the program's outputs (a pipe's read end, or a
// pty master) to the caller: to a sink (a file, relayed through the output
// limit), or to Read, with backpressure while the program runs. Once the
// program is gone (release), the rest is read without waiting for the
// caller: what is left is at most a pipe's content, and the report then
// counts all of it.
type outStream struct {
	name  string
	src   *os.File
	limit *outputCap // nil: no output limit
	sink  io.Writer  // relay mode

	mu        sync.Mutex
	cond      *sync.Cond
	buf       []byte
	done      bool // src at EOF or failed: the copy ended
	closed    bool // the caller closed its end
	free      bool // the program is gone
	blocked   bool // the copy waits for the caller since blockedAt
	blockedAt time.Time
	lastRead  time.Time
	total     int64
	finished  chan struct{}
}

func newOutStream(name string, src *os.File, limit *outputCap, sink io.Writer) *outStream {
	s := &outStream{name: name, src: src, limit: limit, sink: sink, finished: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *outStream) start() { go s.copy() }

func (s *outStream) copy() {
	defer close(s.finished)
	buf := make([]byte, 32<<10)
	sinkOK := true
	for {
		n, err := s.src.Read(buf)
		if n > 0 {
			keep := int64(n)
			if s.limit != nil {
				keep = s.limit.account(int64(n))
			}
			s.mu.Lock()
			s.total += int64(n)
			s.mu.Unlock()
			switch {
			case keep == 0:
			case s.sink != nil:
				if sinkOK {
					if _, werr := s.sink.Write(buf[:keep]); werr != nil {
						// The caller's end went away: keep draining, so
						// the program is not blocked or killed for it.
						sinkOK = false
					}
				}
			default:
				s.push(buf[:keep])
			}
		}
		if err != nil {
			// EOF; EIO from a pty master once the last slave is closed;
			// a deadline set once the sandbox is gone.
			if s.limit != nil && !errors.Is(err, io.EOF) && !errors.Is(err, unix.EIO) && !errors.Is(err, os.ErrDeadlineExceeded) {
				s.limit.markTruncated()
			}
			break
		}
	}
	s.src.Close()
	s.mu.Lock()
	s.done = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *outStream) push(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.buf = append(s.buf, b...)
	s.cond.Broadcast()
	for len(s.buf) >= streamHighWater && !s.free && !s.closed {
		if !s.blocked {
			s.blocked, s.blockedAt = true, time.Now()
		}
		s.cond.Wait()
	}
	s.blocked = false
}

// Read reads what the program wrote; io.EOF once it is all read and the
// program's side is closed.
func (s *outStream) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf) == 0 && !s.done && !s.closed {
		s.cond.Wait()
	}
	if s.closed {
		return 0, os.ErrClosed
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	if len(s.buf) == 0 {
		s.buf = nil
	}
	s.lastRead = time.Now()
	s.cond.Broadcast()
	return n, nil
}

// Close drops what is unread; the program's further output is discarded.
func (s *outStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.buf = nil
	s.cond.Broadcast()
	return nil
}

// release lets the copy read to the end without waiting for the caller.
func (s *outStream) release() {
	s.mu.Lock()
	s.free = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

// finish waits for the copy to end, once every writer should be gone;
// a writer kept open elsewhere (a descriptor passed out of the sandbox) is
// not waited for longer than leakGrace.
func (s *outStream) finish() {
	s.release()
	select {
	case <-s.finished:
		return
	case <-time.After(leakGrace):
	}
	_ = s.src.SetReadDeadline(time.Now())
	<-s.finished
}

// stuck reports whether the copy has waited for the caller for at least d
// without the caller reading anything: the program is (or will be) blocked
// on a full pipe that nobody drains.
func (s *outStream) stuck(d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocked && !s.free && !s.closed && time.Since(s.blockedAt) >= d && s.lastRead.Before(s.blockedAt)
}

func (s *outStream) bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
