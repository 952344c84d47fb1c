package recoilhttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/breaker"
)

// package breaker's Breaker takes slow reports.
var _ slowRecorder = (*breaker.Breaker)(nil)

// slowLog is a breaker's RecordSlowAt, recording when it was called.
type slowLog struct {
	mu sync.Mutex
	at []time.Time
}

func (l *slowLog) RecordSlowAt(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, now)
}

func (l *slowLog) get() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.at...)
}

// chunk is one write of a scripted body: after a pause, some bytes.
type chunk struct {
	after time.Duration
	data  string
}

func every(after time.Duration, data string, n int) []chunk {
	s := make([]chunk, n)
	for i := range s {
		s[i] = chunk{after, data}
	}
	return s
}

func chunks(parts ...[]chunk) []chunk {
	var s []chunk
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

func TestSlowMeter(t *testing.T) {
	ttfb := SlowStream{FirstByte: 2 * time.Second}
	bytesFloor := SlowStream{MinBytesPerSecond: 100, Window: 5 * time.Second}
	eventsFloor := SlowStream{MinEventsPerSecond: 2, Window: 5 * time.Second}
	const delta = "event: content_block_delta\ndata: {\"text\":\"Hi\"}\n\n" // 48 bytes
	tests := []struct {
		name    string
		cfg     SlowStream
		sse     bool
		headers time.Duration // the wait for the headers, before the body
		script  []chunk
		end     error         // how the body ends after the script; nil: EOF
		gap     time.Duration // the reader's own pause between reads
		idle    time.Duration // an idle timeout above the meter; 0: none
		slowAt  time.Duration // when the one report comes; -1: none
	}{
		{"first byte in time", ttfb, false, 0, []chunk{{time.Second, "x"}}, nil, 0, 0, -1},
		{"first byte exactly at the limit", ttfb, false, 0, []chunk{{2 * time.Second, "x"}}, nil, 0, 0, -1},
		{"first byte late", ttfb, false, 0, []chunk{{3 * time.Second, "x"}, {time.Second, "y"}}, nil, 0, 0, 3 * time.Second},
		{"headers count toward the first byte", ttfb, false, 1500 * time.Millisecond, []chunk{{time.Second, "x"}}, nil, 0, 0, time.Second},
		{"pings are not the first content", ttfb, true, 0, chunks(every(time.Second, anthropicPing, 3), []chunk{{0, delta}}), nil, 0, 0, 3 * time.Second},
		{"comments are not the first content", ttfb, true, 0, []chunk{{time.Second, keepAlive}, {2 * time.Second, delta}}, nil, 0, 0, 3 * time.Second},
		{"an SSE stream in time", ttfb, true, 0, []chunk{{time.Second, anthropicPing}, {500 * time.Millisecond, delta}}, nil, 0, 0, -1},
		{"failing late with nothing delivered", ttfb, false, 0, []chunk{{3 * time.Second, ""}}, errors.New("reset"), 0, 0, 3 * time.Second},
		{"failing early with nothing delivered", ttfb, false, 0, []chunk{{time.Second, ""}}, errors.New("reset"), 0, 0, -1},
		{"ending late with nothing delivered", ttfb, false, 0, []chunk{{3 * time.Second, ""}}, nil, 0, 0, -1},
		{"cancelled late with nothing delivered", ttfb, false, 0, []chunk{{3 * time.Second, ""}}, context.Canceled, 0, 0, -1},
		{"a reader's own pauses do not count", ttfb, false, 0, []chunk{{0, "x"}}, nil, 5 * time.Second, 0, -1},

		{"bytes: fast", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, strings.Repeat("x", 200), 12)), nil, 0, 0, -1},
		{"bytes: below the floor", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, strings.Repeat("x", 50), 12)), nil, 0, 0, 5 * time.Second},
		{"bytes: exactly the floor", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, strings.Repeat("x", 100), 12)), nil, 0, 0, -1},
		{"bytes: slow only later", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, strings.Repeat("x", 200), 5), every(time.Second, "x", 5)), nil, 0, 0, 10 * time.Second},
		{"bytes: the wait for the first byte is not throughput", bytesFloor, false, 0, chunks([]chunk{{10 * time.Second, "go"}}, every(time.Second, strings.Repeat("x", 200), 6)), nil, 0, 0, -1},
		{"bytes: shorter than a window is not judged", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, "x", 4)), nil, 0, 0, -1},
		{"bytes: a slow reader is not a slow stream", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(100*time.Millisecond, strings.Repeat("x", 50), 20)), nil, 2 * time.Second, 0, -1},
		{"bytes: a stall cut off by the idle timeout", SlowStream{MinBytesPerSecond: 100, Window: 2 * time.Second}, false, 0, []chunk{{0, "go"}, {time.Hour, ""}}, nil, 0, 3 * time.Second, 3 * time.Second},
		{"bytes: one report for many slow windows", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, "x", 30)), nil, 0, 0, 5 * time.Second},
		{"bytes: a failure mid-window is not judged", bytesFloor, false, 0, chunks([]chunk{{0, "go"}}, every(time.Second, "x", 3)), errors.New("reset"), 0, 0, -1},

		{"events: fast", eventsFloor, true, 0, every(200*time.Millisecond, delta, 40), nil, 0, 0, -1},
		{"events: below the floor", eventsFloor, true, 0, chunks([]chunk{{0, delta}}, every(time.Second, delta, 12)), nil, 0, 0, 5 * time.Second},
		{"events: pings are not content", eventsFloor, true, 0, chunks([]chunk{{0, delta}}, every(100*time.Millisecond, anthropicPing, 100)), nil, 0, 0, 5 * time.Second},
		{"events: a plain body is not judged by events", eventsFloor, false, 0, every(time.Second, "x", 12), nil, 0, 0, -1},
		{"events and bytes: either floor", SlowStream{MinBytesPerSecond: 1, MinEventsPerSecond: 2, Window: 5 * time.Second}, true, 0, chunks([]chunk{{0, delta}}, every(time.Second, delta, 12)), nil, 0, 0, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				var log slowLog
				bubbleGo(t, func() {
					for _, c := range tt.script {
						time.Sleep(c.after)
						if c.data == "" {
							continue
						}
						if _, err := io.WriteString(pw, c.data); err != nil {
							return
						}
					}
					pw.CloseWithError(tt.end)
				})
				start := time.Now()
				var body io.ReadCloser = newSlowMeter(pr, tt.cfg, tt.headers, tt.sse, [2]slowRecorder{&log, nil})
				if tt.idle > 0 {
					body = IdleBody(body, tt.idle)
				}
				defer body.Close()
				buf := make([]byte, 64<<10)
				for {
					_, err := body.Read(buf)
					if err != nil {
						break
					}
					time.Sleep(tt.gap)
				}
				got := log.get()
				switch {
				case tt.slowAt < 0 && len(got) != 0:
					t.Errorf("reported slow at +%v, want no report", got[0].Sub(start))
				case tt.slowAt >= 0 && len(got) != 1:
					t.Errorf("reports = %d, want 1 at +%v", len(got), tt.slowAt)
				case tt.slowAt >= 0 && !got[0].Equal(start.Add(tt.slowAt)):
					t.Errorf("reported slow at +%v, want +%v", got[0].Sub(start), tt.slowAt)
				}
			})
		})
	}
}

