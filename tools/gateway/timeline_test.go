package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseTimeline(t *testing.T) {
	tests := []struct {
		file string
		want Config
	}{
		{"gateway-outage.yaml", Config{
			Window: 200 * time.Millisecond, Seed: 4,
			Outages: []Outage{{Duration: 700 * time.Millisecond, Status: 503, Recovery: Recovery{Below: 5, For: 300 * time.Millisecond}}},
			Latency: Latency{Dist: Uniform, Min: time.Millisecond, Max: 5 * time.Millisecond},
		}},
		{"primary-provider.yaml", Config{
			Window: 200 * time.Millisecond, Seed: 1,
			Latency: Latency{Dist: Uniform, Min: 5 * time.Millisecond, Max: 15 * time.Millisecond},
			Outages: []Outage{
				{Start: time.Second, Duration: 3 * time.Second, Status: 529},
				{Start: 4 * time.Second, Duration: 3 * time.Second, Status: 404, Code: "model_not_found"},
				{Start: 7 * time.Second, Duration: 4 * time.Second, Status: 429, Code: "insufficient_quota"},
			},
		}},
		{"backup-provider.yaml", Config{
			Window: 200 * time.Millisecond, Seed: 2,
			Latency: Latency{Dist: Uniform, Min: 10 * time.Millisecond, Max: 30 * time.Millisecond},
		}},
		{"knee.yaml", Config{
			Window: 200 * time.Millisecond, Seed: 5,
			Latency: Latency{Mean: 50 * time.Millisecond, Knee: 16},
		}},
		{"slow-tail.yaml", Config{
			Window: 200 * time.Millisecond, Seed: 3,
			Latency: Latency{Dist: Uniform, Min: 30 * time.Millisecond, Max: 50 * time.Millisecond,
				Tail: Tail{Rate: 0.03, Min: time.Second, Max: 2 * time.Second}},
		}},
		{"everything.yaml", Config{
			Window: 100 * time.Millisecond, Seed: 7,
			Outages: []Outage{
				{Start: time.Second, Duration: 2 * time.Second, Status: 529, Rate: 0.5},
				{Start: 10 * time.Second, Duration: 500 * time.Millisecond, Recovery: Recovery{Below: 20, For: time.Second}},
			},
			FailureRate: 0.05, FailureStatus: 502,
			Latency:     Latency{Dist: Exponential, Mean: 20 * time.Millisecond, Min: time.Millisecond, Max: time.Second},
			RejectField: "strict", Allowance: 600, AllowanceHeader: "X-Api-Key",
			Stream: Stream{Events: 4, Interval: 5 * time.Millisecond, StallRate: 0.25, StallAfter: 2,
				StallFor: 3 * time.Second, StallPing: 500 * time.Millisecond},
			ClientHeader: "X-Caller", RequestHeader: "X-Trace", MaxKeys: 5000,
			Charge: Charge{Path: "/v2/pay", DropRate: 0.25, Idempotency: true},
		}},
	}
	for _, tt := range tests {
		got, err := LoadTimeline(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Errorf("LoadTimeline(%s): %v", tt.file, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("LoadTimeline(%s) =\n%+v\nwant\n%+v", tt.file, got, tt.want)
		}
	}
	for _, empty := range []string{"", "# nothing\n", "---\n"} {
		if got, err := ParseTimeline("empty.yaml", []byte(empty)); err != nil || !reflect.DeepEqual(got, Config{}) {
			t.Errorf("ParseTimeline(%q) = %+v, %v; want the zero Config", empty, got, err)
		}
	}
}

func TestParseTimelineErrorsNameTheLine(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		line  int
		field string
		msg   string // in the error's text
	}{
		{"unknown field", "window: 200ms\noutages:\n  - start: 0s\n    durration: 700ms\n", 4, "outages[0].durration", `unknown field "durration"`},
		{"bad duration", "outages:\n  - start: 0s\n    duration: 7oo ms\n", 3, "outages[0].duration", `want a duration such as 200ms or 1m30s, got "7oo ms"`},
		{"negative duration", "outages:\n  - duration: 1s\n  - duration: -5s\n", 3, "outages[1].duration", "-5s is negative"},
		{"status not an error", "outages:\n  - duration: 1s\n    status: 200\n", 3, "outages[0].status", "not an error status"},
		{"rate above 1", "failure:\n  rate: 1.5\n", 2, "failure.rate", "not between 0 and 1"},
		{"rate not a number", "failure:\n  rate: often\n", 2, "failure.rate", `want a number, got "often"`},
		{"rate as a percentage", "failure:\n  rate: 150%\n", 2, "failure.rate", "not between 0 and 1"},
		{"unknown distribution", "latency:\n  dist: normal\n  mean: 5ms\n", 2, "latency.dist", `"normal"`},
		{"uniform upside down", "latency:\n  dist: uniform\n  min: 50ms\n  max: 10ms\n", 4, "latency.max", "less than min"},
		{"window too long", "seed: 1\nwindow: 2m\n", 2, "window", "not between"},
		{"outages not a list", "outages: 700ms\n", 1, "outages", "want a list"},
		{"section not a mapping", "stream: 5\n", 1, "stream", `want a mapping, got "5"`},
		{"negative allowance", "allowance:\n  per_minute: -1\n", 2, "allowance.per_minute", "negative"},
		{"not a whole number", "stream:\n  events: 2.5\n", 2, "stream.events", `want a whole number, got "2.5"`},
		{"too many events", "stream:\n  events: 1000000000\n", 2, "stream.events", "not between 0 and 100000"},
		{"unknown top-level field", "window: 1s\naddr: 0.0.0.0:80\n", 2, "addr", `unknown field "addr"`},
		{"not a mapping", "- 1\n- 2\n", 1, "", "want a mapping, got a list"},
		{"a second document", "window: 1s\n---\nwindow: 2s\n", 2, "", "one YAML document"},
		{"seed negative", "seed: -4\n", 1, "seed", `want a non-negative whole number, got "-4"`},
		{"knee negative", "latency:\n  mean: 5ms\n  knee: -2\n", 3, "latency.knee", "-2 is negative"},
		{"tail upside down", "latency:\n  tail: {rate: 0.1, min: 2s, max: 1s}\n", 2, "latency.tail.max", "less than min"},
		{"tail without a rate", "latency:\n  tail:\n    min: 1s\n    max: 2s\n", 3, "latency.tail", "apply to no attempt"},
		{"code not a code", "outages:\n  - duration: 1s\n    status: 429\n    code: Insufficient Quota\n", 4, "outages[0].code", "want at most 64 lower-case letters"},
		{"recovery below negative", "outages:\n  - duration: 1s\n    recovery:\n      below: -3\n", 4, "outages[0].recovery.below", "negative"},
	}
	for _, tt := range tests {
		_, err := ParseTimeline("t.yaml", []byte(tt.yaml))
		var te *TimelineError
		if !errors.As(err, &te) {
			t.Errorf("%s: error %v, want a *TimelineError", tt.name, err)
			continue
		}
		if te.Line != tt.line || te.Field != tt.field {
			t.Errorf("%s: line %d, field %q; want %d, %q (%v)", tt.name, te.Line, te.Field, tt.line, tt.field, err)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %q does not say %q", tt.name, err, tt.msg)
		}
		if prefix := "t.yaml:"; !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("%s: %q does not start with %q", tt.name, err, prefix)
		}
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: errors.Is(%v, ErrConfig) = false", tt.name, err)
		}
	}
}

