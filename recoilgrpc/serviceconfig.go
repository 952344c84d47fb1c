package recoilgrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
)

// ErrServiceConfig is what every error of PolicyFromServiceConfig wraps:
// the service config is not one grpc-go would accept, or asks for what a
// recoil.Policy cannot do.
var ErrServiceConfig = errors.New("recoilgrpc: bad service config")

// MaxServiceConfigAttempts caps a retryPolicy's or a hedgingPolicy's
// maxAttempts, as grpc-go does by default (gRFC A6: "values greater than 5
// are treated as 5").
const MaxServiceConfigAttempts = 5

// ZeroHedgingDelay is the recoil.Hedge.Delay a hedgingPolicy whose
// hedgingDelay is "0s" or unset is given: gRFC A6 sends all its attempts at
// once, and a Hedge whose Delay is zero means recoil.DefaultHedgeDelay, so
// the smallest delay stands for none.
const ZeroHedgingDelay = time.Nanosecond

// ServiceConfigError reports what is wrong with a service config, and
// where: Path is the JSON path of the field, such as
// "methodConfig[0].retryPolicy.initialBackoff". errors.Is(err,
// ErrServiceConfig) holds for every one.
type ServiceConfigError struct {
	Path string
	Msg  string
}

// Error formats the error as "recoilgrpc: service config: path: msg".
func (e *ServiceConfigError) Error() string {
	if e.Path == "" {
		return "recoilgrpc: service config: " + e.Msg
	}
	return "recoilgrpc: service config: " + e.Path + ": " + e.Msg
}

// Unwrap returns ErrServiceConfig.
func (e *ServiceConfigError) Unwrap() error { return ErrServiceConfig }

// The JSON shape of a gRPC service config, the parts that matter here
// (gRFC A6, "Integration with Service Config").
type serviceConfig struct {
	MethodConfig    []methodConfig   `json:"methodConfig"`
	RetryThrottling *retryThrottling `json:"retryThrottling"`
}

type methodConfig struct {
	Name          []methodName   `json:"name"`
	Timeout       *string        `json:"timeout"`
	RetryPolicy   *retryPolicy   `json:"retryPolicy"`
	HedgingPolicy *hedgingPolicy `json:"hedgingPolicy"`
}

type methodName struct {
	Service string `json:"service"`
	Method  string `json:"method"`
}

type retryPolicy struct {
	MaxAttempts          *float64          `json:"maxAttempts"`
	InitialBackoff       *string           `json:"initialBackoff"`
	MaxBackoff           *string           `json:"maxBackoff"`
	BackoffMultiplier    *float64          `json:"backoffMultiplier"`
	RetryableStatusCodes []json.RawMessage `json:"retryableStatusCodes"`
}

type hedgingPolicy struct {
	MaxAttempts         *float64          `json:"maxAttempts"`
	HedgingDelay        *string           `json:"hedgingDelay"`
	NonFatalStatusCodes []json.RawMessage `json:"nonFatalStatusCodes"`
}

type retryThrottling struct {
	MaxTokens  *float64 `json:"maxTokens"`
	TokenRatio *float64 `json:"tokenRatio"`
}

