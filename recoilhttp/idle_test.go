package recoilhttp

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

// write is one write of a scripted stream: data, after a pause.
type write struct {
	after time.Duration
	data  string
}

// feed writes each of ws to pw after its pause, in the bubble's virtual
// time, and then leaves pw open: the stream stalls.
func feed(pw *io.PipeWriter, ws []write) {
	for _, w := range ws {
		time.Sleep(w.after)
		if _, err := io.WriteString(pw, w.data); err != nil {
			return
		}
	}
}

// stopped reports whether a watch has no body left and its timer stopped:
// nothing running, nothing pending.
func stopped(w *idleWatch) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head == nil && !w.armed
}

// atRest reports whether a watch has no body left and, in a synctest
// bubble, its timer stopped (outside one, it is left to fire once more).
func atRest(w *idleWatch) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head == nil && !(w.armed && w.fake)
}

// A watched body is cut exactly one timeout after its last progress, with
// the idle error; reading restarts the time, and on a stream only content
// events do.
func TestWatchedBodyIdle(t *testing.T) {
	const timeout = 10 * time.Second
	tests := []struct {
		name      string
		sse       bool
		writes    []write
		took      time.Duration // when the read fails
		delivered int64         // in the *StreamError; 0: none
	}{
		{"nothing arrives", false, nil, timeout, 0},
		{"a stall after bytes", false, []write{{time.Second, "ab"}, {9 * time.Second, "c"}}, 20 * time.Second, 3},
		{"bytes just in time, many times", false, []write{{9 * time.Second, "a"}, {9 * time.Second, "b"}, {9 * time.Second, "c"}}, 37 * time.Second, 3},
		{"a stream: pings do not count", true, []write{{time.Second, anthropicStart}, {4 * time.Second, anthropicPing}, {4 * time.Second, keepAlive}}, 11 * time.Second, int64(len(anthropicStart + anthropicPing + keepAlive))},
		{"a stream: content events do", true, []write{{5 * time.Second, anthropicDelta}, {5 * time.Second, anthropicDelta}}, 20 * time.Second, int64(2 * len(anthropicDelta))},
		{"a stream of nothing but pings", true, []write{{time.Second, anthropicPing}, {time.Second, anthropicPing}}, timeout, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var w idleWatch
				pr, pw := io.Pipe()
				body := w.open(pr, timeout, tt.sse)
				bubbleGo(t, func() { feed(pw, tt.writes) })
				_, took, err := readFor(body)
				if took != tt.took {
					t.Errorf("read failed after %v, want %v", took, tt.took)
				}
				checkIdle(t, err, timeout, tt.delivered)
				if !stopped(&w) {
					t.Errorf("the watch still has a body or a timer after the cut")
				}
				if err := body.Close(); err != nil {
					t.Errorf("Close after the cut = %v, want nil", err)
				}
				pw.Close()
			})
		})
	}
}

// Many bodies share one watch: each is cut on its own time, a body closed
// or read to its end is not cut, and the timer stops with the last.
func TestWatchManyBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 10 * time.Second
		var w idleWatch
		type result struct {
			took time.Duration
			err  error
		}
		const n = 6
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			// Body i receives a byte every second for i seconds, then stalls:
			// it is cut at i+10 s.
			pr, pw := io.Pipe()
			body := w.open(pr, timeout, false)
			bubbleGo(t, func() { feed(pw, slicesRepeat(write{time.Second, "x"}, i)) })
			wg.Go(func() {
				_, took, err := readFor(body)
				results[i] = result{took, err}
				body.Close()
			})
		}
		// One read to its end at 3 s, one closed by its reader at 5 s: the
		// watch closes neither.
		done := &source{r: iotestDelay(3*time.Second, "done")}
		doneBody := w.open(done, timeout, false)
		wg.Go(func() {
			if b, err := io.ReadAll(doneBody); string(b) != "done" || err != nil {
				t.Errorf("ReadAll = %q, %v, want %q, nil", b, err, "done")
			}
		})
		early := &source{r: iotestDelay(time.Hour, "")}
		earlyBody := w.open(early, timeout, false)
		bubbleGo(t, func() {
			time.Sleep(5 * time.Second)
			earlyBody.Close()
		})
		wg.Wait()
		for i, r := range results {
			if want := time.Duration(i)*time.Second + timeout; r.took != want || !errors.Is(r.err, ErrIdle) {
				t.Errorf("body %d: %v after %v, want the idle error after %v", i, r.err, r.took, want)
			}
		}
		if done.closes.Load() != 0 {
			t.Errorf("a body read to its end was closed %d times before Close, want 0", done.closes.Load())
		}
		doneBody.Close()
		if done.closes.Load() != 1 || early.closes.Load() != 1 {
			t.Errorf("closes = %d, %d, want 1, 1", done.closes.Load(), early.closes.Load())
		}
		if !stopped(&w) {
			t.Errorf("the watch still has a body or a timer with none open")
		}
	})
}

