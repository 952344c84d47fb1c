package inprocess

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Queue holds jobs; the package's own is in memory.
type Queue interface {
	Size() (int, error)
}

type memQueue struct {
	mu   sync.Mutex
	jobs []string
}

func (q *memQueue) Size() (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs), nil
}

type scheduler struct {
	queue Queue
	retry time.Duration
}

func newScheduler() *scheduler {
	return &scheduler{queue: &memQueue{}, retry: 100 * time.Millisecond}
}

// run reads its queue's size behind the interface: every implementation
// the package gives it reads memory, so an error paced by the retry
// interval is not a dependency's.
//
// case: clean
func (s *scheduler) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	for {
		n, err := s.queue.Size()
		switch {
		case err != nil:
			timer.Reset(s.retry)
		case n == 0:
			timer.Reset(time.Hour)
		default:
			timer.Reset(time.Second)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
}

// remoteQueue asks a queue service for its size.
type remoteQueue struct {
	c   *http.Client
	url string
}

func (q *remoteQueue) Size() (int, error) { // want Size:"remote=1 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false"
	resp, err := q.c.Get(q.url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return int(resp.ContentLength), nil
}

type remoteScheduler struct {
	queue Queue
	retry time.Duration
}

func newRemoteScheduler(url string) *remoteScheduler {
	return &remoteScheduler{queue: &remoteQueue{c: http.DefaultClient, url: url}, retry: 100 * time.Millisecond}
}

// run is the same loop over a queue the package reaches over HTTP: every
// scheduler asks again on the same beat.
//
// case: flag nojitter
func (s *remoteScheduler) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	for {
		n, err := s.queue.Size()
		switch {
		case err != nil:
			timer.Reset(s.retry) // want `nojitter: this wait in a retry loop`
		case n == 0:
			timer.Reset(time.Hour)
		default:
			timer.Reset(time.Second)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
}

var _, _ = newScheduler, newRemoteScheduler
