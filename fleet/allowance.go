package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/internal/pace"
)

// DefaultWindow is an allowance's period when its config names none: model
// providers meter requests and tokens per minute.
const DefaultWindow = time.Minute

// Class is who is asking: a caller a person waits on, or background work.
type Class uint8

const (
	// Interactive callers may draw on the whole allowance, the reserved
	// share included.
	Interactive Class = iota
	// Background callers may draw only on the unreserved share.
	Background
)

// Unit says which of a provider's meters an allowance follows.
type Unit uint8

const (
	// Requests: the allowance counts requests and learns from the
	// *-requests headers.
	Requests Unit = iota
	// Tokens: the allowance counts tokens (AllowN with an estimate) and
	// learns from the *-tokens headers.
	Tokens
)

// AllowanceConfig configures an Allowance. Zero fields mean the documented
// defaults; Name and Limit are required.
type AllowanceConfig struct {
	// Name identifies the allowance in Redis: every process that names it
	// shares it. Name it for what the provider meters, "org-42/openai" say.
	Name string
	// Unit is what the allowance counts; zero means Requests.
	Unit Unit
	// Limit is the allowance per Window until the provider's headers say
	// otherwise (see Learn). Required.
	Limit int64
	// Window is the period of Limit; zero means DefaultWindow.
	Window time.Duration
	// Burst is how many units may go at once after a quiet spell; zero
	// means Limit, which is how providers' buckets fill (a whole minute's
	// allowance, replenished continuously). Set it lower to keep every
	// window of length Window near Limit.
	Burst int64
	// Reserved is the share of the allowance, in [0, 1), kept for
	// Interactive callers: Background callers may use only 1 − Reserved
	// of its rate and of its burst. Zero reserves nothing.
	Reserved float64
	// Lease is how many units a process takes from Redis at a time; zero
	// means the Client's LeaseShare of Limit, at least 1.
	Lease int64
}

// Allowance is a rate limit that every process naming it shares through
// Redis: a token bucket (the generic cell rate algorithm, one instant per
// bucket, updated atomically by a Lua script on the Redis server's clock)
// holding Burst units and refilling Limit per Window, as providers meter an
// organisation. Consult it before each attempt — AllowAt, or Guard as a
// Policy's Budget — and feed it each response's headers (Learn, or the
// Learner transport) so the fleet slows down before the provider sends 429s.
//
// # Leases and the overshoot bound
//
// A process takes Lease units at a time with one Lua call and decides
// locally from them, so the common decision costs no round trip; a lease
// expires after the Client's LeaseTTL, and Close returns what is left. A
// unit is charged to the shared bucket when its lease is taken, so the
// bucket's own bound holds for leases; units are spent up to LeaseTTL later,
// and each process holds at most one lease per class. Over any interval of
// length t, the units spent by the whole fleet are at most
//
//	Burst + Limit·t/Window + replicas × classes × Lease
//
// where classes is 1, or 2 when Reserved is set (Interactive and Background
// hold leases of their own). With Burst at its default this is the
// provider's own bucket plus the leases in hand.
//
// # Tokens
//
// A Tokens allowance counts what providers meter per minute besides
// requests: charge each attempt its estimated tokens (AllowNAt, or a Guard
// under a call that carries a cost: recoil.WithCost, or the estimate
// recoilhttp.Transport makes from a model request), correct the charge by
// the usage the response reports (SettleAt; the Transport does it for a
// Guard), and let Learn read the *-tokens headers. A provider that meters
// both wants two allowances, one of each Unit, chained as Guards and both
// fed by one Learner.
//
// # Pacing
//
// Learn paces the allowance before the provider's 429: when a response
// says R units remain and the meter is whole again in D, and R is less than
// the limit refills over D (R·Window < Limit·D: spent at the limit's rate,
// the remainder runs out before the reset), the whole fleet spreads the R
// units over D — a lease is granted only once the leases granted before it
// have been spread at D/R per unit — instead of spending them at once. With
// R = 0 nothing is granted until the reset. Pacing ends at the reset, or
// when a later response says enough remains. Leases are its grain: units
// already leased are spent as the process needs them.
//
// # When Redis is away
//
// A decision that cannot reach Redis within the Client's Timeout — Redis
// down, paused or slow — is made in that same call from the local share: a
// bucket of Limit/Replicas per Window and Burst/Replicas, with the same
// reserve. Decisions keep using it, without contacting Redis, until the
// Client's probe finds Redis again.
//
// The zero Allowance is not usable; make one with Client.Allowance. An
// Allowance is safe for concurrent use.
type Allowance struct {
	c     *Client
	cfg   AllowanceConfig
	keys  []string // tat, background tat, learned limit, pace
	limit atomic.Int64

	gate      gate
	mu        sync.Mutex
	leases    [2]lease  // by class; Background uses Interactive's when nothing is reserved
	debt      [2]int64  // by lease: units settled beyond what was charged, owed to the shared bucket
	local     [2]gcra   // the local share's buckets: the whole, the background share
	localPace pace.Pace // the local share's pace
}

