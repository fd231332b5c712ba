package libbox

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// outputCap counts a run's stdout and stderr together against a limit.
// The runtime reads the program's pipes itself and keeps (or relays) at
// most limit bytes: nothing is ever buffered without bound in the host.
// Past the limit the rest is read and dropped, and, when kill is set (a
// limit was asked for), exceeded is closed so the run can kill the
// sandbox.
type outputCap struct {
	limit int64
	kill  bool

	mu        sync.Mutex
	total     int64
	truncated bool

	exceeded chan struct{}
	once     sync.Once
	writers  []*capWriter
	wg       sync.WaitGroup
}

func newOutputCap(limit int64, kill bool) *outputCap {
	return &outputCap{limit: limit, kill: kill, exceeded: make(chan struct{})}
}

// capWriter copies one pipe into dst through the cap.
type capWriter struct {
	c   *outputCap
	dst io.Writer
	r   *os.File
}

// writer is a stream whose output goes to dst (a buffer, or the caller's
// stdout relayed).
func (c *outputCap) writer(dst io.Writer) *capWriter {
	w := &capWriter{c: c, dst: dst}
	c.writers = append(c.writers, w)
	return w
}

// attach gives the writer the read end of its pipe.
func (w *capWriter) attach(r *os.File) { w.r = r }

// start copies every attached pipe until EOF.
func (c *outputCap) start() {
	if c == nil {
		return
	}
	for _, w := range c.writers {
		if w.r == nil {
			continue
		}
		c.wg.Add(1)
		go w.copy()
	}
}

// abort closes the pipes of a run that never started.
func (c *outputCap) abort() {
	if c == nil {
		return
	}
	for _, w := range c.writers {
		if w.r != nil {
			w.r.Close()
			w.r = nil
		}
	}
}

// leakGrace is how long wait lets the copies run once the sandbox is dead.
// They end at EOF as soon as the pipe is drained, since every process that
// held a write end is gone; only a write end leaked out of the sandbox (over
// a bind-mounted host socket) could keep one open, and is not waited for
// longer than this.
const leakGrace = time.Second

// wait returns once the copies are done: call it when the sandbox's
// processes are all dead.
func (c *outputCap) wait() {
	if c == nil {
		return
	}
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(leakGrace):
		for _, w := range c.writers {
			if w.r != nil {
				_ = w.r.SetReadDeadline(time.Now())
			}
		}
		<-done
	}
	for _, w := range c.writers {
		if w.r != nil {
			w.r.Close()
			w.r = nil
		}
	}
}

func (w *capWriter) copy() {
	defer w.c.wg.Done()
	buf := make([]byte, 32<<10)
	dstOK := true
	for {
		n, err := w.r.Read(buf)
		if n > 0 {
			keep := w.c.account(int64(n))
			if keep > 0 && dstOK {
				if _, werr := w.dst.Write(buf[:keep]); werr != nil {
					// The caller's end went away: keep draining, so the
					// program is not blocked or killed by SIGPIPE for it.
					dstOK = false
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
				w.c.markTruncated()
			}
			return
		}
	}
}

// account adds n bytes read and returns how many of them to keep.
func (c *outputCap) account(n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := max(c.limit-c.total, 0)
	c.total += n
	if n <= room {
		return n
	}
	c.truncated = true
	if c.kill {
		c.once.Do(func() { close(c.exceeded) })
	}
	return room
}

func (c *outputCap) markTruncated() {
	c.mu.Lock()
	c.truncated = true
	c.mu.Unlock()
}

// totals are the bytes written and whether some were dropped.
func (c *outputCap) totals() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.truncated
}
