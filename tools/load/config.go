package load

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/tools/tally"
)

// Defaults for a Config's zero fields.
const (
	// DefaultPause is how long a caller waits before it starts a new
	// logical request after one that was not accepted.
	DefaultPause = 100 * time.Millisecond
	// DefaultMaxRequests bounds the logical requests of a run.
	DefaultMaxRequests = 10_000
	// DefaultDuration bounds a run's time.
	DefaultDuration = time.Minute
	// DefaultTimeout bounds each logical request, waits included.
	DefaultTimeout = 30 * time.Second
	// DefaultProgressEvery is how often Progress is called.
	DefaultProgressEvery = 250 * time.Millisecond
)

// Limits of a Config, which Validate enforces: a run within them holds a
// bounded number of goroutines and connections (its latencies are kept in
// fixed memory whatever their number).
const (
	// MaxCallers is the most closed-loop callers a run may have.
	MaxCallers = 10_000
	// MaxRate is the highest open-loop arrival rate, calls per second.
	MaxRate = 10_000
	// MaxLogicalRequests is the highest MaxRequests.
	MaxLogicalRequests = 10_000_000
	// MaxDuration is the longest Duration, Timeout or Pause.
	MaxDuration = 24 * time.Hour
	// MaxBody is the largest request Body, in bytes.
	MaxBody = 32 << 20
)

// Config describes a run: who calls, how often, through what policy, and
// the bounds. Every zero field means its documented default; URL is
// required.
//
// A run makes calls. In a closed loop (Rate zero) Callers callers each
// make calls one after another; in an open loop calls arrive at Rate per
// second (exponential gaps drawn from Seed). A call is one logical request
// — one RoundTrip through a recoilhttp.Transport under Policy, which makes
// the attempts — or, with UntilAccepted, as many logical requests as it
// takes to have one accepted, each begun after a pause when the one before
// was not: callers that each need one payment through, and try again when
// the retry loop gives up. An until-accepted caller makes one
// call and is done; so is each open-loop arrival; a closed-loop caller
// without UntilAccepted goes on until the bounds.
//
// The bounds: at most MaxRequests logical requests in all, the run's
// Duration, each logical request's Timeout.
//
// A Config is a plain value; Run does not keep it.
type Config struct {
	// URL is where the requests go.
	URL string
	// Method is the requests' method; empty means GET, or POST when Body
	// is set. A request whose method is not idempotent is sent with an
	// Idempotency-Key (the request id), so the Transport may retry it,
	// unless NoIdempotencyKey is set.
	Method string
	// NoIdempotencyKey sends requests whose method is not idempotent
	// without an Idempotency-Key and lets the Transport retry them anyway
	// (recoilhttp.Transport.RetryNonIdempotent), as a retry loop that does
	// not know about keys does: against a server that performs a side
	// effect, a retry after a lost answer does it twice.
	NoIdempotencyKey bool
	// Body is each request's body.
	Body []byte
	// Header is added to each request.
	Header http.Header

	// Callers is the number of closed-loop callers; zero means 1 when Rate
	// is zero. Set Callers or Rate, not both.
	Callers int
	// Rate is the open-loop arrival rate, calls per second.
	Rate float64
	// UntilAccepted makes each job repeat logical requests until one is
	// accepted.
	UntilAccepted bool
	// Pause is the wait before a caller's next logical request after one
	// that was not accepted; zero means DefaultPause, negative means none.
	// It is the same every time: a caller's own loop, written plainly. No
	// caller pauses once MaxRequests logical requests have started: the run
	// ends with its last request, not a pause after it.
	Pause time.Duration

	// MaxRequests bounds the logical requests; zero means
	// DefaultMaxRequests.
	MaxRequests int
	// Duration bounds the run; zero means DefaultDuration. Requests in
	// progress when it ends are cancelled.
	Duration time.Duration
	// Timeout bounds each logical request; zero means DefaultTimeout.
	Timeout time.Duration

	// Policy is the retry policy; a zero Policy means Preset("default").
	Policy Policy
	// Window is the span the peak is counted over; zero means
	// tally.DefaultWindow (200 ms).
	Window time.Duration
	// Seed seeds the jitter and the open-loop arrivals.
	Seed uint64

	// Base sends each attempt; nil means an http.Transport of the run's
	// own, sized for its callers, closed when the run ends.
	Base http.RoundTripper
	// ClientHeader and RequestHeader name the headers that carry the
	// caller's id ("caller-3", "arrival-17") and the logical request's id;
	// empty means tally.DefaultClientHeader and
	// tally.DefaultRequestHeader.
	ClientHeader, RequestHeader string

	// Progress, if set, is called every ProgressEvery while the run lasts,
	// from a goroutine of its own.
	Progress func(Progress)
	// ProgressEvery is how often Progress is called; zero means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
}

// Progress is a run's state while it runs: a plain value.
type Progress struct {
	Elapsed  time.Duration // since the run began
	Calls    int64         // calls begun
	OK       int64         // calls that succeeded
	Failed   int64         // calls that ended without success
	Requests int64         // logical requests started
	Attempts int64         // attempts sent
	// TransportErrors counts the attempts that got no response (see
	// Result.TransportErrors).
	TransportErrors int64
}