// Allowance returns the shared allowance configured by a, reporting bad
// configuration. It does not contact Redis.
func (c *Client) Allowance(a AllowanceConfig) (*Allowance, error) {
	switch {
	case a.Name == "":
		return nil, errors.New("fleet: an allowance needs a Name")
	case a.Limit <= 0:
		return nil, fmt.Errorf("fleet: allowance %q: Limit %d is not positive", a.Name, a.Limit)
	case a.Burst < 0:
		return nil, fmt.Errorf("fleet: allowance %q: Burst %d is negative", a.Name, a.Burst)
	case a.Lease < 0:
		return nil, fmt.Errorf("fleet: allowance %q: Lease %d is negative", a.Name, a.Lease)
	case !(a.Reserved >= 0 && a.Reserved < 1):
		return nil, fmt.Errorf("fleet: allowance %q: Reserved %v is not in [0, 1)", a.Name, a.Reserved)
	case a.Unit > Tokens:
		return nil, fmt.Errorf("fleet: allowance %q: unknown Unit %d", a.Name, a.Unit)
	}
	if a.Window <= 0 {
		a.Window = DefaultWindow
	}
	if a.Burst == 0 {
		a.Burst = a.Limit
	}
	if a.Lease == 0 {
		a.Lease = c.lease(float64(a.Limit))
	}
	al := &Allowance{c: c, cfg: a, gate: newGate(),
		keys: []string{c.key(a.Name, "tat"), c.key(a.Name, "tat:bg"), c.key(a.Name, "limit"), c.key(a.Name, "pace")}}
	al.limit.Store(a.Limit)
	if !c.register(al.giveBack) {
		return nil, ErrClosed
	}
	return al, nil
}

// AllowAt reports whether one unit may go at now for a caller of class c,
// and charges it if so. The zero now means the current time. It waits on
// Redis at most the Client's Timeout, and only when the process's lease is
// spent.
func (a *Allowance) AllowAt(now time.Time, c Class) bool { return a.AllowNAt(now, c, 1) }

// Allow is shorthand for AllowAt(time.Now(), c).
func (a *Allowance) Allow(c Class) bool { return a.AllowNAt(time.Time{}, c, 1) }

// AllowNAt is AllowAt for n units (an estimate of a request's tokens, say);
// n ≤ 0 is always allowed and charges nothing.
func (a *Allowance) AllowNAt(now time.Time, c Class, n int64) bool {
	if n <= 0 {
		return true
	}
	now = clock(now)
	k := a.slot(c)
	a.mu.Lock()
	l := &a.leases[k]
	if l.take(now, n) {
		a.mu.Unlock()
		return true
	}
	refused := now.Before(l.refused) && a.c.Shared()
	a.mu.Unlock()
	if refused {
		return false
	}
	return a.refill(now, c, n)
}

// slot is the lease a class draws on.
func (a *Allowance) slot(c Class) int {
	if c == Background && a.cfg.Reserved > 0 {
		return 1
	}
	return 0
}

// refill takes a lease from Redis, or decides from the local share when
// Redis cannot answer by the decision's deadline.
func (a *Allowance) refill(now time.Time, c Class, n int64) bool {
	deadline := time.Now().Add(a.c.cfg.Timeout)
	if !a.c.Shared() || !a.gate.enter(deadline) {
		return a.localAllow(now, c, n)
	}
	defer a.gate.leave()
	k := a.slot(c)
	a.mu.Lock()
	l := &a.leases[k]
	if l.take(now, n) { // another decision refilled while this one waited
		a.mu.Unlock()
		return true
	}
	want := max(a.cfg.Lease, n) - l.left(now) + a.debt[k]
	a.mu.Unlock()
	var res []int64
	err := a.c.call(deadline, func(ctx context.Context, r redis.UniversalClient) error {
		var err error
		res, err = allowanceScript.Run(ctx, r, a.keys, a.cfg.Limit, a.cfg.Window.Microseconds(),
			float64(a.cfg.Burst)/float64(a.cfg.Limit), want, bg(a.slot(c)), a.cfg.Reserved).Int64Slice()
		return err
	})
	if err != nil || len(res) != 3 {
		return a.localAllow(now, c, n)
	}
	a.limit.Store(res[1])
	a.mu.Lock()
	defer a.mu.Unlock()
	granted := res[0]
	pay := min(granted, a.debt[k]) // what the grant owes for settlements first
	a.debt[k] -= pay
	l.grant(now, granted-pay, a.c.cfg.LeaseTTL)
	if l.take(now, n) {
		return true
	}
	l.refused = now.Add(min(time.Duration(res[2])*time.Microsecond, a.c.cfg.LeaseTTL))
	return false
}

