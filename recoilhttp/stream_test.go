package recoilhttp

import (
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Stream fixtures, as the providers send them.
const (
	anthropicPing  = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	anthropicStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[]}}\n\n"
	anthropicDelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n"
	anthropicError = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	openAIChunk    = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"
	keepAlive      = ": keep-alive\n\n"
)

// bubbleGo runs f in a new goroutine of the test's synctest bubble. The test
// waits for it before the bubble ends (after the test function's deferred
// calls), while virtual time can still advance.
func bubbleGo(t *testing.T, f func()) {
	var wg sync.WaitGroup
	wg.Go(f)
	t.Cleanup(wg.Wait)
}

// writeEvery writes msg to w every interval, n times (forever if n < 0),
// and stops when a write fails. It returns the bytes written.
func writeEvery(w io.Writer, msg string, interval time.Duration, n int) int {
	total := 0
	for i := 0; n < 0 || i < n; i++ {
		k, err := io.WriteString(w, msg)
		total += k
		if err != nil {
			return total
		}
		time.Sleep(interval) // virtual time: the tests run in a synctest bubble
	}
	return total
}

// readFor reads body to its end, reporting the bytes, how long (in the
// bubble's virtual time) it took and the error.
func readFor(body io.Reader) (int64, time.Duration, error) {
	start := time.Now()
	n, err := io.Copy(io.Discard, body)
	return n, time.Since(start), err
}

// checkIdle checks that err is the idle error for timeout, wrapped in a
// *StreamError with delivered bytes if delivered > 0 and unwrapped if not.
func checkIdle(t *testing.T, err error, timeout time.Duration, delivered int64) {
	t.Helper()
	if !errors.Is(err, ErrIdle) {
		t.Fatalf("read error = %v, want ErrIdle", err)
	}
	var ie *IdleError
	if !errors.As(err, &ie) || ie.After != timeout {
		t.Errorf("read error = %v, want an *IdleError after %v", err, timeout)
	}
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("read error = %v, want Timeout() true", err)
	}
	var se *StreamError
	switch {
	case delivered == 0 && errors.As(err, &se):
		t.Errorf("read error = %v, want no *StreamError before any content", err)
	case delivered > 0 && !errors.As(err, &se):
		t.Errorf("read error = %v, want a *StreamError after content", err)
	case delivered > 0 && se.Delivered != delivered:
		t.Errorf("StreamError.Delivered = %d, want %d", se.Delivered, delivered)
	}
}

// A stream that stalls mid-way fails with the idle error exactly one timeout
// after its last byte.
func TestIdleBodyStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 10 * time.Second
		pr, pw := io.Pipe()
		body := IdleBody(pr, timeout)
		defer body.Close()
		bubbleGo(t, func() { writeEvery(pw, "chunk", time.Second, 3) }) // bytes at 0, 1 and 2 s, then nothing
		n, took, err := readFor(body)
		if want := 2*time.Second + timeout; took != want {
			t.Errorf("idle error after %v, want %v", took, want)
		}
		if n != 15 {
			t.Errorf("read %d bytes, want 15", n)
		}
		checkIdle(t, err, timeout, 15)
	})
}

// The timeout counts from the wrap, not from the first Read.
func TestIdleBodyCountsFromWrap(t *testing.T) {
	tests := []struct {
		name   string
		wrap   func(io.ReadCloser, time.Duration) io.ReadCloser
		before string // written before the stall
	}{
		{"IdleBody", IdleBody, ""},
		{"SSEIdleBody", SSEIdleBody, ""},
		{"SSEIdleBody after pings", SSEIdleBody, anthropicPing + keepAlive},
		{"SSEIdleBody mid-event", SSEIdleBody, "event: content_block_delta\ndata: {\"type\":"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const timeout = 4 * time.Second
				pr, pw := io.Pipe()
				body := tt.wrap(pr, timeout)
				defer body.Close()
				bubbleGo(t, func() { writeEvery(pw, tt.before, 0, 1) })
				n, took, err := readFor(body)
				if took != timeout {
					t.Errorf("idle error after %v, want %v", took, timeout)
				}
				if n != int64(len(tt.before)) {
					t.Errorf("read %d bytes, want %d", n, len(tt.before))
				}
				checkIdle(t, err, timeout, 0) // pings and half an event are no content
			})
		})
	}
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		body := IdleBody(pr, 4*time.Second)
		defer body.Close()
		time.Sleep(5 * time.Second) // the caller is slow to start reading
		_, err := body.Read(make([]byte, 1))
		checkIdle(t, err, 4*time.Second, 0)
	})
}

