package gateway

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// KeyStats is what the gateway counted for one client or one logical
// request.
type KeyStats struct {
	// Attempts is the number of attempts that arrived.
	Attempts uint64 `json:"attempts"`
	// Accepted is the number of them answered with a success.
	Accepted uint64 `json:"accepted"`
	// MaxAttempt is the highest attempt number (Recoil-Attempt) they
	// carried; 0 if none carried one.
	MaxAttempt int `json:"max_attempt"`
}

const nShards = 32

// keyed counts attempts per key in maps sharded by the key's hash, each
// under its own lock, so clients counting different keys rarely meet. At
// most max keys are tracked; attempts for keys beyond are counted in
// untracked.
type keyed struct {
	seed      maphash.Seed
	max       int64
	n         atomic.Int64
	untracked atomic.Uint64
	shards    [nShards]keyShard
}

type keyShard struct {
	mu sync.Mutex
	m  map[string]KeyStats
	_  [40]byte // keep shards on separate cache lines
}

func (k *keyed) init(max int) {
	k.seed = maphash.MakeSeed()
	k.max = int64(max)
}

// add counts an attempt for key and returns the key's attempts so far,
// or 0 for a key beyond the bound.
func (k *keyed) add(key string, accepted bool, attempt int) uint64 {
	s := &k.shards[maphash.String(k.seed, key)&(nShards-1)]
	s.mu.Lock()
	e, ok := s.m[key]
	if !ok {
		if k.n.Add(1) > k.max {
			k.n.Add(-1)
			s.mu.Unlock()
			k.untracked.Add(1)
			return 0
		}
		if s.m == nil {
			s.m = make(map[string]KeyStats)
		}
		key = strings.Clone(key) // the header's string may share a larger buffer
	}
	e.Attempts++
	if accepted {
		e.Accepted++
	}
	e.MaxAttempt = max(e.MaxAttempt, attempt)
	s.m[key] = e
	s.mu.Unlock()
	return e.Attempts
}

func (k *keyed) len() int { return int(k.n.Load()) }

// each calls f for every key, one shard locked at a time.
func (k *keyed) each(f func(string, KeyStats)) {
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		for key, e := range s.m {
			f(key, e)
		}
		s.mu.Unlock()
	}
}

func (k *keyed) snapshot() map[string]KeyStats {
	m := make(map[string]KeyStats, k.len())
	k.each(func(key string, e KeyStats) { m[key] = e })
	return m
}
