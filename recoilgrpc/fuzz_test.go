package recoilgrpc

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

// FuzzPolicyFromServiceConfig: any bytes give a policy or an error that
// wraps ErrServiceConfig, never a panic; a policy has 1 to 5 attempts and
// schedules that never wait less than zero; a hedged one has 2 to 5
// attempts, one fewer hedges, a positive hedge delay and no backoff; and
// its Classify gives every status a class.
func FuzzPolicyFromServiceConfig(f *testing.F) {
	f.Add([]byte(`{"methodConfig":[{"name":[{"service":"s"}],"retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE",4]}}],"retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}`), "/s/m")
	f.Add([]byte(`{"methodConfig":[{"name":[{}],"timeout":"1.5s"}]}`), "/a/b")
	f.Add([]byte(`{"methodConfig":[{"name":[{"service":"s"}],"hedgingPolicy":{}}]}`), "/s/m")
	f.Add([]byte(`{"methodConfig":[{"name":[{"service":"s"}],"hedgingPolicy":{"maxAttempts":4,"hedgingDelay":".5s","nonFatalStatusCodes":["UNAVAILABLE","INTERNAL",10]}}]}`), "/s/m")
	f.Add([]byte(`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":7,"hedgingDelay":"0s"}}],"retryThrottling":{"maxTokens":5,"tokenRatio":0.5}}`), "/a/b")
	f.Add([]byte(`{"methodConfig":[{"name":[{}],"hedgingPolicy":{"maxAttempts":2},"retryPolicy":{"maxAttempts":2}}]}`), "/a/b")
	f.Add([]byte(`{}`), "")
	f.Fuzz(func(t *testing.T, js []byte, method string) {
		p, err := PolicyFromServiceConfig(js, method)
		if err != nil {
			if !errors.Is(err, ErrServiceConfig) {
				t.Fatalf("error %v does not wrap ErrServiceConfig", err)
			}
			return
		}
		if p.MaxAttempts < 1 || p.MaxAttempts > MaxServiceConfigAttempts {
			t.Fatalf("MaxAttempts = %d, want 1 to %d", p.MaxAttempts, MaxServiceConfigAttempts)
		}
		if p.Backoff != nil {
			for n := 1; n <= p.MaxAttempts; n++ {
				if d := p.Backoff.Delay(n, 0, nil); d < 0 {
					t.Fatalf("Delay(%d) = %v, want at least 0", n, d)
				}
			}
		}
		if p.Timeout < 0 {
			t.Fatalf("Timeout = %v, want at least 0", p.Timeout)
		}
		if h := p.Hedge; h != nil {
			switch {
			case p.MaxAttempts < 2:
				t.Fatalf("a Hedge with MaxAttempts %d, want at least 2", p.MaxAttempts)
			case h.MaxHedges != p.MaxAttempts-1:
				t.Fatalf("MaxHedges = %d with MaxAttempts %d, want one fewer", h.MaxHedges, p.MaxAttempts)
			case h.Delay <= 0:
				t.Fatalf("hedge Delay = %v, want above 0 (zero would mean recoil's default)", h.Delay)
			case p.Backoff != (backoff.None{}):
				t.Fatalf("a hedged policy's Backoff = %v, want none", p.Backoff)
			}
		}
		if p.Classify != nil {
			for c := codes.OK; c <= codes.Unauthenticated; c++ {
				v := p.Classify(status.Error(c, "fuzz"))
				if (c == codes.OK) != (v.Class == recoil.ClassUnknown) {
					t.Fatalf("Classify(%v) = %v", c, v)
				}
			}
		}
	})
}

// FuzzParsePushback: any values give a wait of at least zero or a reason to
// stop, never both, never a panic.
func FuzzParsePushback(f *testing.F) {
	for _, s := range []string{"0", "100", "-1", "soon", "+5", "99999999999999999999", " 1", ""} {
		f.Add(s, "")
	}
	f.Add("10", "20")
	f.Fuzz(func(t *testing.T, a, b string) {
		vals := []string{a}
		if b != "" {
			vals = append(vals, b)
		}
		wait, ok, stop := ParsePushback(vals)
		switch {
		case ok && stop != "":
			t.Fatalf("ParsePushback(%q) = a wait and a stop (%q)", vals, stop)
		case ok && wait < 0:
			t.Fatalf("ParsePushback(%q) = %v, want at least 0", vals, wait)
		case !ok && wait != 0:
			t.Fatalf("ParsePushback(%q) = no wait but %v", vals, wait)
		case !ok && stop == "":
			t.Fatalf("ParsePushback(%q) = neither a wait nor a stop", vals)
		case len(vals) > 1 && ok:
			t.Fatalf("ParsePushback(%q) = a wait from two values", vals)
		}
	})
}

// FuzzPreviousAttempts: any value reads as 0 to MaxAttempt-1, never a panic.
func FuzzPreviousAttempts(f *testing.F) {
	for _, s := range []string{"0", "1", "2", "999", "1000", "4294967296", "-1", "1e3", " 2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if n := previousAttempts([]string{v}); n < 0 || n > 999 {
			t.Fatalf("previousAttempts(%q) = %d, want 0 to 999", v, n)
		}
	})
}
