// want package:"offline"

// Package goerrs holds, written anew, loops that start their attempt in
// a goroutine each round and hear how it went on an error channel handed
// to it, and a look-alike that only drains a long-lived worker's errors.
package goerrs

import (
	"context"
	"log"
	"math/rand"
	"strings"
	"time"
)

// streamer keeps a stream open.
type streamer struct {
	open     func(ctx context.Context) error
	interval time.Duration
}

// newStreamer returns a streamer that reconnects every 5 s.
func newStreamer(open func(ctx context.Context) error) *streamer {
	return &streamer{open: open, interval: 5 * time.Second}
}

// serve runs the stream in a goroutine and reports how it ended.
func (s *streamer) serve(ctx context.Context, errCh chan<- error) {
	errCh <- s.open(ctx)
}

// Run reopens the stream after every error it reports, on a constant
// interval.
//
// case: flag nojitter
func (s *streamer) Run(ctx context.Context) { // want Run:`remote=0 waits=true deaf=false jitter=1`
	for {
		errCh := make(chan error, 1)
		go s.serve(ctx, errCh)
		select {
		case err := <-errCh:
			log.Printf("stream ended: %v", err)
			select {
			case <-time.After(s.interval): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// RunJittered is Run with full jitter, the goroutine a literal.
//
// case: clean
func (s *streamer) RunJittered(ctx context.Context) { // want RunJittered:`remote=0 waits=true deaf=false jitter=2`
	for {
		errCh := make(chan error, 1)
		go func() { errCh <- s.open(ctx) }()
		select {
		case err := <-errCh:
			log.Printf("stream ended: %v", err)
			select {
			case <-time.After(time.Duration(rand.Int63n(int64(s.interval)))):
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// Drain logs what one long-lived worker reports, pausing after each: the
// worker is started once, before the loop, and nothing is tried again.
//
// case: clean
func (s *streamer) Drain(ctx context.Context) { // want Drain:`remote=0 waits=true deaf=false jitter=1`
	errCh := make(chan error, 16)
	go s.serve(ctx, errCh)
	for {
		select {
		case err := <-errCh:
			log.Printf("worker: %v", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// consumer long-polls a queue over its own client.
type consumer struct {
	poll func(out chan<- []string, errs chan<- error)
}

// Consume long-polls until quit: an empty queue's error goes round at
// once, any other error after a constant pause, reached on no success.
//
// case: flag nojitter
func (c *consumer) Consume(quit <-chan struct{}, handle func(string)) { // want Consume:`remote=0 waits=true deaf=true jitter=1`
	for {
		out, errs := make(chan []string), make(chan error)
		go func() { c.poll(out, errs) }()
		select {
		case <-quit:
			return
		case msgs := <-out:
			for _, m := range msgs {
				handle(m)
			}
		case err := <-errs:
			if !strings.Contains(err.Error(), "MessageNotExist") {
				time.Sleep(3 * time.Second) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
			}
		}
	}
}

// ConsumeJittered is Consume with full jitter over the pause.
//
// case: clean
func (c *consumer) ConsumeJittered(quit <-chan struct{}, handle func(string)) { // want ConsumeJittered:`remote=0 waits=true deaf=true jitter=2`
	for {
		out, errs := make(chan []string), make(chan error)
		go func() { c.poll(out, errs) }()
		select {
		case <-quit:
			return
		case msgs := <-out:
			for _, m := range msgs {
				handle(m)
			}
		case err := <-errs:
			if !strings.Contains(err.Error(), "MessageNotExist") {
				time.Sleep(time.Duration(rand.Int63n(int64(3 * time.Second))))
			}
		}
	}
}
