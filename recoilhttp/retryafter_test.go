package recoilhttp

import (
	"net/http"
	"testing"
	"time"
)

// now is the instant the header tests are measured from.
var now = time.Date(2025, time.March, 14, 12, 0, 0, 0, time.UTC)

// hdr builds a header from name, value pairs, canonicalizing the names as a
// received response's header is.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func rfc3339(d time.Duration) string  { return now.Add(d).Format(time.RFC3339) }
func httpDate(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }

func TestServerWait(t *testing.T) {
	tests := []struct {
		name   string
		h      http.Header
		want   time.Duration
		wantOK bool
	}{
		{"nil header", nil, 0, false},
		{"no wait headers", hdr("Content-Type", "application/json"), 0, false},

		{"retry-after-ms integer", hdr("retry-after-ms", "1500"), 1500 * time.Millisecond, true},
		{"retry-after-ms fraction", hdr("retry-after-ms", "1500.5"), 1500500 * time.Microsecond, true},
		{"retry-after-ms sub-nanosecond digits", hdr("retry-after-ms", "0.0000019"), time.Nanosecond, true},
		{"retry-after-ms zero", hdr("retry-after-ms", "0"), 0, true},
		{"retry-after-ms surrounding OWS", hdr("retry-after-ms", " \t20 "), 20 * time.Millisecond, true},
		{"retry-after-ms exactly MaxHeaderWait", hdr("retry-after-ms", "86400000"), MaxHeaderWait, true},

		{"Retry-After seconds", hdr("Retry-After", "30"), 30 * time.Second, true},
		{"Retry-After fraction", hdr("Retry-After", "1.5"), 1500 * time.Millisecond, true},
		{"Retry-After leading dot", hdr("Retry-After", ".25"), 250 * time.Millisecond, true},
		{"Retry-After trailing dot", hdr("Retry-After", "2."), 2 * time.Second, true},
		{"Retry-After leading zeros", hdr("Retry-After", "0000000000000000000000007"), 7 * time.Second, true},
		{"Retry-After zero", hdr("Retry-After", "0"), 0, true},
		{"Retry-After exactly MaxHeaderWait", hdr("Retry-After", "86400"), MaxHeaderWait, true},
		{"Retry-After IMF-fixdate", hdr("Retry-After", httpDate(90*time.Second)), 90 * time.Second, true},
		{"Retry-After RFC 850 date", hdr("Retry-After", now.Add(2*time.Minute).Format(time.RFC850)), 2 * time.Minute, true},
		{"Retry-After asctime date", hdr("Retry-After", now.Add(time.Hour).Format(time.ANSIC)), time.Hour, true},
		{"Retry-After date now", hdr("Retry-After", httpDate(0)), 0, true},

		{"anthropic requests reset", hdr("anthropic-ratelimit-requests-reset", rfc3339(20*time.Second)), 20 * time.Second, true},
		{"anthropic reset with fraction", hdr("anthropic-ratelimit-tokens-reset", now.Add(1500*time.Millisecond).Format(time.RFC3339Nano)), 1500 * time.Millisecond, true},
		{"anthropic reset with offset", hdr("anthropic-ratelimit-tokens-reset", now.Add(time.Minute).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)), time.Minute, true},
		{"anthropic input tokens reset", hdr("anthropic-ratelimit-input-tokens-reset", rfc3339(5*time.Second)), 5 * time.Second, true},
		{"anthropic output tokens reset", hdr("anthropic-ratelimit-output-tokens-reset", rfc3339(7*time.Second)), 7 * time.Second, true},

		{"openai reset requests", hdr("x-ratelimit-reset-requests", "1s"), time.Second, true},
		{"openai reset tokens minutes", hdr("x-ratelimit-reset-tokens", "6m0s"), 6 * time.Minute, true},
		{"openai reset milliseconds", hdr("x-ratelimit-reset-requests", "20ms"), 20 * time.Millisecond, true},
		{"openai reset compound", hdr("x-ratelimit-reset-tokens", "1h2m3.5s"), time.Hour + 2*time.Minute + 3500*time.Millisecond, true},
		{"openai reset fraction", hdr("x-ratelimit-reset-tokens", "0.5s"), 500 * time.Millisecond, true},
		{"openai reset zero", hdr("x-ratelimit-reset-tokens", "0s"), 0, true},

		// A real OpenAI 429: Retry-After wins over the reset headers.
		{"openai 429", hdr(
			"Retry-After", "20",
			"x-ratelimit-limit-requests", "500",
			"x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "120ms",
			"x-ratelimit-limit-tokens", "30000",
			"x-ratelimit-remaining-tokens", "29000",
			"x-ratelimit-reset-tokens", "2s",
		), 20 * time.Second, true},
		// A real Anthropic 429: likewise.
		{"anthropic 429", hdr(
			"retry-after", "15",
			"anthropic-ratelimit-requests-limit", "50",
			"anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", rfc3339(15*time.Second),
			"anthropic-ratelimit-input-tokens-limit", "20000",
			"anthropic-ratelimit-input-tokens-remaining", "20000",
			"anthropic-ratelimit-input-tokens-reset", rfc3339(time.Second),
		), 15 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ServerWait(tt.h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ServerWait(%v) = %v, %t, want %v, %t", tt.h, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// hostile are values no header may direct a wait with.
var hostile = []string{
	"", " ", "\t", "  \t ",
	"-1", "-0", "-1.5", "+5", "- 5",
	"NaN", "nan", "inf", "Inf", "+Inf", "-inf", "Infinity", "1e400", "1e3", "1E2", "1.5e2", "0x10", "0x1p4",
	"1_000", "1,5", "1.5.5", "1 5", ".", "..", "5s5", "five", "٣", "１", "\x00", "1\x00",
	"99999999999999999999999999999999999999", "9223372036854775808",
	"Wed, 21 Oct 2015 07:28:00 GMT", // past
	"Wed, 21 Oct 2099 07:28:00 GMT", // beyond MaxHeaderWait
	"<html>",
}

// The hostile values, and form-specific bad ones, are absent in every
// position, and the next form is tried.
func TestServerWaitHostile(t *testing.T) {
	forms := []struct {
		name  string
		extra []string
	}{
		{"Retry-After-Ms", []string{"86400001", "86400000.000001", "1s", "1500ms"}},
		{"Retry-After", []string{
			"86401", "86400.000000001", "30s",
			httpDate(-time.Second), httpDate(MaxHeaderWait + time.Second),
			"2025-03-14T12:00:30Z", "Fri, 14 Mar 2025 12:00:30 +0100 garbage",
		}},
		{"Anthropic-Ratelimit-Requests-Reset", []string{
			rfc3339(-time.Second), rfc3339(MaxHeaderWait + time.Second),
			"2025-03-14T12:00:30", "30", "30s", httpDate(30 * time.Second), "9999-99-99T99:99:99Z",
		}},
		{"X-Ratelimit-Reset-Tokens", []string{
			"-1s", "-0.5s", "25h", "24h0m0.000000001s", "9999999999999h", "1", "1e3s", "s", "1m-1s", rfc3339(30 * time.Second),
		}},
	}
	for i, form := range forms {
		// What follows the form: the next form with a valid value.
		var next http.Header
		var nextWait time.Duration
		switch i {
		case 0, 1:
			next, nextWait = hdr("anthropic-ratelimit-tokens-reset", rfc3339(42*time.Second)), 42*time.Second
		case 2:
			next, nextWait = hdr("x-ratelimit-reset-requests", "42s"), 42*time.Second
		}
		for _, v := range append(append([]string(nil), hostile...), form.extra...) {
			h := hdr(form.name, v)
			if got, ok := ServerWait(h, now); ok {
				t.Errorf("ServerWait(%s: %q) = %v, true, want absent", form.name, v, got)
			}
			if next == nil {
				continue
			}
			for k, vs := range next {
				h[k] = vs
			}
			if got, ok := ServerWait(h, now); got != nextWait || !ok {
				t.Errorf("ServerWait(%s: %q, then a valid form) = %v, %t, want %v, true", form.name, v, got, ok, nextWait)
			}
		}
	}
}

// The first form present with a valid value wins.
func TestServerWaitOrder(t *testing.T) {
	all := []string{
		"retry-after-ms", "1000",
		"retry-after", "2",
		"anthropic-ratelimit-requests-reset", rfc3339(3 * time.Second),
		"x-ratelimit-reset-requests", "4s",
	}
	for first := 0; first < len(all); first += 2 {
		h := hdr(all[first:]...)
		want := time.Duration(first/2+1) * time.Second
		if got, ok := ServerWait(h, now); got != want || !ok {
			t.Errorf("ServerWait(%v) = %v, %t, want %v, true", h, got, ok, want)
		}
		// The same with every earlier form present but invalid.
		for i := 0; i < first; i += 2 {
			h.Set(all[i], "garbage")
		}
		if got, ok := ServerWait(h, now); got != want || !ok {
			t.Errorf("ServerWait(%v) = %v, %t, want %v, true", h, got, ok, want)
		}
	}
	// A shorter wait later in the order does not beat an earlier form.
	h := hdr("retry-after", "60", "retry-after-ms", "50")
	if got, ok := ServerWait(h, now); got != 50*time.Millisecond || !ok {
		t.Errorf("ServerWait(%v) = %v, %t, want 50ms, true", h, got, ok)
	}
	// Only the first of repeated values is read.
	h = hdr("retry-after", "garbage", "retry-after", "5")
	if got, ok := ServerWait(h, now); ok {
		t.Errorf("ServerWait(%v) = %v, true, want absent", h, got)
	}
}

func TestServerWaitResetRule(t *testing.T) {
	const (
		aReq  = "anthropic-ratelimit-requests-reset"
		aReqR = "anthropic-ratelimit-requests-remaining"
		aTok  = "anthropic-ratelimit-tokens-reset"
		aTokR = "anthropic-ratelimit-tokens-remaining"
		aIn   = "anthropic-ratelimit-input-tokens-reset"
		aInR  = "anthropic-ratelimit-input-tokens-remaining"
		aOut  = "anthropic-ratelimit-output-tokens-reset"
		aOutR = "anthropic-ratelimit-output-tokens-remaining"
		oReq  = "x-ratelimit-reset-requests"
		oReqR = "x-ratelimit-remaining-requests"
		oTok  = "x-ratelimit-reset-tokens"
		oTokR = "x-ratelimit-remaining-tokens"
	)
	tests := []struct {
		name   string
		h      http.Header
		want   time.Duration
		wantOK bool
	}{
		{"no remaining headers: the longest",
			hdr(aReq, rfc3339(10*time.Second), aTok, rfc3339(50*time.Second), aIn, rfc3339(30*time.Second)), 50 * time.Second, true},
		{"no remaining headers: the longest valid",
			hdr(aReq, rfc3339(10*time.Second), aTok, rfc3339(48*time.Hour), aIn, "garbage"), 10 * time.Second, true},
		{"only the exhausted limit counts",
			hdr(aReq, rfc3339(10*time.Second), aReqR, "0", aTok, rfc3339(50*time.Second), aTokR, "1200"), 10 * time.Second, true},
		{"the longest exhausted limit",
			hdr(aReq, rfc3339(10*time.Second), aReqR, "0", aIn, rfc3339(40*time.Second), aInR, "0", aOut, rfc3339(50*time.Second), aOutR, "8000"), 40 * time.Second, true},
		{"remaining with whitespace",
			hdr(aOut, rfc3339(3*time.Second), aOutR, " 0 "), 3 * time.Second, true},
		{"a reset without its remaining header is not exhausted",
			hdr(aReq, rfc3339(10*time.Second), aReqR, "0", aTok, rfc3339(50*time.Second)), 10 * time.Second, true},
		{"nothing exhausted: no wait",
			hdr(aReq, rfc3339(10*time.Second), aReqR, "3", aTok, rfc3339(50*time.Second), aTokR, "1200"), 0, false},
		{"exhausted limit with an invalid reset: no wait",
			hdr(aReq, rfc3339(-10*time.Second), aReqR, "0", aTok, rfc3339(50*time.Second), aTokR, "1200"), 0, false},
		{"anthropic directs nothing: openai is read",
			hdr(aReq, rfc3339(10*time.Second), aReqR, "3", oTok, "7s"), 7 * time.Second, true},
		{"anthropic before openai",
			hdr(oTok, "1m0s", aReq, rfc3339(10*time.Second)), 10 * time.Second, true},
		{"openai: no remaining headers, the longest",
			hdr(oReq, "120ms", oTok, "6m0s"), 6 * time.Minute, true},
		{"openai: requests exhausted",
			hdr(oReq, "120ms", oReqR, "0", oTok, "6m0s", oTokR, "149984"), 120 * time.Millisecond, true},
		{"openai: tokens exhausted",
			hdr(oReq, "120ms", oReqR, "59", oTok, "6m0s", oTokR, "0"), 6 * time.Minute, true},
		{"openai: both exhausted",
			hdr(oReq, "2s", oReqR, "0", oTok, "1s", oTokR, "0"), 2 * time.Second, true},
		{"openai: nothing exhausted",
			hdr(oReq, "2s", oReqR, "1", oTok, "1s", oTokR, "10"), 0, false},
		{"remaining header blank is absent",
			hdr(oReq, "2s", oReqR, " ", oTok, "1s"), 2 * time.Second, true},
		{"remaining families are separate",
			hdr(aReqR, "5", oTok, "3s"), 3 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ServerWait(tt.h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ServerWait(%v) = %v, %t, want %v, %t", tt.h, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func FuzzServerWait(f *testing.F) {
	f.Add("1500", "", "", "", "", "")
	f.Add("", "1.5", "", "", "", "")
	f.Add("", "Fri, 14 Mar 2025 12:01:00 GMT", "", "", "", "")
	f.Add("", "", "2025-03-14T12:00:20Z", "0", "6m0s", "0")
	f.Add("NaN", "inf", "2025-03-14T11:00:00Z", "", "-1s", "")
	f.Fuzz(func(t *testing.T, ms, ra, anthropicReset, anthropicRemaining, openAIReset, openAIRemaining string) {
		h := hdr(
			"retry-after-ms", ms,
			"retry-after", ra,
			"anthropic-ratelimit-tokens-reset", anthropicReset,
			"anthropic-ratelimit-tokens-remaining", anthropicRemaining,
			"x-ratelimit-reset-tokens", openAIReset,
			"x-ratelimit-remaining-tokens", openAIRemaining,
		)
		got, ok := ServerWait(h, now)
		if !ok && got != 0 {
			t.Fatalf("ServerWait(%v) = %v, false, want 0 when absent", h, got)
		}
		if ok && (got < 0 || got > MaxHeaderWait) {
			t.Fatalf("ServerWait(%v) = %v, want within [0, %v]", h, got, MaxHeaderWait)
		}
		if d, ok2 := parseDecimal(ms, time.Millisecond); ok2 && (got != d || !ok) {
			t.Fatalf("ServerWait(%v) = %v, %t, want retry-after-ms %v to win", h, got, ok, d)
		}
		if again, ok2 := ServerWait(h, now); again != got || ok2 != ok {
			t.Fatalf("ServerWait(%v) = %v, %t, then %v, %t", h, got, ok, again, ok2)
		}
	})
}

func BenchmarkServerWait(b *testing.B) {
	benchmarks := []struct {
		name string
		h    http.Header
	}{
		{"OpenAI429", hdr(
			"Content-Type", "application/json",
			"retry-after", "20",
			"x-ratelimit-limit-requests", "500",
			"x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "120ms",
			"x-ratelimit-limit-tokens", "30000",
			"x-ratelimit-remaining-tokens", "29000",
			"x-ratelimit-reset-tokens", "2s",
			"x-request-id", "req_abc",
		)},
		{"RetryAfterMs", hdr("retry-after-ms", "1500.5", "retry-after", "2")},
		{"AnthropicResetOnly", hdr(
			"anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", rfc3339(15*time.Second),
			"anthropic-ratelimit-tokens-remaining", "20000",
			"anthropic-ratelimit-tokens-reset", rfc3339(time.Second),
		)},
		{"OpenAIResetOnly", hdr(
			"x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "120ms",
			"x-ratelimit-remaining-tokens", "29000",
			"x-ratelimit-reset-tokens", "2s",
		)},
		{"HTTPDate", hdr("retry-after", httpDate(time.Minute))},
		{"None", hdr("Content-Type", "application/json", "x-request-id", "req_abc")},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ServerWait(bm.h, now)
			}
		})
	}
}
