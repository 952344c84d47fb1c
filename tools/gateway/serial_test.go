package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSerial sends attempts one after another, all at the same instant,
// through a gateway with Config.Serial set, on virtual time, with clients
// going away and the gateway closing at chosen instants, and checks when
// each is answered, which are counted, and the peak.
func TestSerial(t *testing.T) {
	const ms = time.Millisecond
	const no = -1 // not answered
	tests := []struct {
		name   string
		serial time.Duration
		n      int
		cancel map[int]time.Duration // attempt → when its client goes away
		close  time.Duration         // when the gateway is closed; 0: never
		want   []time.Duration       // when each attempt is answered
		peak   int64                 // in a 10 ms window
	}{
		{name: "off", n: 4, want: []time.Duration{0, 0, 0, 0}, peak: 4},
		{name: "one at a time, in order", serial: 10 * ms, n: 4, want: []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms}, peak: 1},
		{name: "gone while waiting", serial: 10 * ms, n: 4, cancel: map[int]time.Duration{1: 5 * ms},
			want: []time.Duration{10 * ms, no, 20 * ms, 30 * ms}, peak: 1},
		{name: "two gone while waiting", serial: 10 * ms, n: 4, cancel: map[int]time.Duration{1: 5 * ms, 2: 7 * ms},
			want: []time.Duration{10 * ms, no, no, 20 * ms}, peak: 1},
		{name: "gone holding the lane frees it at once", serial: 10 * ms, n: 4, cancel: map[int]time.Duration{0: 5 * ms},
			want: []time.Duration{no, 15 * ms, 25 * ms, 35 * ms}, peak: 1},
		{name: "gone as the lane is handed to it", serial: 10 * ms, n: 3, cancel: map[int]time.Duration{1: 10 * ms},
			want: []time.Duration{10 * ms, no, 20 * ms}, peak: 1},
		{name: "the last gone holding it", serial: 10 * ms, n: 4, cancel: map[int]time.Duration{3: 35 * ms},
			want: []time.Duration{10 * ms, 20 * ms, 30 * ms, no}, peak: 1},
		{name: "closed: the queue drains at once", serial: 10 * ms, n: 4, close: 15 * ms,
			want: []time.Duration{10 * ms, 15 * ms, 15 * ms, 15 * ms}, peak: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := mustNew(t, Config{Serial: tt.serial, Window: 10 * ms})
				defer g.Close()
				start := time.Now()
				got := make([]time.Duration, tt.n)
				var wg sync.WaitGroup
				for i := range tt.n {
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					if d, ok := tt.cancel[i]; ok {
						time.AfterFunc(d, cancel)
					}
					wg.Go(func() {
						rec := httptest.NewRecorder()
						req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/messages", nil)
						g.ServeHTTP(rec, req)
						got[i] = no
						if rec.Body.Len() > 0 {
							got[i] = time.Since(start)
						}
					})
					synctest.Wait() // in the lane or waiting for it, before the next
				}
				if tt.close > 0 {
					time.AfterFunc(tt.close, g.Close)
				}
				wg.Wait()
				var answered int64
				for i, d := range got {
					if d != tt.want[i] {
						t.Errorf("attempt %d answered at %v, want %v (-1: not answered)", i, d, tt.want[i])
					}
					if d != no {
						answered++
					}
				}
				s := g.Stats()
				if s.Attempts != answered || s.Peak != tt.peak {
					t.Errorf("counted %d attempts, peak %d; want %d (those answered), peak %d", s.Attempts, s.Peak, answered, tt.peak)
				}
				if g.lane != nil && g.lane.queued() != 0 {
					t.Errorf("%d attempts still queued", g.lane.queued())
				}
			})
		})
	}
}

// TestSerialIsCheckedBeforeTheFaults: the lane comes before the timeline,
// so the outage's clock starts when the first attempt leaves the lane,
// and an attempt that waited past the outage's end is accepted.
func TestSerialIsCheckedBeforeTheFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := mustNew(t, Config{Serial: 30 * time.Millisecond, Outages: []Outage{{Duration: 50 * time.Millisecond}}})
		defer g.Close()
		codes := make([]int, 3)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				g.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/messages", nil))
				codes[i] = rec.Code
			})
			synctest.Wait()
		}
		wg.Wait()
		// Counted at 30, 60 and 90 ms: 0, 30 and 60 ms into the timeline.
		if want := []int{503, 503, 200}; !slices.Equal(codes, want) {
			t.Errorf("answered %v, want %v", codes, want)
		}
	})
}

func TestSerialConfig(t *testing.T) {
	tests := []struct {
		name   string
		serial time.Duration
		yaml   string
		err    string // empty: valid
	}{
		{"off", 0, "serial: 0s\n", ""},
		{"12ms", 12 * time.Millisecond, "serial: 12ms\n", ""},
		{"under a millisecond", 500 * time.Microsecond, "serial: 500us\n", ""},
		{"the most", MaxSerial, "serial: 10s\n", ""},
		{"negative", -time.Millisecond, "serial: -1ms\n", "serial: -1ms is not between 0 (off) and 10s"},
		{"absurd", time.Hour, "serial: 1h\n", "serial: 1h0m0s is not between 0 (off) and 10s"},
	}
	for _, tt := range tests {
		err := (&Config{Serial: tt.serial}).Validate()
		c, perr := ParseTimeline("t.yaml", []byte("window: 200ms\n"+tt.yaml))
		if tt.err == "" {
			if err != nil || perr != nil || c.Serial != tt.serial {
				t.Errorf("%s: Validate = %v, ParseTimeline = %v, %v; want valid", tt.name, err, c.Serial, perr)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: Validate = %v, want an ErrConfig saying %q", tt.name, err, tt.err)
		}
		var te *TimelineError
		if !errors.As(perr, &te) || te.Line != 2 || te.Field != "serial" {
			t.Errorf("%s: ParseTimeline = %v, want a *TimelineError on line 2, field serial", tt.name, perr)
		}
	}
}

// TestLaneSchedulesFromThePreviousEnd: a hold begins when its attempt
// arrived or when the previous hold was scheduled to end, whichever is
// later — not when its goroutine was woken — so a busy lane's wake-up
// delays do not add up; a hold cut short frees the lane from then.
func TestLaneSchedulesFromThePreviousEnd(t *testing.T) {
	const ms = time.Millisecond
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		free    time.Duration // the previous hold's end, from t0
		arrived time.Duration
		want    time.Duration // this hold's end
	}{
		{"queued behind a hold", 12 * ms, 3 * ms, 24 * ms},
		{"woken late: still from the previous end", 12 * ms, 5 * ms, 24 * ms},
		{"arrived after the lane fell idle", 12 * ms, 30 * ms, 42 * ms},
		{"arrived as it ended", 12 * ms, 12 * ms, 24 * ms},
	}
	for _, tt := range tests {
		l := newLane(12 * ms)
		l.free = t0.Add(tt.free)
		if got := l.begin(t0.Add(tt.arrived)).Sub(t0); got != tt.want {
			t.Errorf("%s: ends at %v, want %v", tt.name, got, tt.want)
		}
	}
	l := newLane(12 * ms)
	l.begin(t0)
	l.cut(t0.Add(5 * ms))
	if got := l.begin(t0.Add(ms)).Sub(t0); got != 17*ms {
		t.Errorf("after a hold cut at 5ms, the next ends at %v, want 17ms", got)
	}
}