// slicesRepeat is n copies of w.
func slicesRepeat(w write, n int) []write {
	ws := make([]write, n)
	for i := range ws {
		ws[i] = w
	}
	return ws
}

// iotestDelay is a reader that returns s after d, in the bubble's time,
// and then io.EOF.
func iotestDelay(d time.Duration, s string) io.Reader {
	return &delayed{d: d, r: strings.NewReader(s)}
}

type delayed struct {
	d time.Duration
	r io.Reader
}

func (r *delayed) Read(p []byte) (int, error) {
	if r.d > 0 {
		time.Sleep(r.d)
		r.d = 0
	}
	return r.r.Read(p)
}

// Closing: after a cut Close closes nothing again; a read after Close fails
// (it never reaches another body, though bodies come from one batch); a
// closed body lets go of the one beneath, also when a Read was still
// running on it; Close and the cut at once close the body once.
func TestWatchedBodyClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w idleWatch
		src := &source{r: iotestDelay(time.Hour, "")}
		body := w.open(src, time.Second, false)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if src.closes.Load() != 1 {
			t.Fatalf("after the cut, %d closes, want 1", src.closes.Load())
		}
		if err := body.Close(); err != nil || src.closes.Load() != 1 {
			t.Errorf("Close after the cut = %v, %d closes, want nil, 1", err, src.closes.Load())
		}
		if body.rc != nil {
			t.Errorf("a closed body still holds the body beneath")
		}

		// The next body of the batch, with bytes in it: the closed one
		// does not read them.
		next := w.open(io.NopCloser(strings.NewReader("another request's")), time.Second, false)
		if n, err := body.Read(make([]byte, 64)); n != 0 || !errors.Is(err, errReadClosed) {
			t.Errorf("Read after Close = %d, %v, want 0, %v", n, err, errReadClosed)
		}
		if b, err := io.ReadAll(next); string(b) != "another request's" || err != nil {
			t.Errorf("the next body read %q, %v", b, err)
		}
		next.Close()

		// Close while a Read is blocked: the Read returns, and then the
		// body beneath is let go.
		pr, pw := io.Pipe()
		defer pw.Close()
		blocked := w.open(pr, time.Minute, false)
		bubbleGo(t, func() {
			time.Sleep(time.Second)
			blocked.Close()
		})
		if _, took, err := readFor(blocked); err == nil || errors.Is(err, ErrIdle) || took != time.Second {
			t.Errorf("Read during Close = %v after %v, want a non-idle error after 1s", err, took)
		}
		synctest.Wait()
		if blocked.rc != nil {
			t.Errorf("a closed body still holds the body beneath once its Read returned")
		}

		// The caller closes exactly when the limit runs out.
		for range 3 {
			src := &source{r: iotestDelay(time.Hour, "")}
			body := w.open(src, time.Second, false)
			bubbleGo(t, func() {
				time.Sleep(time.Second)
				body.Close()
			})
			time.Sleep(time.Second)
			synctest.Wait()
			if src.closes.Load() != 1 {
				t.Errorf("Close at the cut: %d closes, want 1", src.closes.Load())
			}
		}
		if !stopped(&w) {
			t.Errorf("the watch still has a body or a timer with none open")
		}
	})
}

// Outside a bubble, on the real clock: the cut comes (whenever the busy
// machine runs it); once the bodies are done no goroutine of the watch is
// left, and its timer, left to fire once more, finds none and stops. The
// same watch then works in a bubble, and again outside it: a watch used on
// both clocks gets a timer for each.
func TestWatchLeavesNothing(t *testing.T) {
	ignore := leakcheck.IgnoreCurrent()
	var w idleWatch
	for range 2 {
		pr, pw := io.Pipe()
		body := w.open(pr, time.Millisecond, false)
		if _, err := io.Copy(io.Discard, body); !errors.Is(err, ErrIdle) {
			t.Fatalf("read = %v, want the idle error", err)
		}
		body.Close()
		pw.Close()
		quick := w.open(io.NopCloser(strings.NewReader("x")), time.Millisecond, false)
		io.Copy(io.Discard, quick)
		quick.Close()
		if !atRest(&w) {
			t.Fatalf("the watch still has a body with none open")
		}
		if err := leakcheck.Find(ignore); err != nil {
			t.Fatal(err)
		}
		waitStopped(t, &w)
		synctest.Test(t, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			body := w.open(pr, time.Minute, false)
			defer body.Close()
			_, took, err := readFor(body)
			if took != time.Minute || !errors.Is(err, ErrIdle) {
				t.Errorf("in a bubble: %v after %v, want the idle error after 1m", err, took)
			}
			quick := w.open(io.NopCloser(strings.NewReader("x")), time.Minute, false)
			io.Copy(io.Discard, quick)
			if !stopped(&w) {
				t.Errorf("in a bubble, the watch's timer is still set with no body open")
			}
		})
	}
}

