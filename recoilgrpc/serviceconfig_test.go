package recoilgrpc_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/recoilgrpc"
)

const retryPolicyJSON = `"retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1.5s","backoffMultiplier":3,"retryableStatusCodes":["UNAVAILABLE","aborted",13]}`

// A service config's retryPolicy and retryThrottling become the policy
// grpc-go's built-in retry would follow, found for a method as grpc-go
// finds it; a malformed config says which field is wrong.
func TestPolicyFromServiceConfig(t *testing.T) {
	full := `{"methodConfig":[{"name":[{"service":"pkg.S","method":"M"}],"timeout":"2.5s",` + retryPolicyJSON + `},
		{"name":[{"service":"pkg.S"}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":1,"retryableStatusCodes":["UNAVAILABLE"]}}],
		"retryThrottling":{"maxTokens":20,"tokenRatio":0.2}}`
	p, err := recoilgrpc.PolicyFromServiceConfig([]byte(full), "/pkg.S/M")
	if err != nil {
		t.Fatal(err)
	}
	want := backoff.FullJitter{Base: 100 * time.Millisecond, Multiplier: 3, Max: 1500 * time.Millisecond}
	if p.MaxAttempts != 4 || p.Backoff != want || p.OverloadBackoff != want || p.Timeout != 2500*time.Millisecond {
		t.Errorf("policy = attempts %d, backoff %v/%v, timeout %v; want 4, %v, 2.5s", p.MaxAttempts, p.Backoff, p.OverloadBackoff, p.Timeout, want)
	}
	if _, ok := p.Budget.(*budget.TokenBucket); !ok {
		t.Errorf("budget %T, want a *budget.TokenBucket", p.Budget)
	}
	for _, tc := range []struct {
		code  codes.Code
		class recoil.Class
	}{{codes.Unavailable, recoil.ClassTransient}, {codes.Aborted, recoil.ClassTransient}, {codes.Internal, recoil.ClassTransient}, {codes.NotFound, recoil.ClassPermanent}} {
		if v := p.Classify(status.Error(tc.code, "x")); v.Class != tc.class {
			t.Errorf("Classify(%v) = %v, want %v", tc.code, v, tc.class)
		}
	}
	if p, _ := recoilgrpc.PolicyFromServiceConfig([]byte(full), "/pkg.S/Other"); p.MaxAttempts != 2 {
		t.Errorf("the service's default entry: MaxAttempts %d, want 2", p.MaxAttempts)
	}
	if p, _ := recoilgrpc.PolicyFromServiceConfig([]byte(full), "/other.S/M"); p.MaxAttempts != 1 {
		t.Errorf("a method with no retryPolicy: MaxAttempts %d, want 1", p.MaxAttempts)
	}
	// A6's own example writes durations without the leading zero, as
	// grpc-go reads them.
	a6 := `{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":4,"initialBackoff":".1s","maxBackoff":"1.s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`
	if p, err := recoilgrpc.PolicyFromServiceConfig([]byte(a6), "/a/b"); err != nil || p.Backoff != (backoff.FullJitter{Base: 100 * time.Millisecond, Multiplier: 2, Max: time.Second}) {
		t.Errorf("A6's example: %v, %v; want a FullJitter from 100ms to 1s", p, err)
	}

	bad := []struct{ js, path string }{
		{`{"methodConfig":`, ""},
		{`{} {}`, ""},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":1,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.maxAttempts"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"100ms","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.initialBackoff"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"0s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.maxBackoff"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":0,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.backoffMultiplier"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["SOMETIMES"]}}]}`, "methodConfig[0].retryPolicy.retryableStatusCodes[0]"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":[]}}]}`, "methodConfig[0].retryPolicy.retryableStatusCodes"},
		{`{"methodConfig":[{"name":[{}]},{"name":[{"service":"x"}],"hedgingPolicy":{"maxAttempts":1}}]}`, "methodConfig[1].hedgingPolicy.maxAttempts"},
		{`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"hedgingDelay":"1s"}}]}`, "methodConfig[0].hedgingPolicy.maxAttempts"},
		{`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":2.5}}]}`, "methodConfig[0].hedgingPolicy.maxAttempts"},
		{`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":2,"hedgingDelay":"-1s"}}]}`, "methodConfig[0].hedgingPolicy.hedgingDelay"},
		{`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":2,"hedgingDelay":"500ms"}}]}`, "methodConfig[0].hedgingPolicy.hedgingDelay"},
		{`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":2,"nonFatalStatusCodes":["UNAVAILABLE","OK"]}}]}`, "methodConfig[0].hedgingPolicy.nonFatalStatusCodes[1]"},
		{`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":2,"nonFatalStatusCodes":[17]}}]}`, "methodConfig[0].hedgingPolicy.nonFatalStatusCodes[0]"},
		{`{"methodConfig":[{"name":[{}],` + retryPolicyJSON + `,"hedgingPolicy":{"maxAttempts":2}}]}`, "methodConfig[0].hedgingPolicy"},
		{`{"retryThrottling":{"maxTokens":1001,"tokenRatio":0.1}}`, "retryThrottling.maxTokens"},
		{`{"retryThrottling":{"maxTokens":10,"tokenRatio":-1}}`, "retryThrottling.tokenRatio"},
		{`{"methodConfig":[{"name":[{}],"timeout":"soon"}]}`, "methodConfig[0].timeout"},
		{`{"methodConfig":[{"name":[{}],"timeout":".s"}]}`, "methodConfig[0].timeout"},
		{`{"methodConfig":[{"name":[{}],"timeout":"-s"}]}`, "methodConfig[0].timeout"},
	}
	for _, b := range bad {
		_, err := recoilgrpc.PolicyFromServiceConfig([]byte(b.js), "/a/b")
		var sce *recoilgrpc.ServiceConfigError
		if !errors.As(err, &sce) || !errors.Is(err, recoilgrpc.ErrServiceConfig) {
			t.Errorf("PolicyFromServiceConfig(%s) = %v, want a *ServiceConfigError", b.js, err)
			continue
		}
		if sce.Path != b.path || !strings.Contains(err.Error(), b.path) {
			t.Errorf("PolicyFromServiceConfig(%s): path %q (%v), want %q", b.js, sce.Path, err, b.path)
		}
	}
}