// ErrConfig is matched by the errors Validate and Run return for a Config
// that is not valid.
var ErrConfig = errors.New("load: invalid config")

// ConfigError reports a Config field that is not valid. It matches
// ErrConfig with errors.Is. It is a plain value.
type ConfigError struct {
	Field  string // the Config field, e.g. "Callers"
	Value  any    // the value it held
	Reason string // what it must be, e.g. "must be at most 10000"
}

// Error names the field, its value and what it must be.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("load: Config.%s %v: %s", e.Field, e.Value, e.Reason)
}

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func configErr(field string, v any, format string, args ...any) error {
	return &ConfigError{Field: field, Value: v, Reason: fmt.Sprintf(format, args...)}
}

var errDuration = errors.New("load: the run's duration is over")

// Validate reports the first field of c that is not valid, in a
// *ConfigError that names it. Zero fields are valid: they mean their
// defaults. Validate does not modify c.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return configErr("URL", strconv.Quote(c.URL), "want an http or https URL with a host")
	}
	if c.Method != "" {
		if _, err := http.NewRequest(c.Method, c.URL, nil); err != nil {
			return configErr("Method", strconv.Quote(c.Method), "not a valid HTTP method")
		}
	}
	switch {
	case c.Callers < 0:
		return configErr("Callers", c.Callers, "must not be negative")
	case c.Callers > MaxCallers:
		return configErr("Callers", c.Callers, "must be at most %d", MaxCallers)
	case !(c.Rate >= 0): // also rejects NaN
		return configErr("Rate", c.Rate, "must not be negative")
	case c.Rate > MaxRate:
		return configErr("Rate", c.Rate, "must be at most %d per second", MaxRate)
	case c.Callers > 0 && c.Rate > 0:
		return configErr("Rate", c.Rate, "set Callers (closed loop) or Rate (open loop), not both")
	case c.MaxRequests < 0:
		return configErr("MaxRequests", c.MaxRequests, "must not be negative")
	case c.MaxRequests > MaxLogicalRequests:
		return configErr("MaxRequests", c.MaxRequests, "must be at most %d", MaxLogicalRequests)
	case c.Duration < 0:
		return configErr("Duration", c.Duration, "must not be negative")
	case c.Timeout < 0:
		return configErr("Timeout", c.Timeout, "must not be negative")
	case c.Duration > MaxDuration:
		return configErr("Duration", c.Duration, "must be at most %v", MaxDuration)
	case c.Timeout > MaxDuration:
		return configErr("Timeout", c.Timeout, "must be at most %v", MaxDuration)
	case c.Pause > MaxDuration:
		return configErr("Pause", c.Pause, "must be at most %v", MaxDuration)
	case c.Window != 0 && (c.Window < tally.MinWindow || c.Window > tally.MaxWindow):
		return configErr("Window", c.Window, "must be between %v and %v", tally.MinWindow, tally.MaxWindow)
	case len(c.Body) > MaxBody:
		return configErr("Body", fmt.Sprintf("of %d bytes", len(c.Body)), "must be at most %d bytes", MaxBody)
	case c.ProgressEvery < 0:
		return configErr("ProgressEvery", c.ProgressEvery, "must not be negative")
	}
	for name, vs := range c.Header {
		if !validHeaderName(name) {
			return configErr("Header", strconv.Quote(name), "not a valid header name")
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return configErr("Header", strconv.Quote(name+": "+v), "a header value may not hold control characters")
			}
		}
	}
	for _, h := range []struct{ field, name string }{{"ClientHeader", c.ClientHeader}, {"RequestHeader", c.RequestHeader}} {
		if h.name != "" && !validHeaderName(h.name) {
			return configErr(h.field, strconv.Quote(h.name), "not a valid header name")
		}
	}
	if t, up := c.Policy.unrouted(); t != "" {
		return configErr("Policy", strconv.Quote(c.Policy.Name), "fallback target %q reaches upstream %q, which has no URL: give it one with Policy.WithUpstreams (recoil load -upstream %s=URL)", t, up, up)
	}
	return nil
}

// validHeaderName reports whether s is an HTTP field name: a token
// (RFC 9110, section 5.1).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s may be sent as a field value: no
// control characters but tab (RFC 9110, section 5.5).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// normalize fills in the defaults of a valid Config's zero fields.
func normalize(c *Config) {
	if c.Callers == 0 && c.Rate == 0 {
		c.Callers = 1
	}
	if c.Method == "" {
		c.Method = http.MethodGet
		if len(c.Body) > 0 {
			c.Method = http.MethodPost
		}
	}
	if c.Pause == 0 {
		c.Pause = DefaultPause
	}
	if c.MaxRequests == 0 {
		c.MaxRequests = DefaultMaxRequests
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Policy.Policy == nil && c.Policy.Name == "" {
		c.Policy, _ = Preset(PresetDefault)
	}
	if c.Policy.Policy == nil {
		c.Policy.Policy = &recoil.Policy{}
	}
	if c.Policy.Policy.Rand == nil {
		c.Policy.Policy.Rand = &lockedRand{r: rand.New(JitterSource(c.Seed, -1))}
	}
	if c.ClientHeader == "" {
		c.ClientHeader = tally.DefaultClientHeader
	}
	if c.RequestHeader == "" {
		c.RequestHeader = tally.DefaultRequestHeader
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
}
