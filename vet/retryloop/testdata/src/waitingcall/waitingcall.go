// Package waitingcall holds, written anew, retry loops whose second call
// is a client method that waits inside (a bus request re-published after
// a pause): its failure, not the first call's, is what goes round.
package waitingcall

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"example.com/jskv"
)

type broker struct{ js *jskv.Conn }

// retryOnTimeout waits cooldown and says to go again when err is a
// timeout and attempts remain.
func retryOnTimeout(err error, attempts *int, cooldown time.Duration) bool {
	if errors.Is(err, jskv.ErrTimeout) && *attempts > 0 {
		*attempts--
		time.Sleep(cooldown)
		return true
	}
	return false
}

// The epoch is claimed by creating its key: a key that exists is read
// back, a timed-out create goes round after a constant second.
//
// case: flag nojitter
func (b *broker) claimEpoch(fresh string) (string, error) {
	attempts := 5
again:
	kv, err := b.js.Bucket(context.Background(), "epoch")
	if err != nil {
		return "", err
	}
	err = kv.Create(context.Background(), "epoch", fresh)
	if err != nil && strings.Contains(err.Error(), "key exists") {
		return kv.Get(context.Background(), "epoch")
	} else if err != nil {
		if retryOnTimeout(err, &attempts, time.Second) { // want `nojitter: retryOnTimeout in a retry loop has a constant or purely exponential duration`
			goto again
		}
		return "", err
	}
	return fresh, nil
}

// The same claim as a for loop, the pause a random time.
//
// case: clean
func (b *broker) claimEpochJittered(fresh string) (string, error) {
	for attempts := 5; ; {
		kv, err := b.js.Bucket(context.Background(), "epoch")
		if err != nil {
			return "", err
		}
		err = kv.Create(context.Background(), "epoch", fresh)
		if err == nil {
			return fresh, nil
		}
		if !retryOnTimeout(err, &attempts, rand.N(time.Second)) {
			return "", err
		}
	}
}

// The same claim as a for loop, the pause constant.
//
// case: flag nojitter
func (b *broker) claimEpochFor(fresh string) (string, error) {
	for attempts := 5; ; {
		kv, err := b.js.Bucket(context.Background(), "epoch")
		if err != nil {
			return "", err
		}
		err = kv.Create(context.Background(), "epoch", fresh)
		if err == nil {
			return fresh, nil
		}
		if !retryOnTimeout(err, &attempts, 500*time.Millisecond) { // want `nojitter: retryOnTimeout in a retry loop has a constant or purely exponential duration`
			return "", err
		}
	}
}

// A read-back that waits for the key to appear, a poll at the caller's
// pace: no failure goes round.
//
// case: clean
func (b *broker) awaitEpoch(ctx context.Context) (string, error) {
	for {
		kv, err := b.js.Bucket(ctx, "epoch")
		if err != nil {
			return "", err
		}
		v, err := kv.Get(ctx, "epoch")
		if err != nil {
			return "", err
		}
		if v != "" {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
}

// fetchEpoch asks the bus for the epoch, giving a fresh connection a
// constant moment to settle first.
func fetchEpoch(kv *jskv.Bucket, fresh bool) (string, error) {
	if fresh {
		time.Sleep(100 * time.Millisecond)
	}
	return kv.Get(context.Background(), "epoch")
}

// A reload whose one call is the package's own request that pauses inside
// itself, the loop's own pause five seconds more on each failure: with no
// other call to read as the attempt, the request that waits is it.
//
// case: flag nojitter
func reload(kv *jskv.Bucket, retries int) (string, error) {
	var v string
	var err error
	for i := 1; i <= retries; i++ {
		v, err = fetchEpoch(kv, i == 1)
		if err == nil {
			break
		}
		time.Sleep(time.Duration(5*i) * time.Second) // want `nojitter: this wait in a retry loop`
	}
	return v, err
}

// The same with a random pause up to the growing one.
//
// case: clean
func reloadJittered(kv *jskv.Bucket, retries int) (string, error) {
	var v string
	var err error
	for i := 1; i <= retries; i++ {
		v, err = fetchEpoch(kv, i == 1)
		if err == nil {
			break
		}
		time.Sleep(rand.N(time.Duration(5*i) * time.Second))
	}
	return v, err
}

// pool is a cluster's nodes, each a bucket; a failed node is dropped.
type pool struct{ nodes []*jskv.Bucket }

func (p *pool) next() *jskv.Bucket {
	if len(p.nodes) == 0 {
		return nil
	}
	return p.nodes[0]
}

func (p *pool) drop(kv *jskv.Bucket) {
	for i, n := range p.nodes {
		if n == kv {
			p.nodes = append(p.nodes[:i], p.nodes[i+1:]...)
			return
		}
	}
}

// A failover: each node that fails is dropped and the next one asked,
// until none is left. The request pauses inside itself, and the loop has
// no pause of its own: nothing to judge, and no endless retry.
//
// case: clean
func (p *pool) epoch() (string, error) {
	for kv := p.next(); kv != nil; kv = p.next() {
		v, err := fetchEpoch(kv, true)
		if err == nil {
			return v, nil
		}
		p.drop(kv)
	}
	return "", errors.New("no node left")
}