// Steady bytes never trip the timeout, however long the stream.
func TestIdleBodySteady(t *testing.T) {
	tests := []struct {
		name string
		wrap func(io.ReadCloser, time.Duration) io.ReadCloser
		msg  string
	}{
		{"IdleBody one byte", IdleBody, "x"},
		{"SSEIdleBody anthropic", SSEIdleBody, anthropicDelta},
		{"SSEIdleBody openai", SSEIdleBody, openAIChunk},
		{"SSEIdleBody CRLF", SSEIdleBody, "data: x\r\n\r\n"},
		{"SSEIdleBody CR", SSEIdleBody, "data: x\r\r"},
		{"SSEIdleBody empty data", SSEIdleBody, "data\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				body := tt.wrap(pr, 2*time.Second)
				defer body.Close()
				bubbleGo(t, func() {
					writeEvery(pw, tt.msg, time.Second, 100)
					pw.Close()
				})
				n, took, err := readFor(body)
				if err != nil || n != int64(100*len(tt.msg)) || took != 100*time.Second {
					t.Errorf("read %d bytes in %v, error %v, want %d in 100s, nil", n, took, err, 100*len(tt.msg))
				}
			})
		})
	}
}

// Pings and comments every second do not keep a stalled SSE stream alive,
// but content events do.
func TestSSEIdleBodyKeepAlives(t *testing.T) {
	tests := []struct {
		name string
		msg  string
	}{
		{"anthropic ping", anthropicPing},
		{"comment", keepAlive},
		{"bare colon", ":\n\n"},
		{"ping without space, CRLF", "event:ping\r\ndata: {}\r\n\r\n"},
		{"ping with id", "id: 7\nevent: ping\ndata: {}\n\n"},
		{"event without data", "event: content_block_delta\n\n"},
		{"id only", "id: 8\n\n"},
		{"retry only", "retry: 3000\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const timeout = 5 * time.Second
				pr, pw := io.Pipe()
				body := SSEIdleBody(pr, timeout)
				defer body.Close()
				bubbleGo(t, func() {
					io.WriteString(pw, anthropicStart)
					time.Sleep(500 * time.Millisecond)
					writeEvery(pw, tt.msg, time.Second, -1) // until the body is closed
				})
				n, took, err := readFor(body)
				if took != timeout {
					t.Errorf("idle error after %v, want %v", took, timeout)
				}
				want := int64(len(anthropicStart) + 5*len(tt.msg)) // keep-alives at 0.5 … 4.5 s
				if n != want {
					t.Errorf("read %d bytes, want %d", n, want)
				}
				checkIdle(t, err, timeout, want)
			})
		})
	}
	// Content events interleaved with pings keep it alive.
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		body := SSEIdleBody(pr, 3*time.Second)
		defer body.Close()
		bubbleGo(t, func() {
			for range 20 {
				writeEvery(pw, anthropicPing, time.Second, 2)
				io.WriteString(pw, anthropicDelta) // every 2 s
			}
			pw.Close()
		})
		if n, took, err := readFor(body); err != nil || took != 40*time.Second {
			t.Errorf("read %d bytes in %v, error %v, want all in 40s, nil", n, took, err)
		}
	})
}

// An event counts when it is complete, however it is split across reads.
func TestSSEIdleBodySplitEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 2 * time.Second
		pr, pw := io.Pipe()
		body := SSEIdleBody(pr, timeout)
		defer body.Close()
		stream := strings.Repeat(anthropicDelta+"data: a\r\ndata: b\r\n\r\n", 5)
		bubbleGo(t, func() {
			for i := range len(stream) { // one byte every 10 ms
				pw.Write([]byte{stream[i]})
				time.Sleep(10 * time.Millisecond)
			}
			// Then half an event, and a stall.
			io.WriteString(pw, "data: half")
		})
		n, took, err := readFor(body)
		// The last full event ends at its blank line's CR, the last byte but one.
		last := time.Duration(len(stream)-2) * 10 * time.Millisecond
		if took != last+timeout {
			t.Errorf("idle error after %v, want %v", took, last+timeout)
		}
		checkIdle(t, err, timeout, n)
	})
}

func TestIdleBodyErrors(t *testing.T) {
	tests := []struct {
		name      string
		wrap      func(io.ReadCloser, time.Duration) io.ReadCloser
		before    string
		delivered int64 // 0: the error is returned unwrapped
	}{
		{"IdleBody before any byte", IdleBody, "", 0},
		{"IdleBody after bytes", IdleBody, "abc", 3},
		{"SSEIdleBody before any byte", SSEIdleBody, "", 0},
		{"SSEIdleBody after pings", SSEIdleBody, anthropicPing + keepAlive, 0},
		{"SSEIdleBody after content", SSEIdleBody, anthropicPing + anthropicStart + "data: par", int64(len(anthropicPing + anthropicStart + "data: par"))},
		{"no timeout, after bytes", func(rc io.ReadCloser, _ time.Duration) io.ReadCloser { return IdleBody(rc, 0) }, "abc", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				body := tt.wrap(pr, time.Minute)
				defer body.Close()
				bubbleGo(t, func() {
					io.WriteString(pw, tt.before)
					time.Sleep(time.Second)
					pw.CloseWithError(errBoom)
				})
				n, took, err := readFor(body)
				if n != int64(len(tt.before)) || !errors.Is(err, errBoom) || took != time.Second {
					t.Fatalf("read %d bytes in %v, error %v, want %d in 1s, %v", n, took, err, len(tt.before), errBoom)
				}
				if errors.Is(err, ErrIdle) {
					t.Errorf("read error %v is ErrIdle, want not", err)
				}
				var se *StreamError
				switch {
				case tt.delivered == 0 && errors.As(err, &se):
					t.Errorf("read error = %v, want no *StreamError", err)
				case tt.delivered > 0 && (!errors.As(err, &se) || se.Delivered != tt.delivered):
					t.Errorf("read error = %v, want a *StreamError with Delivered %d", err, tt.delivered)
				}
			})
		})
	}
}

func TestIdleBodyEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &source{r: strings.NewReader("hello")}
		body := IdleBody(src, time.Second)
		got, err := io.ReadAll(body)
		if string(got) != "hello" || err != nil {
			t.Fatalf("ReadAll = %q, %v, want %q, nil", got, err, "hello")
		}
		time.Sleep(time.Minute) // the timer stopped at the end: it closes nothing
		if src.closes.Load() != 0 {
			t.Errorf("body closed %d times before Close, want 0", src.closes.Load())
		}
		if err := body.Close(); err != nil || src.closes.Load() != 1 {
			t.Errorf("Close() = %v, %d closes, want nil, 1", err, src.closes.Load())
		}
	})
}

func TestIdleBodyClose(t *testing.T) {
	for _, wrap := range []func(io.ReadCloser, time.Duration) io.ReadCloser{IdleBody, SSEIdleBody} {
		synctest.Test(t, func(t *testing.T) {
			// Close propagates, returns the body's error, and stops the timer.
			src := &source{r: strings.NewReader(""), closeErr: errBoom}
			body := wrap(src, time.Second)
			if err := body.Close(); !errors.Is(err, errBoom) {
				t.Errorf("Close() = %v, want %v", err, errBoom)
			}
			time.Sleep(time.Minute)
			if err := body.Close(); err != nil || src.closes.Load() != 1 {
				t.Errorf("second Close() = %v, %d closes, want nil, 1", err, src.closes.Load())
			}

			// After the timer closed the body, Close does not close it again.
			src = &source{r: strings.NewReader("")}
			body = wrap(src, time.Second)
			time.Sleep(2 * time.Second)
			if err := body.Close(); err != nil || src.closes.Load() != 1 {
				t.Errorf("Close() after idle = %v, %d closes, want nil, 1", err, src.closes.Load())
			}

			// Close unblocks a Read, which does not report idleness.
			pr, pw := io.Pipe()
			defer pw.Close()
			body = wrap(pr, time.Minute)
			bubbleGo(t, func() {
				time.Sleep(time.Second)
				body.Close()
			})
			_, took, err := readFor(body)
			if err == nil || errors.Is(err, ErrIdle) || took != time.Second {
				t.Errorf("Read during Close = %v after %v, want a non-idle error after 1s", err, took)
			}
		})
	}
	if IdleBody(nil, time.Second) != nil || SSEIdleBody(nil, time.Second) != nil {
		t.Errorf("wrapping a nil body is not nil")
	}
}

// No idle limit: a long stall is no error.
func TestIdleBodyNoTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		body := IdleBody(pr, 0)
		defer body.Close()
		bubbleGo(t, func() {
			io.WriteString(pw, "a")
			time.Sleep(time.Hour)
			io.WriteString(pw, "b")
			pw.Close()
		})
		if n, took, err := readFor(body); n != 2 || err != nil || took != time.Hour {
			t.Errorf("read %d bytes in %v, error %v, want 2 in 1h, nil", n, took, err)
		}
	})
}

// Reads, the timer and Close race without data races or double closes.
func TestIdleBodyRace(t *testing.T) {
	for i := range 50 {
		synctest.Test(t, func(t *testing.T) {
			const tick = time.Millisecond
			pr, pw := io.Pipe()
			src := &countingCloser{ReadCloser: pr}
			wrap := SSEIdleBody
			if i%2 == 0 {
				wrap = IdleBody
			}
			body := wrap(src, tick)
			var wg sync.WaitGroup
			wg.Go(func() { writeEvery(pw, anthropicDelta, tick, -1) })
			wg.Go(func() {
				time.Sleep(time.Duration(i) * tick)
				body.Close()
			})
			_, err := io.Copy(io.Discard, body)
			if err == nil {
				t.Errorf("read error = nil, want one")
			}
			body.Close()
			wg.Wait()
			if c := src.closes.Load(); c != 1 {
				t.Errorf("body closed %d times, want 1", c)
			}
		})
	}
}

type countingCloser struct {
	io.ReadCloser
	closes atomic.Int32
}

func (c *countingCloser) Close() error {
	c.closes.Add(1)
	return c.ReadCloser.Close()
}