// A hedgingPolicy becomes a Hedge as gRFC A6 describes it: maxAttempts
// attempts in all (capped at 5), one hedge after another every
// hedgingDelay ("0s" or unset: all at once), no backoff after a non-fatal
// failure, and a Classify that retries the non-fatal codes alone.
func TestPolicyFromServiceConfigHedging(t *testing.T) {
	const throttle = `"retryThrottling":{"maxTokens":10,"tokenRatio":0.1}`
	tests := []struct {
		name     string
		policy   string
		attempts int
		delay    time.Duration
		nonFatal []codes.Code
	}{
		{name: "A6's example", policy: `{"maxAttempts":4,"hedgingDelay":".5s","nonFatalStatusCodes":["UNAVAILABLE","INTERNAL","ABORTED"]}`,
			attempts: 4, delay: 500 * time.Millisecond, nonFatal: []codes.Code{codes.Unavailable, codes.Internal, codes.Aborted}},
		{name: "all at once", policy: `{"maxAttempts":4,"hedgingDelay":"0s","nonFatalStatusCodes":[14]}`,
			attempts: 4, delay: recoilgrpc.ZeroHedgingDelay, nonFatal: []codes.Code{codes.Unavailable}},
		{name: "no delay, no non-fatal codes, maxAttempts capped", policy: `{"maxAttempts":9}`,
			attempts: 5, delay: recoilgrpc.ZeroHedgingDelay},
		{name: "an empty set", policy: `{"maxAttempts":2,"hedgingDelay":"0.25s","nonFatalStatusCodes":[]}`,
			attempts: 2, delay: 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := `{"methodConfig":[{"name":[{"service":"pkg.S"}],"timeout":"3s","hedgingPolicy":` + tt.policy + `}],` + throttle + `}`
			p, err := recoilgrpc.PolicyFromServiceConfig([]byte(js), "/pkg.S/M")
			if err != nil {
				t.Fatal(err)
			}
			if p.MaxAttempts != tt.attempts || p.Timeout != 3*time.Second {
				t.Errorf("MaxAttempts %d, Timeout %v; want %d, 3s", p.MaxAttempts, p.Timeout, tt.attempts)
			}
			if p.Hedge == nil || p.Hedge.Delay != tt.delay || p.Hedge.MaxHedges != tt.attempts-1 || p.Hedge.Quantile != 0 {
				t.Fatalf("Hedge = %+v, want Delay %v, MaxHedges %d", p.Hedge, tt.delay, tt.attempts-1)
			}
			if p.Backoff != (backoff.None{}) || p.OverloadBackoff != (backoff.None{}) {
				t.Errorf("backoff %v/%v, want none: A6 sends the next hedge at once after a non-fatal failure", p.Backoff, p.OverloadBackoff)
			}
			if _, ok := p.Budget.(*budget.TokenBucket); !ok {
				t.Errorf("budget %T, want the retryThrottling's *budget.TokenBucket", p.Budget)
			}
			for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
				want := recoil.ClassPermanent
				if slices.Contains(tt.nonFatal, c) {
					want = recoil.ClassTransient
				}
				if v := p.Classify(status.Error(c, "x")); v.Class != want {
					t.Errorf("Classify(%v) = %v, want %v", c, v, want)
				}
			}
		})
	}
}
