package recoilgrpc

import (
	"errors"
	"testing"
)

// FuzzPolicyFromServiceConfig: any bytes give a policy or an error that
// wraps ErrServiceConfig, never a panic; a policy has 1 to 5 attempts and
// schedules that never wait less than zero.
func FuzzPolicyFromServiceConfig(f *testing.F) {
	f.Add([]byte(`{"methodConfig":[{"name":[{"service":"s"}],"retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE",4]}}],"retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}`), "/s/m")
	f.Add([]byte(`{"methodConfig":[{"name":[{}],"timeout":"1.5s"}]}`), "/a/b")
	f.Add([]byte(`{"methodConfig":[{"name":[{"service":"s"}],"hedgingPolicy":{}}]}`), "/s/m")
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