// waitStopped waits, on the real clock, for w's timer to fire and stop,
// and fails t if it has not within 10 s: a watch with no body open must
// not keep its timer set.
func waitStopped(t *testing.T, w *idleWatch) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !stopped(w); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the watch's timer is still set 10 s after its last body")
		}
	}
}

// Through a Transport: its bodies share its watch, each cut on its own
// time; the watch is empty once they are closed.
func TestTransportBodiesShareWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each body receives a byte every 2 s, so many times, and stalls.
		writes := map[string]int{"/a": 0, "/b": 1, "/c": 3}
		base := rtFunc(func(req *http.Request) (*http.Response, error) {
			pr, pw := io.Pipe()
			bubbleGo(t, func() { feed(pw, slicesRepeat(write{2 * time.Second, "x"}, writes[req.URL.Path])) })
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: pr}, nil
		})
		tr := &Transport{Base: base, IdleTimeout: 3 * time.Second}
		var wg sync.WaitGroup
		for path, n := range writes {
			req, _ := http.NewRequest("GET", "http://example.com"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				defer resp.Body.Close()
				_, took, err := readFor(resp.Body)
				if want := time.Duration(2*n)*time.Second + 3*time.Second; took != want || !errors.Is(err, ErrIdle) {
					t.Errorf("%s: %v after %v, want the idle error after %v", path, err, took, want)
				}
			})
		}
		wg.Wait()
		if !stopped(&tr.idle) {
			t.Errorf("the Transport's watch still has a body or a timer with none open")
		}
	})
}

// Many goroutines open, read, close and are cut on one watch at once, on
// the real clock (run with -race): every body beneath is closed exactly
// once, every read ends, and the watch is left empty.
func TestWatchConcurrent(t *testing.T) {
	ignore := leakcheck.IgnoreCurrent()
	var w idleWatch
	var wg sync.WaitGroup
	var srcs [8][40]countingPipe
	for g := range srcs {
		wg.Go(func() {
			for i := range srcs[g] {
				src := &srcs[g][i]
				src.pr, src.pw = io.Pipe()
				body := w.open(src, time.Millisecond, g%2 == 0)
				switch i % 3 {
				case 0: // stalls: cut
				case 1: // ends
					go func() { io.WriteString(src.pw, "data: x\n\n"); src.pw.Close() }()
				case 2: // closed while it is read
					go body.Close()
				}
				io.Copy(io.Discard, body)
				body.Close()
				src.pw.Close()
			}
		})
	}
	wg.Wait()
	// A cut may still be closing a body its reader already closed, on the
	// timer's goroutine: wait for every goroutine to end.
	if err := leakcheck.Find(ignore); err != nil {
		t.Fatal(err)
	}
	for g := range srcs {
		for i := range srcs[g] {
			if n := srcs[g][i].closes.Load(); n != 1 {
				t.Errorf("body %d of goroutine %d: closed %d times beneath, want 1", i, g, n)
			}
		}
	}
	waitStopped(t, &w)
}

// countingPipe is a pipe's reading end that counts its closes.
type countingPipe struct {
	pr     *io.PipeReader
	pw     *io.PipeWriter
	closes atomic.Int32
}

func (p *countingPipe) Read(b []byte) (int, error) { return p.pr.Read(b) }

func (p *countingPipe) Close() error {
	p.closes.Add(1)
	return p.pr.Close()
}

// TestWatchAllocs counts exactly what the idle limit of a Transport's
// bodies allocates: the bodies come sixteen to an allocation, and nothing
// else is allocated for them (no timer, no function, no goroutine), so
// sixteen bodies opened, read and closed cost one allocation.
func TestWatchAllocs(t *testing.T) {
	var w idleWatch
	src := &rewound{}
	buf := make([]byte, 64)
	got := testing.AllocsPerRun(100, func() {
		for range 16 {
			src.left = 2
			body := w.open(src, time.Hour, false)
			for {
				if _, err := body.Read(buf); err != nil {
					break
				}
			}
			body.Close()
		}
	})
	if got != 1 {
		t.Errorf("16 bodies: %.0f allocations, want 1", got)
	}
}

// rewound is a body of left bytes, read again from the start each time
// left is set.
type rewound struct{ left int }

func (r *rewound) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	r.left--
	p[0] = 'x'
	return 1, nil
}

func (r *rewound) Close() error { return nil }
