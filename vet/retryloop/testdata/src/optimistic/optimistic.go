// want package:"offline"

// Package optimistic holds optimistic-concurrency retries: read a record
// from a shared store, write it back on the version read, and go round
// when another client wrote first.
package optimistic

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"example.com/ratelimit"
)

// Record is a lease as the store keeps it.
type Record struct {
	Owner   string
	Expiry  time.Time
	Holders int
}

// Store is a shared store with conditional writes.
type Store interface {
	Get(key string) (*Record, error)
	Put(key string, rec *Record) error
}

// ErrConflict is Put's answer when the record changed since it was read.
var ErrConflict = errors.New("version changed")

// acquire takes a lease over an expired one: the expiry it tests is the
// record read this round, so it chooses a branch and bounds nothing;
// conflicts go round for ever, a second apart.
//
// case: flag nojitter unbounded
func acquire(st Store, key, me string) error {
retry: // want `unbounded: retry loop has no bound`
	rec, err := st.Get(key)
	if err != nil {
		return err
	}
	if time.Now().After(rec.Expiry) {
		err := st.Put(key, &Record{Owner: me, Expiry: time.Now().Add(time.Minute)})
		if errors.Is(err, ErrConflict) {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			goto retry
		}
		return err
	}
	return errors.New("held")
}

// acquireFor is acquire's twin with a deadline fixed before the loop: the
// clock runs it out.
//
// case: flag nojitter
func acquireFor(st Store, key, me string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
retry:
	rec, err := st.Get(key)
	if err != nil {
		return err
	}
	if time.Now().After(deadline) {
		return errors.New("timed out")
	}
	rec.Owner = me
	err = st.Put(key, rec)
	if errors.Is(err, ErrConflict) {
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
		goto retry
	}
	return err
}

// renew re-writes a lease on conflict; the store's read failing ends it,
// but a read that fails only when the write does bounds no conflicts.
//
// case: flag nojitter unbounded
func renew(st Store, key string, ttl time.Duration) error {
	for { // want `unbounded: retry loop has no bound`
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		rec.Expiry = time.Now().Add(ttl)
		err = st.Put(key, rec)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// renewCounted is renew's twin with a count that carries over.
//
// case: flag nojitter
func renewCounted(st Store, key string, ttl time.Duration) error {
	for tries := 0; ; tries++ {
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		rec.Expiry = time.Now().Add(ttl)
		err = st.Put(key, rec)
		if !errors.Is(err, ErrConflict) || tries == 5 {
			return err
		}
		time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// renewAllowed is renew's twin that asks a limiter, another object, at the
// top of each round: its refusal is a verdict out of sight that may count,
// met again in the round after every conflict.
//
// case: flag nojitter
func renewAllowed(st Store, lim ratelimit.Limiter, key string, ttl time.Duration) error {
	for {
		if err := lim.Allow(); err != nil {
			return err
		}
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		rec.Expiry = time.Now().Add(ttl)
		err = st.Put(key, rec)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// renewTimed times each round and gives up on a slow one: a timer set
// afresh each round never runs out over the rounds, so quick conflicts go
// round for ever.
//
// case: flag nojitter unbounded
func renewTimed(st Store, key string, ttl time.Duration) error {
	for { // want `unbounded: retry loop has no bound`
		start := time.Now()
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		rec.Expiry = start.Add(ttl)
		err = st.Put(key, rec)
		if time.Since(start) > ttl {
			return errors.New("too slow")
		}
		if !errors.Is(err, ErrConflict) {
			return err
		}
		time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// renewSince is renewTimed's twin with the start taken before the loop:
// the time since it runs out.
//
// case: flag nojitter
func renewSince(st Store, key string, ttl time.Duration) error {
	begin := time.Now()
	for {
		elapsed := time.Since(begin)
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		rec.Expiry = time.Now().Add(ttl)
		err = st.Put(key, rec)
		if elapsed > 10*ttl {
			return errors.New("gave up")
		}
		if !errors.Is(err, ErrConflict) {
			return err
		}
		time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// share joins a shared lease: the write that conflicts is tried after a
// read of the same store, and the read's failure, the only way out before
// the write, is the store failing, not a bound on the conflicts.
//
// case: flag nojitter unbounded
func share(st Store, key string) error {
retry: // want `unbounded: retry loop has no bound`
	if rec, err := st.Get(key); err != nil {
		return err
	} else {
		rec.Holders++
		if err := st.Put(key, rec); errors.Is(err, ErrConflict) {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			goto retry
		} else if err != nil {
			return err
		}
	}
	return nil
}

// shareCounted is share's twin that counts its conflicts.
//
// case: flag nojitter
func shareCounted(st Store, key string) error {
	conflicts := 0
retry:
	if rec, err := st.Get(key); err != nil {
		return err
	} else {
		rec.Holders++
		if err := st.Put(key, rec); errors.Is(err, ErrConflict) && conflicts < 5 {
			conflicts++
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			goto retry
		} else if err != nil {
			return err
		}
	}
	return nil
}

// update applies the caller's edit to the record and writes it back,
// going round on conflicts: the edit's error says the edit failed, it is
// handed no failure to judge, so it bounds no conflicts.
//
// case: flag nojitter unbounded
func update(st Store, key string, edit func(*Record) error) error {
	for { // want `unbounded: retry loop has no bound`
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		if err := edit(rec); err != nil {
			return err
		}
		err = st.Put(key, rec)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// updateChecked is update's twin that asks the caller, before each
// round, whether to go on: a verdict out of sight that may count.
//
// case: flag nojitter
func updateChecked(st Store, key string, goOn func() error) error {
	for {
		if err := goOn(); err != nil {
			return err
		}
		rec, err := st.Get(key)
		if err != nil {
			return err
		}
		err = st.Put(key, rec)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
}

// sleepCtx waits d or until ctx is done, and says which.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// putHeard writes a record, going round on conflict after a random wait
// that hears the caller: the wait's error, tested as the round makes it,
// is the caller's cancellation, a bound.
//
// case: clean
func putHeard(ctx context.Context, st Store, key string, rec *Record) error {
	for {
		err := st.Put(key, rec)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		if err := sleepCtx(ctx, rand.N(time.Second)); err != nil {
			return err
		}
	}
}