// PolicyFromServiceConfig reads a gRPC service config (JSON, as given to
// grpc.WithDefaultServiceConfig or served by a resolver) and returns the
// recoil.Policy that retries or hedges method ("/package.Service/Method")
// as gRFC A6 says, so a team can move from grpc-go's built-in retry (or a
// config written for another gRPC implementation's hedging) to recoil's
// loop and then turn grpc-go's off (grpc.WithDisableRetry):
//
//   - the methodConfig entry for method is found as grpc-go finds it: an
//     exact name, else the service's default (a name with no method),
//     else the config's default (a name with neither);
//   - retryPolicy.maxAttempts becomes MaxAttempts (capped at
//     MaxServiceConfigAttempts);
//   - initialBackoff, maxBackoff and backoffMultiplier become a
//     backoff.FullJitter — gRFC A6 waits random(0, min(initialBackoff ·
//     backoffMultiplier^(n-1), maxBackoff)), which is full jitter — used
//     for Backoff and OverloadBackoff alike, as A6 has one schedule;
//   - retryableStatusCodes (names such as "UNAVAILABLE", or numbers)
//     become the policy's Classify: Classify with that set;
//   - a hedgingPolicy instead becomes a Hedge (below);
//   - retryThrottling's maxTokens and tokenRatio become a
//     budget.TokenBucket, which pays for retries and hedges alike; without
//     it the policy keeps its own default budget (grpc-go would have none;
//     set Budget to recoil.NoBudget for exactly that);
//   - the method's timeout becomes Timeout.
//
// A hedgingPolicy (gRFC A6, "Hedging Policy") becomes:
//
//   - maxAttempts: MaxAttempts (capped at MaxServiceConfigAttempts), and a
//     recoil.Hedge whose MaxHedges is MaxAttempts-1: every hedge is an
//     attempt, as every hedged RPC is in A6;
//   - hedgingDelay: the Hedge's Delay, between the start of one attempt
//     and the next; "0s" or unset sends them all at once
//     (ZeroHedgingDelay);
//   - nonFatalStatusCodes: the policy's Classify, Classify with that set:
//     a non-fatal code is retryable, so the next hedge goes at once,
//     shortcutting its delay, whether or not other attempts are still in
//     flight (Backoff and OverloadBackoff are backoff.None, as A6
//     shortcuts the delay); any other code is permanent and ends the
//     call, cancelling the others. Unset or empty, every code is fatal (as
//     grpc-java reads it).
//
// It differs from A6 in one detail: a server's pushback says when the next
// retry goes, not the next hedge (a pushback that says not to retry ends
// the call, as a fatal code does). Hedge only methods safe to run twice at
// once, as A6 says.
//
// A method the config gives neither policy gets a policy of one attempt.
// A malformed config, or one gRPC would reject (maxAttempts below 2, a
// backoff that is not a positive duration such as "0.1s", a negative
// hedgingDelay, an unknown status code, OK among the nonFatalStatusCodes,
// both a retryPolicy and a hedgingPolicy in one entry, a maxTokens outside
// (0, 1000]), returns a *ServiceConfigError naming the field.
func PolicyFromServiceConfig(serviceConfigJSON []byte, method string) (*recoil.Policy, error) {
	var sc serviceConfig
	dec := json.NewDecoder(bytes.NewReader(serviceConfigJSON))
	if err := dec.Decode(&sc); err != nil {
		return nil, &ServiceConfigError{Msg: "invalid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &ServiceConfigError{Msg: "invalid JSON: data after the config"}
	}
	p := &recoil.Policy{MaxAttempts: 1}
	if t := sc.RetryThrottling; t != nil {
		b, err := tokenBucket(t)
		if err != nil {
			return nil, err
		}
		p.Budget = b
	}
	for i, mc := range sc.MethodConfig {
		if err := mc.check("methodConfig[" + strconv.Itoa(i) + "]"); err != nil {
			return nil, err
		}
	}
	i := match(sc.MethodConfig, method)
	if i < 0 {
		return p, nil
	}
	mc, path := sc.MethodConfig[i], "methodConfig["+strconv.Itoa(i)+"]"
	if mc.Timeout != nil {
		d, err := duration(*mc.Timeout, path+".timeout")
		if err != nil {
			return nil, err
		}
		p.Timeout = d
	}
	switch {
	case mc.RetryPolicy != nil:
		if err := mc.RetryPolicy.apply(p, path+".retryPolicy"); err != nil {
			return nil, err
		}
	case mc.HedgingPolicy != nil:
		if err := mc.HedgingPolicy.apply(p, path+".hedgingPolicy"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// check validates an entry whether or not it applies, as grpc-go rejects
// a whole config for one bad entry.
func (mc methodConfig) check(path string) error {
	switch {
	case mc.RetryPolicy != nil && mc.HedgingPolicy != nil:
		return &ServiceConfigError{Path: path + ".hedgingPolicy", Msg: "set with a retryPolicy: only one of them may be set (gRFC A6)"}
	case mc.RetryPolicy != nil:
		return mc.RetryPolicy.apply(&recoil.Policy{}, path+".retryPolicy")
	case mc.HedgingPolicy != nil:
		return mc.HedgingPolicy.apply(&recoil.Policy{}, path+".hedgingPolicy")
	}
	return nil
}

// match returns the index of the entry that applies to method, or -1.
func match(mcs []methodConfig, method string) int {
	service, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	best, rank := -1, 0
	for i, mc := range mcs {
		for _, n := range mc.Name {
			r := 0
			switch {
			case n.Service == service && n.Method == name && name != "":
				r = 3
			case n.Service == service && n.Method == "" && service != "":
				r = 2
			case n.Service == "" && n.Method == "":
				r = 1
			}
			if r > rank {
				best, rank = i, r
			}
		}
	}
	return best
}

// apply checks a retryPolicy as grpc-go does and sets p from it.
func (rp *retryPolicy) apply(p *recoil.Policy, path string) error {
	attempts, err := maxAttempts(rp.MaxAttempts, path+".maxAttempts")
	if err != nil {
		return err
	}
	initial, err := positive(rp.InitialBackoff, path+".initialBackoff")
	if err != nil {
		return err
	}
	most, err := positive(rp.MaxBackoff, path+".maxBackoff")
	if err != nil {
		return err
	}
	if rp.BackoffMultiplier == nil {
		return &ServiceConfigError{Path: path + ".backoffMultiplier", Msg: "missing"}
	}
	mult := *rp.BackoffMultiplier
	if !(mult > 0) || math.IsInf(mult, 0) {
		return &ServiceConfigError{Path: path + ".backoffMultiplier", Msg: strconv.FormatFloat(mult, 'g', -1, 64) + ", want a number above 0"}
	}
	if len(rp.RetryableStatusCodes) == 0 {
		return &ServiceConfigError{Path: path + ".retryableStatusCodes", Msg: "missing or empty"}
	}
	set, err := statusCodes(rp.RetryableStatusCodes, path+".retryableStatusCodes", false)
	if err != nil {
		return err
	}
	p.MaxAttempts = attempts
	// A multiplier of 1 or less never grows; FullJitter reads 0 as 2.
	s := backoff.FullJitter{Base: initial, Multiplier: mult, Max: most}
	p.Backoff, p.OverloadBackoff = s, s
	p.Classify = func(err error) recoil.Verdict { return Classify(err, set) }
	return nil
}

// apply checks a hedgingPolicy as gRFC A6 (and grpc-java, which
// implements it) does and sets p from it.
func (hp *hedgingPolicy) apply(p *recoil.Policy, path string) error {
	attempts, err := maxAttempts(hp.MaxAttempts, path+".maxAttempts")
	if err != nil {
		return err
	}
	delay := ZeroHedgingDelay
	if hp.HedgingDelay != nil {
		d, err := duration(*hp.HedgingDelay, path+".hedgingDelay")
		switch {
		case err != nil:
			return err
		case d < 0:
			return &ServiceConfigError{Path: path + ".hedgingDelay", Msg: quote(*hp.HedgingDelay) + ", want a duration of at least 0"}
		case d > 0:
			delay = d
		}
	}
	set, err := statusCodes(hp.NonFatalStatusCodes, path+".nonFatalStatusCodes", true)
	if err != nil {
		return err
	}
	p.MaxAttempts = attempts
	p.Hedge = &recoil.Hedge{Delay: delay, MaxHedges: attempts - 1}
	// A non-fatal failure with nothing else in flight sends the next
	// attempt at once; a server's wait still holds it back.
	p.Backoff, p.OverloadBackoff = backoff.None{}, backoff.None{}
	p.Classify = func(err error) recoil.Verdict { return Classify(err, set) }
	return nil
}

// maxAttempts reads a policy's maxAttempts: an integer of at least 2,
// capped at MaxServiceConfigAttempts.
func maxAttempts(v *float64, path string) (int, error) {
	if v == nil {
		return 0, &ServiceConfigError{Path: path, Msg: "missing"}
	}
	ma := *v
	if ma != math.Trunc(ma) || ma < 2 {
		return 0, &ServiceConfigError{Path: path, Msg: strconv.FormatFloat(ma, 'g', -1, 64) + ", want an integer of at least 2"}
	}
	return int(min(ma, MaxServiceConfigAttempts)), nil
}

// statusCodes reads a list of status codes at path. A retryPolicy's must
// not be empty; a hedgingPolicy's may be (none is non-fatal), and may not
// name OK. The set returned is never nil: Classify reads nil as
// DefaultRetryable.
func statusCodes(raws []json.RawMessage, path string, hedging bool) ([]codes.Code, error) {
	if len(raws) == 0 && !hedging {
		return nil, &ServiceConfigError{Path: path, Msg: "missing or empty"}
	}
	set := make([]codes.Code, 0, len(raws))
	for i, raw := range raws {
		c, err := statusCode(raw)
		if err == nil && hedging && c == codes.OK {
			err = errors.New("OK is not a failure")
		}
		if err != nil {
			return nil, &ServiceConfigError{Path: path + "[" + strconv.Itoa(i) + "]", Msg: err.Error()}
		}
		set = append(set, c)
	}
	return set, nil
}

// statusCode reads a status code as a name ("UNAVAILABLE", any case) or
// a number from 0 to 16.
func statusCode(raw json.RawMessage) (codes.Code, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		for c := codes.OK; c <= codes.Unauthenticated; c++ {
			if strings.EqualFold(codeName(c), name) || c == codes.Canceled && strings.EqualFold(name, "CANCELED") {
				return c, nil
			}
		}
		return 0, errors.New("unknown status code " + quote(name))
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil || n != math.Trunc(n) || n < 0 || n > float64(codes.Unauthenticated) {
		return 0, errors.New("status code " + quote(string(raw)) + ", want a name such as \"UNAVAILABLE\" or a number from 0 to 16")
	}
	return codes.Code(n), nil
}

// codeName is a code's name as service configs spell it: UNAVAILABLE,
// RESOURCE_EXHAUSTED.
func codeName(c codes.Code) string {
	s := c.String() // "ResourceExhausted"
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	switch c {
	case codes.OK:
		return "OK"
	case codes.Canceled:
		return "CANCELLED" // the spelling of google.rpc.Code
	}
	return strings.ToUpper(b.String())
}

func positive(v *string, path string) (time.Duration, error) {
	if v == nil {
		return 0, &ServiceConfigError{Path: path, Msg: "missing"}
	}
	d, err := duration(*v, path)
	if err == nil && d <= 0 {
		err = &ServiceConfigError{Path: path, Msg: quote(*v) + ", want a duration above 0"}
	}
	return d, err
}

// duration reads a google.protobuf.Duration in its JSON form: decimal
// seconds with up to nine fractional digits and an "s", such as "0.1s" —
// or ".1s", as gRFC A6's own examples write it and grpc-go reads it: the
// whole or the fractional part may be left out, not both.
func duration(v, path string) (time.Duration, error) {
	bad := &ServiceConfigError{Path: path, Msg: quote(v) + `, want a duration such as "0.1s"`}
	num, ok := strings.CutSuffix(v, "s")
	if !ok || num == "" {
		return 0, bad
	}
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	whole, frac, _ := strings.Cut(num, ".")
	if whole == "" && frac == "" || len(frac) > 9 || !digits(whole) || !digits(frac) {
		return 0, bad
	}
	if whole == "" {
		whole = "0"
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > math.MaxInt64/int64(time.Second)-1 {
		return 0, &ServiceConfigError{Path: path, Msg: quote(v) + ": out of range"}
	}
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	d := time.Duration(sec)*time.Second + time.Duration(ns)
	if neg {
		d = -d
	}
	return d, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// tokenBucket checks retryThrottling as grpc-go does and returns its bucket.
func tokenBucket(t *retryThrottling) (*budget.TokenBucket, error) {
	const path = "retryThrottling"
	switch {
	case t.MaxTokens == nil:
		return nil, &ServiceConfigError{Path: path + ".maxTokens", Msg: "missing"}
	case !(*t.MaxTokens > 0 && *t.MaxTokens <= 1000):
		return nil, &ServiceConfigError{Path: path + ".maxTokens", Msg: strconv.FormatFloat(*t.MaxTokens, 'g', -1, 64) + ", want a number in (0, 1000]"}
	case t.TokenRatio == nil:
		return nil, &ServiceConfigError{Path: path + ".tokenRatio", Msg: "missing"}
	case !(*t.TokenRatio > 0) || math.IsInf(*t.TokenRatio, 0):
		return nil, &ServiceConfigError{Path: path + ".tokenRatio", Msg: strconv.FormatFloat(*t.TokenRatio, 'g', -1, 64) + ", want a number above 0"}
	}
	// Checked above as grpc-go checks it, which budget.NewTokenBucket also
	// accepts.
	return budget.Must(budget.NewTokenBucket(budget.TokenBucketConfig{MaxTokens: *t.MaxTokens, TokenRatio: *t.TokenRatio})), nil
}
