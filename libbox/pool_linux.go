package libbox

// The warm pool: N sandboxes created ahead (namespaces, mounts, cgroup,
// credentials and filters ready; init waiting in the created state with no
// program, deferred_linux.go), so that a Run costs only the start: the
// program given to init, lookPath, execve. A sandbox runs one program and
// is destroyed after it, never reused; a new one is created in the
// background in its place.
//
// Each pooled sandbox has a keeper goroutine, locked to the thread that
// created its init (its parent-death signal is tied to that thread), which
// waits to be taken by a Run and, once that Run is over, tears the sandbox
// down: the teardown is off the Run's critical path. The Run itself
// starts, waits for and measures the program on its own goroutine (none
// of that needs init's parent thread: the pidfd names init, and any
// thread of this process may wait for it), so that no hand-over to and
// from the keeper's locked thread, each a wake-up of another thread, is on
// the critical path. Close waits for every keeper.
//
// A pooled sandbox is created with CreateOpts.holdRefs: the keeper holds
// the sandbox's mount namespace and the detached mounts (init's private
// procfs, the runtime binary's read-only bind) until teardown, so that
// neither the program's execve (closing init's descriptors) nor its exit
// (the namespace's last process) tears them down, each with an RCU grace
// period, on the run's critical path.
//
// A pooled sandbox's init waits for its program in the waiter
// (waiter_linux.go), not in the Go runtime, whose teardown at the
// program's execve would otherwise be on the run's critical path.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// noPoolWaiter makes pooled sandboxes wait in their Go init, as they did
// before the waiter (waiter_linux.go): the reference its tests compare to.
var noPoolWaiter bool

// resumeTasks is about what the waiter's resume (waiter_linux.go), a new Go
// runtime, needs of a pids limit to start: its threads. Below it, a
// pooled sandbox's init waits for its program in the Go init instead
// (which starts no thread once the limit is written: quiesceRuntime), so
// that a program not found is still reported as such.
const resumeTasks = 8

func tooFewTasksToResume(pids int64) bool { return pids > 0 && pids < resumeTasks }

// ErrPoolClosed is returned by Run on a closed pool.
var ErrPoolClosed = errors.New("the pool is closed")

// Pool keeps sandboxes made from one set of Options ready to run. It is
// safe for concurrent use.
type Pool struct {
	sb *Sandbox
	n  int

	// take hands a ready sandbox to a Run: every ready keeper is blocked
	// sending on it.
	take    chan *pooled
	closing chan struct{}
	keepers sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	ready   int
	failed  error         // the last create's error, until one succeeds
	changed chan struct{} // closed and replaced when ready or failed change
}

// pooled is one pre-created sandbox, or the error that creating it gave.
// The Run that takes it owns in, out and the buffers until it closes
// done; the keeper then destroys the sandbox.
type pooled struct {
	err            error
	in             *instance
	out            *outputCap
	stdout, stderr *bytes.Buffer
	done           chan struct{}
}

// NewPool validates opts as New does and starts creating n sandboxes in
// the background; Warm waits for them. n must be at least 1.
func NewPool(opts Options, n int) (*Pool, error) {
	if n < 1 {
		return nil, fmt.Errorf("pool: size %d: give at least 1", n)
	}
	sb, err := New(opts)
	if err != nil {
		return nil, err
	}
	p := &Pool{sb: sb, n: n, take: make(chan *pooled), closing: make(chan struct{}), changed: make(chan struct{})}
	for range n {
		p.refill()
	}
	return p, nil
}

// Size is the number of sandboxes the pool keeps ready.
func (p *Pool) Size() int { return p.n }

// Sandbox is the Sandbox the pool's sandboxes are made from (its options,
// state root).
func (p *Pool) Sandbox() *Sandbox { return p.sb }

// Warm waits until all the pool's sandboxes are ready, or ctx ends; when
// creating one failed, Warm returns that error (and the next Run too).
func (p *Pool) Warm(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return ErrPoolClosed
		}
		if p.ready >= p.n {
			p.mu.Unlock()
			return nil
		}
		if err := p.failed; err != nil {
			p.mu.Unlock()
			return err
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Pool) addReady(d int, failed error) {
	p.mu.Lock()
	p.ready += d
	if d > 0 || failed != nil {
		p.failed = failed
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// refill starts a keeper that creates one sandbox, unless the pool is
// closed.
func (p *Pool) refill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.keepers.Add(1)
	go p.keep()
}

// Run runs name with args in a ready sandbox, as Sandbox.Run does (output
// kept up to the output limit, the report, ctx), and then starts replacing
// it with a new one in the background. Without a ready sandbox it waits for
// the next.
func (p *Pool) Run(ctx context.Context, name string, args ...string) (*Result, error) {
	if name == "" {
		return nil, errors.New("pool: no program given")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var w *pooled
	select {
	case w = <-p.take:
	case <-p.closing:
		return nil, ErrPoolClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The replacement is made once this run is over: made now, on a
	// small host it would compete with the run for the CPUs.
	defer p.refill()
	if w.err != nil {
		return nil, w.err
	}
	defer close(w.done)
	res, err := w.in.runDeferred(ctx, append([]string{name}, args...), w.out)
	if res != nil {
		res.Stdout, res.Stderr = w.stdout.Bytes(), w.stderr.Bytes()
	}
	return res, err
}

// keep is a pooled sandbox's keeper (see the top of the file).
func (p *Pool) keep() {
	defer p.keepers.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := p.sb
	var stdout, stderr bytes.Buffer
	rio := s.bufferedIO(&stdout, &stderr)
	rio.holdRefs = true
	rio.waiter = !noPoolWaiter && !tooFewTasksToResume(s.opts.Limits.Pids)
	out := rio.out
	in, err := s.create(nil, &rio)
	w := &pooled{err: err, in: in, out: out, stdout: &stdout, stderr: &stderr, done: make(chan struct{})}
	if err != nil {
		_ = in.destroy()
		out.wait()
		w.err = fmt.Errorf("pool: create a sandbox: %w", err)
		p.addReady(0, w.err)
		select {
		case p.take <- w:
		case <-p.closing:
		}
		return
	}
	defer func() {
		_ = in.destroy()
		out.wait()
	}()
	in.measureInit()
	in.stats = prefetchStats(in.cg)
	p.addReady(1, nil)
	select {
	case p.take <- w:
		p.addReady(-1, nil)
	case <-p.closing:
		p.addReady(-1, nil)
		return
	}
	<-w.done
}

// runDeferred starts a created sandbox's deferred init with args and
// supervises the run, as run does.
func (in *instance) runDeferred(ctx context.Context, args []string, out *outputCap) (*Result, error) {
	if err := in.startProgram(args); err != nil {
		in.kill()
		out.wait()
		return in.sb.setupFailure(in, err), fmt.Errorf("start sandbox: %w", err)
	}
	exit := in.supervise(ctx, out)
	out.wait()
	rep := in.collect(exit, out)
	res := &Result{ExitCode: rep.ExitCode, Signal: unix.Signal(rep.Signal), OutputTruncated: rep.OutputTruncated, Report: rep}
	if exit.reason == StatusCancelled {
		return res, ctx.Err()
	}
	return res, nil
}

// Close stops the pool: the ready sandboxes are destroyed, Runs in
// progress finish, and Close returns once every sandbox of the pool is
// gone. Run then returns ErrPoolClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.closing)
		close(p.changed)
		p.changed = make(chan struct{})
	}
	p.mu.Unlock()
	p.keepers.Wait()
	return nil
}
