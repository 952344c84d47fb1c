package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults for a Config's zero fields.
const (
	// DefaultPrefix begins every key the package writes.
	DefaultPrefix = "recoil:fleet:"
	// DefaultTimeout bounds each Redis call, and so how long a decision can
	// wait on Redis: small beside a model call, long beside a loopback
	// round trip (about 100 µs).
	DefaultTimeout = 50 * time.Millisecond
	// DefaultProbeInterval is how often the reconnect probe pings Redis
	// while it is unreachable.
	DefaultProbeInterval = time.Second
	// DefaultLeaseShare is the share of a limit one lease takes: 2 %, so
	// that a thousand decisions cost about twenty round trips at a limit
	// of 2,500 and at most ten from a limit of 5,000 up.
	DefaultLeaseShare = 0.02
	// DefaultLeaseTTL is how long an unused lease may be drawn on locally.
	DefaultLeaseTTL = time.Second
	// DefaultStateTTL is how long a shared retry budget's state outlives its
	// last write.
	DefaultStateTTL = time.Hour
)

// ErrClosed is returned by the Client's constructors after Close.
var ErrClosed = errors.New("fleet: client closed")

// errLocal is what a Redis call returns when the Client has no Redis or
// Redis is down: the caller decides from its local share.
var errLocal = errors.New("fleet: deciding locally")

// Config configures a Client. Its zero fields mean the documented defaults.
type Config struct {
	// Redis is the shared store. It must have ContextTimeoutEnabled set
	// (redis.Options, redis.ClusterOptions, redis.RingOptions), or go-redis
	// would ignore the deadline of Timeout and a decision could wait seconds
	// on a paused server. Nil means no Redis: every decision is made from the
	// local share, as when Redis is down.
	Redis redis.UniversalClient
	// Prefix begins every key written; zero means DefaultPrefix. Give each
	// deployment (or test run) its own. It may not hold a brace ('{' or
	// '}'), which would break the hash tag that keeps an object's keys in
	// one Redis Cluster slot.
	Prefix string
	// Timeout bounds each Redis call; no decision waits on Redis longer.
	// Zero or less means DefaultTimeout.
	Timeout time.Duration
	// Replicas is the number of processes expected to share each limit and
	// budget. When Redis cannot be reached in time, each process decides
	// from its local share, 1/Replicas of each limit, reserve and bucket.
	// Zero or less means 1: a lone process keeps the whole.
	Replicas int
	// ProbeInterval is how often, while Redis is unreachable, one goroutine
	// pings it to find it back, each wait lengthened by a random part of up
	// to half of it; zero or less means DefaultProbeInterval.
	ProbeInterval time.Duration
	// LeaseShare is the share of a limit or budget one lease takes, in
	// (0, 1]; zero means DefaultLeaseShare. Larger leases mean fewer round
	// trips and a larger overshoot bound (see Allowance).
	LeaseShare float64
	// LeaseTTL is how long a lease may be drawn on; what is left of it then
	// is dropped (it was charged when taken, so dropping it only wastes it).
	// Zero or less means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// StateTTL is how long a retry budget's state lives in Redis after its
	// last write; zero or less means DefaultStateTTL. A budget left alone
	// that long starts again full.
	StateTTL time.Duration
	// Logger receives one warning, the first time a decision falls back to
	// the local share although Redis answered (an error reply: a script the
	// server refused, a key of the wrong type, a cluster that cannot serve
	// the keys). Nil means no log; Stats and Fallbacks count every such
	// decision.
	Logger *slog.Logger
}

// Stats counts a Client's Redis calls that ended in a decision from the
// local share: Refused above zero means a healthy Redis is being bypassed.
// To export them as the metric recoil_fleet_fallbacks_total, pass the
// Client to recoilprom's or recoilotel's Metrics.Fleet, which read
// Fallbacks at each collection.
type Stats struct {
	// Unreachable counts calls that got no answer in time (a timeout, a
	// refused connection): each marked Redis down until the probe found it.
	Unreachable uint64
	// Refused counts calls Redis answered with an error reply; Redis stays
	// up, and the decision is made from the local share.
	Refused uint64
}

// Client holds the connection to Redis that a process's allowances and
// budgets share, tracks whether Redis answers in time, and runs the one
// reconnect probe while it does not. Make one per process with New and Close
// it on shutdown: Close returns the unused leases and stops the probe.
//
// The zero Client is not usable. A Client is safe for concurrent use.
type Client struct {
	rdb  redis.UniversalClient
	cfg  Config // defaults resolved
	down atomic.Bool

	unreachable, refused atomic.Uint64
	warned               atomic.Bool // the Logger has had its one line

	mu      sync.Mutex
	probing bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
	leases  []func(ctx context.Context) // return unused leases on Close
}