// TestSlowMeterBothBreakers: a report reaches both breakers of the attempt,
// and a missing one is skipped.
func TestSlowMeterBothBreakers(t *testing.T) {
	var a, b slowLog
	for _, to := range [][2]slowRecorder{{&a, &b}, {nil, &b}, {&a, nil}} {
		m := newSlowMeter(io.NopCloser(strings.NewReader("x")), SlowStream{FirstByte: time.Second}, 2*time.Second, false, to)
		io.Copy(io.Discard, m)
	}
	if len(a.get()) != 2 || len(b.get()) != 2 {
		t.Errorf("reports = %d, %d, want 2, 2", len(a.get()), len(b.get()))
	}
}

func TestSlowStreamOn(t *testing.T) {
	tests := []struct {
		s    SlowStream
		want bool
	}{
		{SlowStream{}, false},
		{SlowStream{Window: time.Second}, false},
		{SlowStream{FirstByte: time.Second}, true},
		{SlowStream{MinBytesPerSecond: 1}, true},
		{SlowStream{MinEventsPerSecond: 1}, true},
	}
	for _, tt := range tests {
		if got := tt.s.on(); got != tt.want {
			t.Errorf("%+v.on() = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// BenchmarkSlowMeter reads a model stream through the slow meter, in
// 512-byte reads, as BenchmarkIdleBody does: the meter's cost is two clock
// reads per Read and, on an event stream, a second pass of the SSE scanner.
func BenchmarkSlowMeter(b *testing.B) {
	stream := []byte(strings.Repeat(anthropicPing+anthropicDelta+anthropicDelta, 200))
	floors := SlowStream{FirstByte: time.Minute, MinBytesPerSecond: 1, MinEventsPerSecond: 1}
	var log slowLog
	for _, bm := range []struct {
		name string
		wrap func(io.ReadCloser) io.ReadCloser
	}{
		{"Bare", func(rc io.ReadCloser) io.ReadCloser { return rc }},
		{"Bytes", func(rc io.ReadCloser) io.ReadCloser {
			return newSlowMeter(rc, floors, 0, false, [2]slowRecorder{&log, nil})
		}},
		{"SSE", func(rc io.ReadCloser) io.ReadCloser {
			return newSlowMeter(rc, floors, 0, true, [2]slowRecorder{&log, nil})
		}},
		{"SSEIdleBody+SSE", func(rc io.ReadCloser) io.ReadCloser {
			return SSEIdleBody(newSlowMeter(rc, floors, 0, true, [2]slowRecorder{&log, nil}), time.Minute)
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(stream)))
			buf := make([]byte, 512)
			r := bytes.NewReader(stream)
			for b.Loop() {
				r.Reset(stream)
				body := bm.wrap(io.NopCloser(r))
				for {
					if _, err := body.Read(buf); err != nil {
						break
					}
				}
				body.Close()
			}
		})
	}
	if len(log.get()) != 0 {
		b.Fatal("a fast stream was reported slow")
	}
}
