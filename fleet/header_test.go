package fleet

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

var headerNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestParseHeader(t *testing.T) {
	unknown := Meter{Remaining: -1, Reset: -1}
	tests := []struct {
		name           string
		h              http.Header
		requests, toks Meter
		wantErr        bool
	}{
		{"none", hdr(), unknown, unknown, false},
		{"openai requests", hdr("x-ratelimit-limit-requests", "10000", "x-ratelimit-remaining-requests", "9999", "x-ratelimit-reset-requests", "6ms"),
			Meter{10000, 9999, 6 * time.Millisecond}, unknown, false},
		{"openai tokens", hdr("x-ratelimit-limit-tokens", "2000000", "x-ratelimit-remaining-tokens", "1999000", "x-ratelimit-reset-tokens", "6m0s"),
			unknown, Meter{2000000, 1999000, 6 * time.Minute}, false},
		{"openai fractional reset", hdr("x-ratelimit-reset-requests", "2m59.56s"), Meter{0, -1, 2*time.Minute + 59560*time.Millisecond}, unknown, false},
		{"openai one second", hdr("x-ratelimit-reset-requests", "1s"), Meter{0, -1, time.Second}, unknown, false},
		{"anthropic requests", hdr("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "2026-03-01T12:00:30Z"),
			Meter{50, 0, 30 * time.Second}, unknown, false},
		{"anthropic tokens, offset", hdr("anthropic-ratelimit-tokens-limit", "80000", "anthropic-ratelimit-tokens-remaining", "79000", "anthropic-ratelimit-tokens-reset", "2026-03-01T13:00:01+01:00"),
			unknown, Meter{80000, 79000, time.Second}, false},
		{"anthropic reset already past", hdr("anthropic-ratelimit-requests-reset", "2026-03-01T11:59:00Z"), Meter{0, -1, 0}, unknown, false},
		{"openai first, anthropic fills", hdr("x-ratelimit-limit-requests", "100", "anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "7"),
			Meter{100, 7, -1}, unknown, false},
		{"whitespace trimmed", hdr("x-ratelimit-limit-requests", " 60 "), Meter{60, -1, -1}, unknown, false},
		{"negative count", hdr("x-ratelimit-remaining-requests", "-1"), unknown, unknown, true},
		{"signed count", hdr("x-ratelimit-limit-requests", "+5"), unknown, unknown, true},
		{"zero limit", hdr("x-ratelimit-limit-requests", "0"), unknown, unknown, true},
		{"huge count", hdr("x-ratelimit-limit-requests", "9007199254740993"), unknown, unknown, true},
		{"not a number", hdr("x-ratelimit-limit-tokens", "lots"), unknown, unknown, true},
		{"empty", hdr("x-ratelimit-limit-tokens", ""), unknown, unknown, true},
		{"negative reset", hdr("x-ratelimit-reset-requests", "-1s"), unknown, unknown, true},
		{"bare number reset", hdr("x-ratelimit-reset-requests", "20"), unknown, unknown, true},
		{"reset too far", hdr("x-ratelimit-reset-requests", "200h"), unknown, unknown, true},
		{"anthropic reset not an instant", hdr("anthropic-ratelimit-requests-reset", "30s"), unknown, unknown, true},
		{"remaining above limit", hdr("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "11"), Meter{10, -1, -1}, unknown, true},
		{"good fields kept beside a bad one", hdr("x-ratelimit-limit-requests", "10", "x-ratelimit-remaining-requests", "x"), Meter{10, -1, -1}, unknown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHeader(tt.h, headerNow)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseHeader error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrHeader) {
				t.Errorf("error %v does not wrap ErrHeader", err)
			}
			if got.Requests != tt.requests || got.Tokens != tt.toks {
				t.Errorf("ParseHeader = %+v, want {Requests:%+v Tokens:%+v}", got, tt.requests, tt.toks)
			}
		})
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add("10000", "9999", "6ms", "50", "0", "2026-03-01T12:00:30Z")
	f.Add("2000000", "1999000", "6m0s", "80000", "79000", "2026-03-01T13:00:01+01:00")
	f.Add("-1", "+5", "1h2m3.5s", "", " ", "2026-02-30T00:00:00Z")
	f.Add("9007199254740993", "1e3", ".5s", "0x10", "007", "0001-01-01T00:00:00Z")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, aLimit, aRemaining, aReset string) {
		h := hdr("x-ratelimit-limit-requests", limit, "x-ratelimit-remaining-requests", remaining, "x-ratelimit-reset-requests", reset,
			"anthropic-ratelimit-tokens-limit", aLimit, "anthropic-ratelimit-tokens-remaining", aRemaining, "anthropic-ratelimit-tokens-reset", aReset)
		got, err := ParseHeader(h, headerNow)
		if err != nil && !errors.Is(err, ErrHeader) {
			t.Fatalf("error %v does not wrap ErrHeader", err)
		}
		for _, m := range []Meter{got.Requests, got.Tokens} {
			if m.Limit < 0 || m.Limit > maxHeaderCount || m.Remaining < -1 || m.Remaining > maxHeaderCount {
				t.Fatalf("meter %+v out of range", m)
			}
			if m.Reset < -1 || m.Reset > maxReset {
				t.Fatalf("reset %v out of range", m.Reset)
			}
			if m.Limit > 0 && m.Remaining > m.Limit {
				t.Fatalf("remaining %d above limit %d", m.Remaining, m.Limit)
			}
		}
	})
}
