package gateway

import (
	"errors"
	"fmt"
	"github.com/recoil-go/recoil/tools/tally"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults for a Config's zero fields.
const (
	// DefaultAddr is where Listen binds when Config.Addr is empty: loopback,
	// on a port the system chooses.
	DefaultAddr = "127.0.0.1:0"
	// DefaultOutageStatus is the status an outage answers with when its
	// Status is zero.
	DefaultOutageStatus = http.StatusServiceUnavailable
	// DefaultFailureStatus is the status of a random failure when
	// Config.FailureStatus is zero.
	DefaultFailureStatus = http.StatusInternalServerError
	// DefaultMaxKeys bounds how many distinct clients, and separately how
	// many logical requests, are counted one by one.
	DefaultMaxKeys = 100_000
	// DefaultStreamEvents is the number of content_block_delta events in a
	// streamed answer when Stream.Events is zero.
	DefaultStreamEvents = 8
	// MaxStreamEvents bounds Stream.Events.
	MaxStreamEvents = 100_000
	// MaxBody is how much of a request body is read for the validator and
	// for the "stream" flag; the rest is ignored.
	MaxBody = 1 << 20
	// DefaultChargePath is the charge route's path when Charge.Path is
	// empty.
	DefaultChargePath = "/v1/charges"
)

// Distribution names a latency distribution.
type Distribution string

// The latency distributions.
const (
	// Constant waits Latency.Mean every time. The empty Distribution means
	// Constant.
	Constant Distribution = "constant"
	// Uniform waits a uniform time in [Latency.Min, Latency.Max].
	Uniform Distribution = "uniform"
	// Exponential waits Latency.Min plus an exponentially distributed time
	// of mean Latency.Mean, capped at Latency.Max when Max is set.
	Exponential Distribution = "exponential"
)

// Latency is the time the gateway takes before it answers an attempt it
// serves: a success, a validator's 400 or a random failure. Outages and the
// allowance's 429s answer at once, as a dead or metering front end does
// (a refusal "DOWN at 12ms", not after a wait). The zero Latency adds none.
type Latency struct {
	// Dist is the distribution; empty means Constant.
	Dist Distribution
	// Mean is the constant wait, or the exponential's mean.
	Mean time.Duration
	// Min is the least wait (Uniform and Exponential).
	Min time.Duration
	// Max is the greatest wait (Uniform), or the cap on an Exponential
	// wait (zero: none).
	Max time.Duration
	// Knee, if positive, makes the latency grow with the load: an
	// attempt that arrives with more than Knee attempts in flight at the
	// gateway (itself included) waits its drawn latency times in-flight /
	// Knee — a server sharing a fixed capacity among its requests, whose
	// throughput stops growing at Knee requests in flight and whose
	// latency grows beyond it. The concurrency an adaptive limiter should
	// find. Outages and 429s, answering at once, count in flight only
	// for that instant.
	Knee int
	// Tail, if its Rate is set, is a slow tail: that fraction of the
	// attempts wait a uniform time in [Tail.Min, Tail.Max] instead — a
	// backend whose answers take 40 ms but 3 % take 1–2 s, the tail a
	// hedge races.
	Tail Tail
}

// Tail is a Latency's slow tail.
type Tail struct {
	// Rate is the fraction of attempts in the tail; zero means none.
	Rate float64
	// Min and Max bound a tail attempt's wait, uniformly.
	Min, Max time.Duration
}

// Recovery makes an outage's end depend on the load offered to it — the
// feedback a fixed-length outage leaves out ("in reality the harder you
// hammer the later it recovers"). The zero Recovery ends the outage after
// its Duration whatever the load.
type Recovery struct {
	// Below is the load, in attempts per Config.Window, that the offered
	// load must stay under (strictly) for the outage to end; zero turns
	// the load dependence off.
	Below int
	// For is how long the offered load must have stayed under Below.
	For time.Duration
}

// Outage is a window of the timeline during which attempts fail.
//
// Without a Recovery it lasts from Start to Start+Duration. With one, it
// lasts at least Duration and then until the offered load — the attempts
// counted in the trailing Config.Window, all endpoints, those the outage
// refused included — has stayed below Recovery.Below for Recovery.For: it
// ends at the first instant t ≥ Start+Duration such that every window
// ending in [t-For, t] held fewer than Below attempts.
type Outage struct {
	// Start is when the outage begins, counted from the gateway's first
	// attempt.
	Start time.Duration
	// Duration is how long it lasts at least.
	Duration time.Duration
	// Status is the status it answers with; zero means DefaultOutageStatus
	// (503). A 529 answers as an overloaded provider does (overloaded_error
	// and x-should-retry: true).
	Status int
	// Code, if set, is the error type the answer's body gives, in place of
	// the one the status implies (rate_limit_error for a 429, say): a 429
	// with Code insufficient_quota is a spent quota rather than a rate
	// limit, a 404 with Code model_not_found a retired model — what a
	// client that falls back across providers tells apart. At most 64
	// lower-case letters, digits and underscores.
	Code string
	// Rate is the fraction of attempts that fail during the outage; zero
	// means 1 (all).
	Rate float64
	// Recovery, if Below is set, makes the end depend on load.
	Recovery Recovery
}

// Stream configures the answers to streaming requests: a POST to a path
// ending in /v1/messages whose JSON body has "stream": true, or any request
// to a path ending in /stream. A success is then a text/event-stream in the
// shape of Anthropic's Messages API (message_start, content_block_start,
// Events content_block_delta events, content_block_stop, message_delta,
// message_stop).
type Stream struct {
	// Events is the number of content_block_delta events; zero means
	// DefaultStreamEvents.
	Events int
	// Interval is the pause between events; zero means none.
	Interval time.Duration
	// StallRate is the fraction of streamed successes that stall; zero
	// means none stall.
	StallRate float64
	// StallAfter is how many events a stalling stream sends before it
	// stalls; 0 stalls before the first (message_start).
	StallAfter int
	// StallFor is how long a stall lasts before the stream goes on; zero
	// means until the client goes away or the gateway stops.
	StallFor time.Duration
	// StallPing, if positive, sends an "event: ping" this often during a
	// stall: a server that still answers pings but produces nothing.
	StallPing time.Duration
}

// Charge configures the charge route: a path whose successful attempts
// perform a side effect — a "charge" — that the gateway counts per logical
// request, so that a retry that charges twice shows as a double effect in
// Stats.Charges, on the page and in the metrics (docs/gateway.md).
type Charge struct {
	// Path is the route's path; empty means DefaultChargePath.
	Path string
	// DropRate is the fraction of the charge's successful attempts whose
	// connection is dropped after the charge is made, before any answer:
	// the client sees a transport error and, if it retries, charges again
	// unless the server honours its idempotency key.
	DropRate float64
	// Idempotency puts package idempotency's Middleware, with a memory
	// store, in front of the charge: a request with an Idempotency-Key is
	// charged once and its retries replayed (keys are scoped per client;
	// a request without a key is charged as it comes). The connection
	// drops happen after it, as a network loses an answer.
	Idempotency bool
}

// Config says how a Gateway behaves. Every zero field means the documented
// default, so the zero Config is a healthy dependency on loopback that
// counts: no faults, no latency, 200 ms windows.
//
// The faults are checked in this order, and the first that applies answers
// the attempt: an outage window; the per-key allowance (a 429 does not
// spend the allowance; every attempt that passes it does, the validator's
// 400s included, as a provider's meter runs at admission); the validator;
// a random failure. Everything else is a success (200), which for a
// streaming request may stall.
//
// A Config is a plain value; New copies it.
type Config struct {
	// Addr is the address Listen binds; empty means DefaultAddr. A host
	// that is not loopback needs AllowRemote.
	Addr string
	// AllowRemote allows Addr to bind beyond loopback.
	AllowRemote bool

	// Window is the span attempts are counted over, for the peak and for
	// an outage's Recovery; zero means tally.DefaultWindow. It is rounded down
	// to whole milliseconds, and must be between tally.MinWindow (1 ms) and
	// tally.MaxWindow.
	Window time.Duration
	// Seed seeds the random choices (failures, partial outages, latency,
	// stalls): a PCG drawn from in the order attempts arrive.
	Seed uint64

	// Outages are the timeline's outage windows. They may overlap; the
	// first active one in the list answers.
	Outages []Outage
	// FailureRate is the probability that an attempt the earlier checks
	// let through fails with FailureStatus.
	FailureRate float64
	// FailureStatus is the status of a random failure; zero means
	// DefaultFailureStatus (500).
	FailureStatus int
	// Latency is added before answering what the gateway serves.
	Latency Latency
	// RejectField, if set, is a JSON object key the validator rejects
	// wherever it appears in a request body: a deterministic 400 in
	// Anthropic's shape, naming where the field was
	// ("tools.0.input_schema: unknown field \"strict\"", docs/why.md, section 1).
	RejectField string
	// Allowance, if positive, is the requests each key may make per
	// minute: a token bucket of that many tokens refilled evenly over the
	// minute. An attempt that finds it empty gets a 429 with Retry-After
	// and a rate_limit_error body.
	Allowance int
	// AllowanceHeader names the header whose value is the allowance's key
	// (an API key, say); empty means the client, as counted.
	AllowanceHeader string
	// Serial, if positive, serialises the attempts: the gateway takes one
	// at a time through a single lane, each holding it this long before it
	// is checked against the faults, counted and answered, in the order
	// they arrived (a transport that carries one request at a time, as a
	// stdio pipe to one process does). An attempt whose client goes away
	// before its turn ends is neither served nor counted. Zero means off;
	// at most MaxSerial. See gateway/serial.go.
	Serial time.Duration
	// Stream configures streamed answers.
	Stream Stream
	// Charge configures the charge route.
	Charge Charge

	// ClientHeader names the header a client identifies itself with; empty
	// means tally.DefaultClientHeader. Without it a client is its remote IP.
	ClientHeader string
	// RequestHeader names the header that identifies a logical request;
	// empty means tally.DefaultRequestHeader. Idempotency-Key and
	// X-Idempotency-Key are read when it is absent. An attempt with none
	// of them is counted in total but not per logical request.
	RequestHeader string
	// MaxKeys bounds how many distinct clients, and separately how many
	// logical requests and allowance keys, are tracked; zero means
	// DefaultMaxKeys. Attempts beyond it are counted in total and in
	// Stats.Untracked.
	MaxKeys int
}

// ErrConfig is matched by every error Validate returns.
var ErrConfig = errors.New("gateway: invalid config")

// configError is a field of a Config that is not valid.
type configError struct {
	field string
	msg   string
}

func (e *configError) Error() string   { return "gateway: " + e.field + ": " + e.msg }
func (e *configError) Is(t error) bool { return t == ErrConfig }

func bad(field, format string, args ...any) error {
	return &configError{field: field, msg: fmt.Sprintf(format, args...)}
}

func validStatus(s int) bool { return s == 0 || (s >= 400 && s <= 599) }

func validCode(c string) bool {
	if len(c) > 64 {
		return false
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func validRate(r float64) bool { return r >= 0 && r <= 1 && !math.IsNaN(r) }

// Validate reports the first field of c that is not valid, in an error that
// names it and matches ErrConfig.
func (c *Config) Validate() error {
	if c.Window < 0 || c.Window > tally.MaxWindow || (c.Window > 0 && c.Window < tally.MinWindow) {
		return bad("window", "%v is not between %v and %v", c.Window, tally.MinWindow, tally.MaxWindow)
	}
	for i, o := range c.Outages {
		if err := o.validate("outages[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
	}
	if !validRate(c.FailureRate) {
		return bad("failure.rate", "%v is not between 0 and 1", c.FailureRate)
	}
	if !validStatus(c.FailureStatus) {
		return bad("failure.status", "%d is not an error status (400 to 599)", c.FailureStatus)
	}
	if err := c.Latency.validate(); err != nil {
		return err
	}
	if c.Serial < 0 || c.Serial > MaxSerial {
		return bad("serial", "%v is not between 0 (off) and %v", c.Serial, MaxSerial)
	}
	if c.Allowance < 0 {
		return bad("allowance.per_minute", "%d is negative", c.Allowance)
	}
	if err := c.Stream.validate(); err != nil {
		return err
	}
	if c.MaxKeys < 0 {
		return bad("max_keys", "%d is negative", c.MaxKeys)
	}
	switch {
	case !validRate(c.Charge.DropRate):
		return bad("charge.drop_rate", "%v is not between 0 and 1", c.Charge.DropRate)
	case c.Charge.Path != "" && !strings.HasPrefix(c.Charge.Path, "/"):
		return bad("charge.path", "%q does not start with /", c.Charge.Path)
	case c.Charge.Path == "/" || c.Charge.Path == "/stats" || c.Charge.Path == "/metrics":
		return bad("charge.path", "%q is one of the gateway's own paths", c.Charge.Path)
	}
	return nil
}

// validate checks one outage, named f in the error (outages[2]).
func (o Outage) validate(f string) error {
	switch {
	case o.Start < 0:
		return bad(f+".start", "%v is negative", o.Start)
	case o.Duration < 0:
		return bad(f+".duration", "%v is negative", o.Duration)
	case !validStatus(o.Status):
		return bad(f+".status", "%d is not an error status (400 to 599)", o.Status)
	case !validRate(o.Rate):
		return bad(f+".rate", "%v is not between 0 and 1", o.Rate)
	case !validCode(o.Code):
		return bad(f+".code", "%q: want at most 64 lower-case letters, digits and underscores", o.Code)
	case o.Recovery.Below < 0:
		return bad(f+".recovery.below", "%d is negative", o.Recovery.Below)
	case o.Recovery.For < 0:
		return bad(f+".recovery.for", "%v is negative", o.Recovery.For)
	}
	return nil
}

// validate checks the latency settings.
func (l Latency) validate() error {
	switch l.Dist {
	case "", Constant, Uniform, Exponential:
	default:
		return bad("latency.dist", "%q is not constant, uniform or exponential", l.Dist)
	}
	switch {
	case l.Mean < 0:
		return bad("latency.mean", "%v is negative", l.Mean)
	case l.Min < 0:
		return bad("latency.min", "%v is negative", l.Min)
	case l.Max < 0:
		return bad("latency.max", "%v is negative", l.Max)
	case l.Dist == Uniform && l.Max < l.Min:
		return bad("latency.max", "%v is less than min %v", l.Max, l.Min)
	case l.Dist == Exponential && l.Max > 0 && l.Max < l.Min:
		return bad("latency.max", "%v is less than min %v", l.Max, l.Min)
	}
	if l.Knee < 0 {
		return bad("latency.knee", "%d is negative", l.Knee)
	}
	switch t := l.Tail; {
	case !validRate(t.Rate):
		return bad("latency.tail.rate", "%v is not between 0 and 1", t.Rate)
	case t.Min < 0:
		return bad("latency.tail.min", "%v is negative", t.Min)
	case t.Max < t.Min:
		return bad("latency.tail.max", "%v is less than min %v", t.Max, t.Min)
	case t.Rate == 0 && (t.Min > 0 || t.Max > 0):
		return bad("latency.tail", "has no rate, so its min and max apply to no attempt")
	}
	return nil
}

// validate checks the stream settings.
func (s Stream) validate() error {
	switch {
	case s.Events < 0 || s.Events > MaxStreamEvents:
		return bad("stream.events", "%d is not between 0 and %d", s.Events, MaxStreamEvents)
	case s.Interval < 0:
		return bad("stream.interval", "%v is negative", s.Interval)
	case !validRate(s.StallRate):
		return bad("stream.stall_rate", "%v is not between 0 and 1", s.StallRate)
	case s.StallAfter < 0:
		return bad("stream.stall_after", "%d is negative", s.StallAfter)
	case s.StallFor < 0:
		return bad("stream.stall_for", "%v is negative", s.StallFor)
	case s.StallPing < 0:
		return bad("stream.stall_ping", "%v is negative", s.StallPing)
	}
	return nil
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.Window == 0 {
		c.Window = tally.DefaultWindow
	}
	c.Window = c.Window.Truncate(time.Millisecond)
	c.Outages = append([]Outage(nil), c.Outages...)
	for i := range c.Outages {
		if c.Outages[i].Status == 0 {
			c.Outages[i].Status = DefaultOutageStatus
		}
		if c.Outages[i].Rate == 0 {
			c.Outages[i].Rate = 1
		}
	}
	if c.FailureStatus == 0 {
		c.FailureStatus = DefaultFailureStatus
	}
	if c.Latency.Dist == "" {
		c.Latency.Dist = Constant
	}
	if c.Stream.Events == 0 {
		c.Stream.Events = DefaultStreamEvents
	}
	if c.ClientHeader == "" {
		c.ClientHeader = tally.DefaultClientHeader
	}
	if c.RequestHeader == "" {
		c.RequestHeader = tally.DefaultRequestHeader
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	if c.Charge.Path == "" {
		c.Charge.Path = DefaultChargePath
	}
	return c
}
