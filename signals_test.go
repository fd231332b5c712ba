package main

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCatchSignals: signals sent to the process arrive on the channel, in
// order, through the pipe handler; a later catch of a signal takes it.
func TestCatchSignals(t *testing.T) {
	rt := sigRTMin + 3
	sigs := catchSignals([]unix.Signal{unix.SIGUSR1, rt})
	for _, s := range []unix.Signal{unix.SIGUSR1, rt, unix.SIGUSR1} {
		if err := unix.Kill(os.Getpid(), s); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-sigs:
			if got != s {
				t.Fatalf("got %v, want %v", got, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v did not arrive", s)
		}
	}
	// A second catch of the same signal takes it over.
	again := catchSignals([]unix.Signal{rt})
	if err := unix.Kill(os.Getpid(), rt); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-again:
		if got != rt {
			t.Fatalf("got %v, want %v", got, rt)
		}
	case <-sigs:
		t.Fatal("the signal went to the first channel")
	case <-time.After(10 * time.Second):
		t.Fatalf("%v did not arrive", rt)
	}
}
