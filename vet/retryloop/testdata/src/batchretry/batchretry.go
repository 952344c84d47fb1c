// want package:"offline"

// Package batchretry holds batches retried by their failures: each round
// applies every operation of a work set, keeps those that failed, leaves
// when none did, and makes the failures the next round's work set.
package batchretry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Op is one operation of a batch.
type Op struct{ Name string }

// Applier applies an operation on a remote server.
type Applier interface {
	Apply(ctx context.Context, op Op) error
}

// delays is a backoff table: constants, never randomised.
var delays = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

// applyAll retries the failed operations on a table of constant delays,
// the last one for ever: nothing counts the rounds but the table's index.
//
// case: flag nojitter unbounded
func applyAll(a Applier, batch map[string]Op) {
	for i := 0; ; i++ { // want `unbounded: retry loop has no bound`
		failed := map[string]Op{}
		for name, op := range batch {
			if err := a.Apply(context.Background(), op); err != nil {
				failed[name] = op
			}
		}
		if len(failed) == 0 {
			break
		}
		batch = failed
		d := 16 * time.Second
		if i < len(delays) {
			d = delays[i]
		}
		time.Sleep(d) // want `nojitter: this wait in a retry loop`
	}
}

// applyAllCounted is applyAll's twin that gives up after five rounds.
//
// case: flag nojitter
func applyAllCounted(a Applier, batch map[string]Op) map[string]Op {
	for i := 0; ; i++ {
		failed := map[string]Op{}
		for name, op := range batch {
			if err := a.Apply(context.Background(), op); err != nil {
				failed[name] = op
			}
		}
		if len(failed) == 0 {
			return nil
		}
		if i == 5 {
			return failed
		}
		batch = failed
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}

// sendAll keeps the failed operations of a slice, waits a random part of
// a doubling delay, and stops with the caller's context.
//
// case: clean
func sendAll(ctx context.Context, a Applier, ops []Op) error {
	for i := 0; ; i++ {
		var failed []Op
		for _, op := range ops {
			if err := a.Apply(ctx, op); err != nil {
				failed = append(failed, op)
			}
		}
		if len(failed) == 0 {
			return nil
		}
		ops = failed
		d := time.Duration(rand.Int64N(int64(time.Second << min(i, 6))))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// sendAllPaced is sendAll's twin waiting a constant second: the context
// bounds it, nothing spreads the clients.
//
// case: flag nojitter
func sendAllPaced(ctx context.Context, a Applier, ops []Op) error {
	for {
		var failed []Op
		for _, op := range ops {
			if err := a.Apply(ctx, op); err != nil {
				failed = append(failed, op)
			}
		}
		if len(failed) == 0 {
			return nil
		}
		ops = failed
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		}
	}
}

// drain applies each batch taken from a queue once, at the queue's pace,
// and only logs the failures: no operation is tried again.
//
// case: clean
func drain(ctx context.Context, a Applier, queue <-chan []Op, report func([]Op)) {
	for {
		var batch []Op
		select {
		case <-ctx.Done():
			return
		case batch = <-queue:
		}
		var failed []Op
		for _, op := range batch {
			if err := a.Apply(ctx, op); err != nil {
				failed = append(failed, op)
			}
		}
		if len(failed) == 0 {
			continue
		}
		report(failed)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// resubmit re-sends, for at most ten rounds, the operations whose index
// an earlier send left in failed, a constant 200 ms apart: the loop's own
// condition asks that something failed.
//
// case: flag nojitter
func resubmit(ctx context.Context, a Applier, ops []Op, failed []int) []int {
	var next []int
	for round := 0; len(failed) > 0 && round < 10; round++ {
		select {
		case <-ctx.Done():
			return failed
		case <-time.After(200 * time.Millisecond): // want `nojitter: this wait in a retry loop`
		}
		next = nil
		for _, i := range failed {
			if err := a.Apply(ctx, ops[i]); err != nil {
				next = append(next, i)
			}
		}
		failed = next
	}
	return failed
}

// resubmitSpread is resubmit's twin waiting a random part of a second.
//
// case: clean
func resubmitSpread(ctx context.Context, a Applier, ops []Op, failed []int) []int {
	var next []int
	for round := 0; len(failed) > 0 && round < 10; round++ {
		select {
		case <-ctx.Done():
			return failed
		case <-time.After(rand.N(time.Second)):
		}
		next = nil
		for _, i := range failed {
			if err := a.Apply(ctx, ops[i]); err != nil {
				next = append(next, i)
			}
		}
		failed = next
	}
	return failed
}

// work takes operations off a queue at a steady pace until it is empty,
// handing the failures to report: each operation is tried once.
//
// case: clean
func work(ctx context.Context, a Applier, queue []Op, report func(Op, error)) {
	for len(queue) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		next := queue[1:]
		for _, op := range queue[:1] {
			if err := a.Apply(ctx, op); err != nil {
				report(op, err)
			}
		}
		queue = next
	}
}