func bg(slot int) int {
	if slot == 1 {
		return 1
	}
	return 0
}

// localAllow decides from the local share: Limit/Replicas per Window, and
// the local pace.
func (a *Allowance) localAllow(now time.Time, c Class, n int64) bool {
	interval, tau := a.localRate()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.localPace.Allow(now) {
		return false
	}
	if c == Background && a.cfg.Reserved > 0 {
		share := 1 - a.cfg.Reserved
		bgInterval := time.Duration(float64(interval) / share)
		probe := a.local[1]
		if !probe.take(now, n, bgInterval, tau) {
			return false
		}
		if !a.local[0].take(now, n, interval, tau) {
			return false
		}
		a.local[1] = probe
	} else if !a.local[0].take(now, n, interval, tau) {
		return false
	}
	a.localPace.Settle(now, n)
	return true
}

// localRate is the local share's interval per unit and burst tolerance.
func (a *Allowance) localRate() (interval, tau time.Duration) {
	limit := a.limit.Load()
	share := float64(limit) / float64(a.c.cfg.Replicas)
	interval = time.Duration(float64(a.cfg.Window) / share)
	burst := max(float64(a.cfg.Burst)*float64(limit)/float64(a.cfg.Limit)/float64(a.c.cfg.Replicas), 1)
	return interval, time.Duration(burst * float64(interval))
}