// New returns a Client configured by c. It reports bad configuration, and a
// Redis client without ContextTimeoutEnabled; it does not contact Redis.
func New(c Config) (*Client, error) {
	if c.Redis != nil && !contextTimeouts(c.Redis) {
		return nil, errors.New("fleet: the Redis client must have ContextTimeoutEnabled: true, or no call would be bounded by Timeout")
	}
	if c.LeaseShare < 0 || c.LeaseShare > 1 || math.IsNaN(c.LeaseShare) {
		return nil, fmt.Errorf("fleet: LeaseShare %v is not in (0, 1]", c.LeaseShare)
	}
	if strings.ContainsAny(c.Prefix, "{}") {
		return nil, fmt.Errorf("fleet: Prefix %q holds a brace, which would break the hash tag that keeps an object's keys in one Redis Cluster slot", c.Prefix)
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	c.Replicas = max(c.Replicas, 1)
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.LeaseShare == 0 {
		c.LeaseShare = DefaultLeaseShare
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.StateTTL <= 0 {
		c.StateTTL = DefaultStateTTL
	}
	return &Client{rdb: c.Redis, cfg: c, stop: make(chan struct{})}, nil
}

// contextTimeouts reports whether go-redis will honour a context deadline.
func contextTimeouts(r redis.UniversalClient) bool {
	switch r := r.(type) {
	case *redis.Client:
		return r.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return r.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return r.Options().ContextTimeoutEnabled
	}
	return true // another implementation: its deadlines are its own
}

// Shared reports whether decisions are using Redis: false when the Client has
// none, or while Redis is unreachable and decisions use the local share.
func (c *Client) Shared() bool { return c.rdb != nil && !c.down.Load() }

// Close returns every unused lease to Redis (each return bounded by Timeout)
// and stops the reconnect probe, waiting for it to exit. Decisions made
// after Close use the local share. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	leases := c.leases
	c.leases = nil
	c.mu.Unlock()
	for _, ret := range leases {
		ret(context.Background())
	}
	c.down.Store(true) // after Close, decide locally
	close(c.stop)
	c.wg.Wait()
	return nil
}

// register adds f to what Close runs; false after Close.
func (c *Client) register(f func(ctx context.Context)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.leases = append(c.leases, f)
	return true
}

// call runs f against Redis with a deadline, returning errLocal without
// calling when there is no Redis or Redis is down. Any error but redis.Nil
// marks Redis down and starts the probe: the caller decides locally, in the
// same decision.
func (c *Client) call(deadline time.Time, f func(ctx context.Context, r redis.UniversalClient) error) error {
	if !c.Shared() {
		return errLocal
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	err := f(ctx, c.rdb)
	cancel()
	if err != nil && !errors.Is(err, redis.Nil) {
		var reply redis.Error
		if errors.As(err, &reply) {
			// Redis answered: it is up, and marking it down would only
			// have the probe find it again. Count and say so.
			c.refused.Add(1)
			if c.cfg.Logger != nil && c.warned.CompareAndSwap(false, true) {
				c.cfg.Logger.Warn("fleet: Redis refused a call; deciding from the local share (Client.Stats counts each)", "err", err)
			}
			return err
		}
		c.unreachable.Add(1)
		c.fail()
		return err
	}
	return nil
}

// Stats returns what the Client has counted so far.
func (c *Client) Stats() Stats {
	return Stats{Unreachable: c.unreachable.Load(), Refused: c.refused.Load()}
}

// Fallbacks returns Stats' two counts, Unreachable and Refused, as plain
// values: the method the metrics adapters (recoilprom's and recoilotel's
// Metrics.Fleet) take a Client by, through an interface of their own, so
// that they need not import this package and go-redis with it. Both counts
// only grow.
func (c *Client) Fallbacks() (unreachable, refused uint64) {
	return c.unreachable.Load(), c.refused.Load()
}

// fail marks Redis down and starts the probe if it is not running.
func (c *Client) fail() {
	c.down.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probing || c.closed {
		return
	}
	c.probing = true
	c.wg.Add(1)
	go c.probe()
}

// probe pings Redis every ProbeInterval to 1.5 ProbeInterval (jittered, so
// that the clients of a fleet that lost Redis together do not ping it in
// step when it comes back) until it answers within Timeout, then marks it
// up and exits; Close stops it.
func (c *Client) probe() {
	defer c.wg.Done()
	t := time.NewTimer(probeWait(c.cfg.ProbeInterval))
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		t.Reset(probeWait(c.cfg.ProbeInterval))
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
		err := c.rdb.Ping(ctx).Err()
		cancel()
		if err != nil {
			continue
		}
		c.mu.Lock()
		if !c.closed {
			c.down.Store(false)
		}
		c.probing = false
		c.mu.Unlock()
		return
	}
}

// probeWait is one wait of the probe: interval plus a random part of up to
// half of it.
func probeWait(interval time.Duration) time.Duration {
	if h := interval / 2; h > 0 {
		return interval + rand.N(h)
	}
	return interval
}

// key is the Redis key for a named object's part. The hash tag, which keeps
// an object's keys in one Redis Cluster slot, is derived from the name (96
// bits of its SHA-256, in hex), so no byte of a name can break it; the name
// follows it, for whoever reads the keys.
func (c *Client) key(name, part string) string {
	sum := sha256.Sum256([]byte(name))
	return c.cfg.Prefix + "{" + hex.EncodeToString(sum[:12]) + "}" + name + ":" + part
}

// lease returns the units one lease takes out of capacity.
func (c *Client) lease(capacity float64) int64 {
	return max(int64(c.cfg.LeaseShare*capacity), 1)
}

// clock returns now, or the current time when now is zero.
func clock(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}
