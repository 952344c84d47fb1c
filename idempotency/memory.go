package idempotency

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxEntries bounds a Memory store whose MaxEntries is zero.
const DefaultMaxEntries = 100_000

// ErrFull is returned by Memory.Begin when every entry holds a running
// request and none may be evicted.
var ErrFull = errors.New("idempotency: memory store full of running requests")

// MemoryConfig configures a Memory store. Zero fields mean their defaults.
type MemoryConfig struct {
	// MaxEntries bounds the keys kept; zero means DefaultMaxEntries. When
	// it is reached, the expired entries go first, then the finished key
	// used least recently (a retry arriving after that runs the work
	// again: size it for your request rate times Retention); keys whose
	// requests are running are never evicted.
	MaxEntries int
	// Retention is how long a finished key's response is kept; zero means
	// DefaultRetention.
	Retention time.Duration
}

// Memory is a Store in this process's memory: bounded, with expiry. It is
// what Middleware uses when Config.Store is nil. It forgets everything
// when the process exits, so it protects against retries of requests
// that reach the same process — use redisstore or pgstore to share keys
// between processes or to survive a restart. Expired entries are skipped
// when met and removed by Reap (schedule it with RunReaper) or when the
// bound is reached.
//
// Make one with NewMemory; the zero Memory is not usable. It is safe for
// concurrent use.
type Memory struct {
	max       int
	retention time.Duration

	mu   sync.Mutex
	m    map[string]*memEntry
	done list.List // finished entries, most recently used first
}

type memEntry struct {
	key   string
	fp    string
	token string
	until time.Time // running: the lease's end; done: the retention's end
	resp  *Response // nil while running
	elem  *list.Element
}

// NewMemory returns a Memory store configured by cfg, or an error naming
// a field that is negative.
func NewMemory(cfg MemoryConfig) (*Memory, error) {
	switch {
	case cfg.MaxEntries < 0:
		return nil, errors.New("idempotency: MemoryConfig.MaxEntries is negative")
	case cfg.Retention < 0:
		return nil, errors.New("idempotency: MemoryConfig.Retention is negative")
	}
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	return &Memory{max: cfg.MaxEntries, retention: cfg.Retention, m: make(map[string]*memEntry)}, nil
}

// memKey joins scope and key with the scope's length first, so that no
// two pairs spell one key whatever bytes they hold.
func memKey(scope, key string) string { return strconv.Itoa(len(scope)) + ":" + scope + key }

// Begin implements Store.
func (s *Memory) Begin(_ context.Context, scope, key, fingerprint string, lease time.Duration) (Begun, error) {
	now := time.Now()
	k := memKey(scope, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[k]
	if e != nil && !now.Before(e.until) {
		s.remove(e)
		e = nil
	}
	switch {
	case e == nil:
		if len(s.m) >= s.max && !s.evict(now) {
			return Begun{}, ErrFull
		}
		e = &memEntry{key: k, fp: fingerprint, token: NewToken(), until: now.Add(lease)}
		s.m[k] = e
		return Begun{State: StateNew, Token: e.token}, nil
	case e.fp != fingerprint:
		return Begun{State: StateMismatch}, nil
	case e.resp != nil:
		s.done.MoveToFront(e.elem)
		return Begun{State: StateDone, Response: e.resp.clone()}, nil
	}
	return Begun{State: StateRunning, RetryIn: e.until.Sub(now)}, nil
}

// Complete implements Store.
func (s *Memory) Complete(_ context.Context, scope, key, token string, resp *Response) error {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[memKey(scope, key)]
	switch {
	case e == nil || e.token != token:
		return ErrLeaseLost
	case e.resp != nil:
		return nil // stored already, under this token
	}
	e.resp = resp.clone()
	e.until = now.Add(s.retention)
	e.elem = s.done.PushFront(e)
	return nil
}

// Release implements Store.
func (s *Memory) Release(_ context.Context, scope, key, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[memKey(scope, key)]
	if e == nil || e.resp != nil || e.token != token {
		return ErrLeaseLost
	}
	s.remove(e)
	return nil
}

// Reap removes the entries expired by now — finished keys past their
// retention, running keys past their lease — and returns how many.
func (s *Memory) Reap(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.m {
		if !now.Before(e.until) {
			s.remove(e)
			n++
		}
	}
	return n, nil
}

// Len returns the number of entries held, expired ones not yet removed
// included.
func (s *Memory) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// evict makes room for one entry: the least recently used finished entry
// goes, after a look for expired ones at the back of the list. It reports
// false when only running entries are left.
func (s *Memory) evict(now time.Time) bool {
	back := s.done.Back()
	if back == nil {
		for _, e := range s.m { // all running: an expired lease may go
			if !now.Before(e.until) {
				s.remove(e)
				return true
			}
		}
		return false
	}
	s.remove(back.Value.(*memEntry))
	return true
}

func (s *Memory) remove(e *memEntry) {
	if e.elem != nil {
		s.done.Remove(e.elem)
		e.elem = nil
	}
	delete(s.m, e.key)
}

func (r *Response) clone() *Response {
	if r == nil {
		return &Response{}
	}
	return &Response{Status: r.Status, Header: r.Header.Clone(), Body: bytes.Clone(r.Body), Trailer: r.Trailer.Clone()}
}
