// want package:"offline"

// Package answers holds, written anew, calls that wait for an answer with
// a timeout — a request over a message bus, a flush given a moment to
// finish — and the loops around them. A timeout on an answer is part of
// the attempt, not a pause between attempts.
package answers

import (
	"errors"
	"math/rand"
	"os"
	"time"
)

var errTimeout = errors.New("no answer in time")

// reply is a peer's answer; Error, when set, says the peer refused.
type reply struct {
	Error string
	Data  []byte
}

// bus carries requests to peers and their answers back.
type bus struct {
	out     chan []byte
	replies chan reply
}

// request sends a request and waits for the answer or gives up after
// timeout.
func (b *bus) request(data []byte, timeout time.Duration) (reply, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case b.out <- data:
	case <-t.C:
		return reply{}, errTimeout
	}
	select {
	case r := <-b.replies:
		return r, nil
	case <-t.C:
		return reply{}, errTimeout
	}
}

// Joining a group: a request that failed, or an answer that says the peer
// refused, goes round after a constant pause; the request's own timeout is
// part of the attempt.
//
// case: flag nojitter
func join(b *bus) (reply, error) {
	for i := 0; i < 5; i++ {
		r, err := b.request([]byte("join"), 2*time.Second)
		if err != nil {
			time.Sleep(20 * time.Millisecond) // want `nojitter: this wait in a retry loop`
			continue
		}
		if r.Error != "" {
			time.Sleep(20 * time.Millisecond) // want `nojitter: this wait in a retry loop`
			continue
		}
		return r, nil
	}
	return reply{}, errors.New("could not join")
}

// The same loop with a jittered pause: clean.
//
// case: clean
func joinJittered(b *bus) (reply, error) {
	for i := 0; i < 5; i++ {
		r, err := b.request([]byte("join"), 2*time.Second)
		if err == nil && r.Error == "" {
			return r, nil
		}
		time.Sleep(time.Duration(rand.Int63n(int64(100 * time.Millisecond << i))))
	}
	return reply{}, errors.New("could not join")
}

// fatalf logs and ends the process, first giving the log's flush a moment
// to finish in case it hangs.
func fatalf(msg string) {
	done := make(chan bool, 1)
	go func() {
		os.Stderr.WriteString(msg)
		done <- true
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	os.Exit(1)
}

// warnOrDie logs a failure, and ends the process on a fatal one.
func warnOrDie(err error, fatal bool) {
	if fatal {
		fatalf(err.Error())
	}
	os.Stderr.WriteString(err.Error())
}

// A failover over mirrors with no wait between them: the log call's timed
// flush (on its fatal path) is no pause.
//
// case: clean
func firstMirror(b *bus, mirrors [][]byte) (reply, error) {
	for _, m := range mirrors {
		r, err := b.request(m, time.Second)
		if err != nil {
			warnOrDie(err, false)
			continue
		}
		return r, nil
	}
	return reply{}, errors.New("no mirror answered")
}

// backoffStep waits *d, then doubles it up to a cap: the caller's variable
// carries the schedule.
func backoffStep(d *time.Duration) {
	time.Sleep(*d)
	*d *= 2
	if *d > 5*time.Second {
		*d = 5 * time.Second
	}
}

var errBusy = errors.New("peer busy")

// decode reads what the peer said: an empty answer means it was busy.
func decode(r reply) error {
	if len(r.Data) == 0 {
		return errBusy
	}
	return nil
}

// A request answered "busy" goes round like a failed one, after a pure
// doubling the helper keeps in the caller's variable. The busy test reads
// the answer's own error, nil on a success.
//
// case: flag nojitter
func fetchState(b *bus) ([]byte, error) {
	wait := 50 * time.Millisecond
	var err error
	for i := 0; i < 6; i++ {
		if i > 0 {
			backoffStep(&wait) // want `nojitter: backoffStep in a retry loop`
		}
		var r reply
		r, err = b.request([]byte("state"), time.Second)
		if err != nil {
			continue
		}
		err = decode(r)
		if err == errBusy {
			continue
		}
		return r.Data, err
	}
	return nil, err
}

// The same loop with a random wait: clean.
//
// case: clean
func fetchStateJittered(b *bus) ([]byte, error) {
	var err error
	for i := 0; i < 6; i++ {
		if i > 0 {
			time.Sleep(time.Duration(rand.Int63n(int64(50 * time.Millisecond << i))))
		}
		var r reply
		r, err = b.request([]byte("state"), time.Second)
		if err != nil {
			continue
		}
		err = decode(r)
		if err == errBusy {
			continue
		}
		return r.Data, err
	}
	return nil, err
}
