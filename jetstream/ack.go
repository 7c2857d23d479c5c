package jetstream

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ack is a published message's outcome. A PubAckFuture's channels deliver
// once; an ack remembers, so that several waiters (a Sync, a SyncDir, a
// resync) can ask.
type ack struct {
	fut jetstream.PubAckFuture

	mu   sync.Mutex
	done bool
	seq  uint64
	err  error
}

// wait waits for the outcome until deadline; timed out reports a wait
// that ended first.
func (a *ack) wait(deadline <-chan time.Time) (seq uint64, err error, timedOut bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		select { // the outcome first, when it is there
		case pa := <-a.fut.Ok():
			a.seq, a.done = pa.Sequence, true
		case err := <-a.fut.Err():
			a.err, a.done = err, true
		default:
		}
	}
	if !a.done {
		select {
		case pa := <-a.fut.Ok():
			a.seq, a.done = pa.Sequence, true
		case err := <-a.fut.Err():
			a.err, a.done = err, true
		case <-deadline:
			return 0, nil, true
		}
	}
	return a.seq, a.err, false
}

// settled reports whether the outcome is known, without waiting.
func (a *ack) settled() bool {
	_, _, timedOut := a.wait(closed)
	return !timedOut
}

var closed = func() chan time.Time { c := make(chan time.Time); close(c); return c }()

// waitAll waits for every ack, each up to timeout after the one before
// it arrived (a long pipeline answers at the server's pace); the first
// failure is returned.
func waitAll(acks []*ack, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for _, a := range acks {
		_, err, timedOut := a.wait(timer.C)
		if timedOut {
			return fmt.Errorf("no acknowledgement within %v: %w", timeout, nats.ErrTimeout)
		}
		if err != nil {
			return err
		}
		timer.Reset(timeout) // since Go 1.23 a Reset timer never delivers a stale tick
	}
	return nil
}

// waitOne waits for one ack and returns its sequence.
func waitOne(a *ack, timeout time.Duration) (uint64, error) {
	if err := waitAll([]*ack{a}, timeout); err != nil {
		return 0, err
	}
	seq, _, _ := a.wait(closed)
	return seq, nil
}
