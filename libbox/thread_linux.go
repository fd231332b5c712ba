package libbox

import "runtime"

// onOwnThread runs fn on an OS thread of its own and returns fn's
// error. The thread is never unlocked: the Go runtime ends it with its
// goroutine, so what fn changed about it (its mount namespace, its
// filesystem context, its CPU affinity) never reaches another goroutine.
func onOwnThread(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- fn()
	}()
	return <-done
}