func TestParseTimelineSyntaxError(t *testing.T) {
	_, err := ParseTimeline("t.yaml", []byte("window: 200ms\noutages:\n  - start: [0s\n"))
	var te *TimelineError
	if !errors.As(err, &te) || te.Line == 0 || !strings.HasPrefix(err.Error(), "t.yaml:"+strconv.Itoa(te.Line)+": ") || !errors.Is(err, ErrConfig) {
		t.Errorf("error %v, want a *TimelineError naming its line, matching ErrConfig", err)
	}
	// A key given twice is an error too.
	_, err = ParseTimeline("t.yaml", []byte("window: 1s\nseed: 2\nwindow: 2s\n"))
	if want := "t.yaml:3: window: given twice (first on line 1)"; err == nil || err.Error() != want {
		t.Errorf("a duplicate key: %v, want %s", err, want)
	}
}

func TestLoadTimelineMissing(t *testing.T) {
	if _, err := LoadTimeline(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadTimeline(missing) = %v, want os.ErrNotExist", err)
	}
}

func FuzzParseTimeline(f *testing.F) {
	for _, name := range []string{"gateway-outage.yaml", "everything.yaml", "primary-provider.yaml", "slow-tail.yaml", "knee.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("outages:\n  - start: 0s\n    durration: 700ms\n"))
	f.Add([]byte("window: &a 1s\nlatency: {mean: *a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseTimeline("f.yaml", data)
		if err != nil {
			var te *TimelineError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TimelineError", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseTimeline returned a config that does not validate: %v", err)
		}
		New(c) // must not panic
	})
}
