package recoilgrpc_test

import (
	"errors"
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

	bad := []struct{ js, path string }{
		{`{"methodConfig":`, ""},
		{`{} {}`, ""},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":1,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.maxAttempts"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"100ms","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.initialBackoff"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"0s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.maxBackoff"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":0,"retryableStatusCodes":["UNAVAILABLE"]}}]}`, "methodConfig[0].retryPolicy.backoffMultiplier"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["SOMETIMES"]}}]}`, "methodConfig[0].retryPolicy.retryableStatusCodes[0]"},
		{`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":[]}}]}`, "methodConfig[0].retryPolicy.retryableStatusCodes"},
		{`{"methodConfig":[{"name":[{}]},{"name":[{"service":"x"}],"hedgingPolicy":{"maxAttempts":2}}]}`, "methodConfig[1].hedgingPolicy"},
		{`{"retryThrottling":{"maxTokens":1001,"tokenRatio":0.1}}`, "retryThrottling.maxTokens"},
		{`{"retryThrottling":{"maxTokens":10,"tokenRatio":-1}}`, "retryThrottling.tokenRatio"},
		{`{"methodConfig":[{"name":[{}],"timeout":"soon"}]}`, "methodConfig[0].timeout"},
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
