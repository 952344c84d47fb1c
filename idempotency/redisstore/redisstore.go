package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/idempotency"
)

// DefaultPrefix starts every key the store writes when Config.Prefix is
// empty.
const DefaultPrefix = "recoil:idem:"

// Config configures a Store. Zero fields mean their defaults.
type Config struct {
	// Prefix starts every Redis key the store writes; empty means
	// DefaultPrefix. Give each application (and each test) its own.
	Prefix string
	// Retention is how long a finished key's response is kept (the Redis
	// key's expiry); zero means idempotency.DefaultRetention.
	Retention time.Duration
}

// Store is an idempotency.Store in Redis: one hash per key, locked with a
// lease that is the hash's expiry (set only if absent, as SET NX PX does)
// and changed only by Lua scripts, so each state change is atomic. Redis
// expires finished keys after the retention and abandoned leases when they
// run out: it is its own reaper, and Store has no Reap.
//
// The store is as durable as the Redis behind it: for keys to survive a
// restart, run Redis with appendonly yes and appendfsync always (a
// restart under appendfsync everysec can lose the last second's keys, and
// a retry of one of those requests then runs again); with replicas, a
// failover can lose what the replica had not received.
//
// Make one with New; the zero Store is not usable. It is safe for
// concurrent use.
type Store struct {
	rdb       redis.Scripter
	prefix    string
	retention time.Duration
}

// New returns a Store that keeps its keys in rdb (a *redis.Client,
// *redis.ClusterClient or *redis.Ring), or an error for a negative
// Retention.
func New(rdb redis.Scripter, cfg Config) (*Store, error) {
	if cfg.Retention < 0 {
		return nil, errors.New("redisstore: Config.Retention is negative")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Retention == 0 {
		cfg.Retention = idempotency.DefaultRetention
	}
	return &Store{rdb: rdb, prefix: cfg.Prefix, retention: cfg.Retention}, nil
}

// redisKey is prefix, then the scope with its length (so that no scope
// and key pair can spell another), then the key.
func (s *Store) redisKey(scope, key string) string {
	return s.prefix + strconv.Itoa(len(scope)) + ":" + scope + ":" + key
}

// begin locks a free key, or reports what holds it. Run again after a
// lost reply, it finds its own token and reports the key new.
var begin = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'fp', 'token', 'status', 'header', 'body', 'trailer')
if not h[1] then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'token', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {0}
end
if h[1] ~= ARGV[1] then return {3} end
if h[3] then return {2, h[3], h[4], h[5], h[6] or ''} end
if h[2] == ARGV[2] then return {0} end
return {1, redis.call('PTTL', KEYS[1])}
`)

// complete stores the outcome if the token holds the key.
var complete = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'token', 'status')
if h[1] ~= ARGV[1] then return 0 end
if h[2] then return 1 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'header', ARGV[3], 'body', ARGV[4], 'trailer', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

// release frees the key if the token holds it and it is not finished.
var release = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'token', 'status')
if h[1] ~= ARGV[1] or h[2] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)

// Begin implements idempotency.Store.
func (s *Store) Begin(ctx context.Context, scope, key, fingerprint string, lease time.Duration) (idempotency.Begun, error) {
	token := idempotency.NewToken()
	v, err := begin.Run(ctx, s.rdb, []string{s.redisKey(scope, key)}, fingerprint, token, max(lease.Milliseconds(), 1)).Slice()
	if err != nil {
		return idempotency.Begun{}, fmt.Errorf("redisstore: begin: %w", err)
	}
	state, _ := v[0].(int64)
	switch idempotency.State(state) {
	case idempotency.StateNew:
		return idempotency.Begun{State: idempotency.StateNew, Token: token}, nil
	case idempotency.StateRunning:
		ms, _ := v[1].(int64)
		return idempotency.Begun{State: idempotency.StateRunning, RetryIn: time.Duration(max(ms, 0)) * time.Millisecond}, nil
	case idempotency.StateDone:
		resp, err := decode(v[1:])
		if err != nil {
			return idempotency.Begun{}, err
		}
		return idempotency.Begun{State: idempotency.StateDone, Response: resp}, nil
	}
	return idempotency.Begun{State: idempotency.StateMismatch}, nil
}

// decode reads a stored response: status, header, body and trailer (a
// key stored before trailers were kept has none; its header is JSON,
// which idempotency.UnmarshalHeader still reads).
func decode(v []any) (*idempotency.Response, error) {
	if len(v) != 4 {
		return nil, errors.New("redisstore: stored response malformed")
	}
	st, _ := v[0].(string)
	hdr, _ := v[1].(string)
	body, _ := v[2].(string)
	tr, _ := v[3].(string)
	status, err := strconv.Atoi(st)
	if err != nil {
		return nil, errors.New("redisstore: stored status malformed")
	}
	h, err := idempotency.UnmarshalHeader([]byte(hdr))
	if err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	trailer, err := idempotency.UnmarshalHeader([]byte(tr))
	if err != nil {
		return nil, fmt.Errorf("redisstore: trailer: %w", err)
	}
	return &idempotency.Response{Status: status, Header: h, Body: []byte(body), Trailer: trailer}, nil
}

// Complete implements idempotency.Store. Header and trailer are stored in
// idempotency.MarshalHeader's encoding, exact to the byte.
func (s *Store) Complete(ctx context.Context, scope, key, token string, resp *idempotency.Response) error {
	n, err := complete.Run(ctx, s.rdb, []string{s.redisKey(scope, key)}, token, resp.Status,
		idempotency.MarshalHeader(resp.Header), resp.Body, s.retention.Milliseconds(), idempotency.MarshalHeader(resp.Trailer)).Int()
	return held("complete", n, err)
}

// held turns a script's reply — 1 if the token held the key, 0 if not —
// into the Store's error.
func held(op string, n int, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: %s: %w", op, err)
	case n == 0:
		return idempotency.ErrLeaseLost
	}
	return nil
}

// Release implements idempotency.Store.
func (s *Store) Release(ctx context.Context, scope, key, token string) error {
	n, err := release.Run(ctx, s.rdb, []string{s.redisKey(scope, key)}, token).Int()
	return held("release", n, err)
}