// putBack returns n units charged for an attempt that did not go: to the
// class's lease while it lasts, or to the local share while Redis is away.
func (a *Allowance) putBack(now time.Time, c Class, n int64) {
	now = clock(now)
	if l := &a.leases[a.slot(c)]; !a.c.Shared() {
		a.mu.Lock()
		live := now.Before(l.exp)
		a.mu.Unlock()
		if !live {
			a.settleLocal(now, c, -n)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := &a.leases[a.slot(c)]; now.Before(l.exp) {
		l.n += n
	}
}

// SettleAt corrects the charge of an attempt of class c that was charged
// charged units and turned out to cost actual — the tokens a model API's
// response reports it used, against the estimate charged before it went.
// A refund (actual less than charged, never more than charged) goes back
// into the process's lease while it lasts, else to the shared bucket (one
// round trip, within the Client's Timeout), or, while Redis is away, to the
// local share. A shortfall (actual more) is taken from the lease, and what
// the lease cannot cover is owed to the shared bucket and charged with the
// next lease the process takes, without a round trip of its own. What one
// settlement charges is bounded by Burst. A negative actual changes
// nothing.
//
// The charge a settlement corrects was made as the allowance counts: call
// it for a Tokens allowance with token counts. Guard.SettleAt calls it for
// a Tokens allowance and ignores it for a Requests one.
func (a *Allowance) SettleAt(now time.Time, c Class, charged, actual int64) {
	if actual < 0 || charged < 0 || actual == charged {
		return
	}
	now = clock(now)
	d := min(actual-charged, a.cfg.Burst)
	if !a.c.Shared() {
		a.settleLocal(now, c, d)
		return
	}
	k := a.slot(c)
	a.mu.Lock()
	l := &a.leases[k]
	if d < 0 && now.Before(l.exp) {
		l.n -= d
		a.mu.Unlock()
		return
	}
	if d < 0 {
		// The lease has expired (a model's answer often outlasts it): the
		// refund goes back to the shared bucket, within the Timeout.
		a.mu.Unlock()
		a.c.call(time.Now().Add(a.c.cfg.Timeout), func(ctx context.Context, r redis.UniversalClient) error {
			return allowanceScript.Run(ctx, r, a.keys, a.cfg.Limit, a.cfg.Window.Microseconds(),
				float64(a.cfg.Burst)/float64(a.cfg.Limit), d, bg(k), a.cfg.Reserved).Err()
		})
		return
	}
	defer a.mu.Unlock()
	take := min(d, l.left(now))
	l.n -= take
	a.debt[k] = min(a.debt[k]+d-take, a.cfg.Burst)
}

// settleLocal charges (d > 0) or refunds (d < 0) d units to the local
// share's buckets for class c, and to its pace.
func (a *Allowance) settleLocal(now time.Time, c Class, d int64) {
	interval, _ := a.localRate()
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.local {
		if k == 1 && (c != Background || a.cfg.Reserved == 0) {
			break
		}
		iv := interval
		if k == 1 {
			iv = time.Duration(float64(interval) / (1 - a.cfg.Reserved))
		}
		a.local[k].settle(now, d, iv)
	}
	a.localPace.Settle(now, d)
}

// giveBack returns the unused leases to Redis; Close calls it.
func (a *Allowance) giveBack(ctx context.Context) {
	now := time.Now()
	for k := range a.leases {
		a.mu.Lock()
		n := a.leases[k].left(now) - a.debt[k] // a debt is charged, as far as the bucket holds it
		a.leases[k], a.debt[k] = lease{}, 0
		a.mu.Unlock()
		if n == 0 {
			continue
		}
		a.c.call(now.Add(a.c.cfg.Timeout), func(ctx context.Context, r redis.UniversalClient) error {
			return allowanceScript.Run(ctx, r, a.keys, a.cfg.Limit, a.cfg.Window.Microseconds(),
				float64(a.cfg.Burst)/float64(a.cfg.Limit), -n, bg(k), a.cfg.Reserved).Err()
		})
	}
}

// Learn reads a provider's rate-limit headers (see ParseHeader) for the
// allowance's Unit and updates the shared allowance: a limit becomes the
// allowance's Limit for every process (kept in Redis for the Client's
// StateTTL), and a remaining count or a reset lowers the shared bucket to
// what the provider says is left — never raises it, since the units leased
// but not yet sent are not in the provider's count. A Learn that cannot
// reach Redis updates the local share's limit and pace only (the pace on
// 1/Replicas of what remains). With both a remaining count and a reset it
// paces the allowance, or ends the pacing (see Allowance, "Pacing").
// Malformed headers change nothing that parsed badly and are reported in
// the error, which wraps ErrHeader; a response without the headers changes
// nothing.
func (a *Allowance) Learn(h http.Header, now time.Time) error {
	l, perr := ParseHeader(h, clock(now))
	m := l.Requests
	if a.cfg.Unit == Tokens {
		m = l.Tokens
	}
	if !m.Known() {
		return perr
	}
	if m.Limit > 0 {
		a.limit.Store(m.Limit)
	}
	reset := int64(-1) // unknown
	if m.Reset >= 0 {
		reset = m.Reset.Microseconds()
	}
	err := a.c.call(time.Now().Add(a.c.cfg.Timeout), func(ctx context.Context, r redis.UniversalClient) error {
		return learnScript.Run(ctx, r, []string{a.keys[0], a.keys[2], a.keys[3]}, a.cfg.Limit, a.cfg.Window.Microseconds(),
			float64(a.cfg.Burst)/float64(a.cfg.Limit), m.Limit, m.Remaining, reset, a.c.cfg.StateTTL.Milliseconds()).Err()
	})
	if errors.Is(err, errLocal) {
		err = nil
	}
	if err != nil || !a.c.Shared() {
		a.learnLocal(clock(now), m)
	}
	return errors.Join(perr, err)
}

// learnLocal paces the local share as the shared bucket is paced, on its
// 1/Replicas of what remains.
func (a *Allowance) learnLocal(now time.Time, m Meter) {
	if m.Remaining < 0 || m.Reset < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	limit := a.limit.Load()
	if !paced(m.Remaining, m.Reset, limit, a.cfg.Window) {
		a.localPace = pace.Pace{}
		return
	}
	r := float64(a.c.cfg.Replicas)
	a.localPace.Set(now, int64(math.Ceil(float64(m.Remaining)/r)), m.Reset)
}

// Limit returns the limit per Window in force, as last learned or read from
// Redis.
func (a *Allowance) Limit() int64 { return a.limit.Load() }

// AllowanceState is a snapshot of an Allowance, for tests and metrics.
type AllowanceState struct {
	// Limit is the limit per Window in force.
	Limit int64
	// Leased is what the process's leases hold, by class.
	Leased [2]int64
	// Shared reports whether decisions use Redis (false: the local share).
	Shared bool
}

// StateAt returns a snapshot at now; the zero now means the current time.
func (a *Allowance) StateAt(now time.Time) AllowanceState {
	now = clock(now)
	a.mu.Lock()
	defer a.mu.Unlock()
	return AllowanceState{Limit: a.limit.Load(), Leased: [2]int64{a.leases[0].left(now), a.leases[1].left(now)}, Shared: a.c.Shared()}
}
