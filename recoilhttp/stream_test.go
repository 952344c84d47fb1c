package recoilhttp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
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

func TestStreamError(t *testing.T) {
	se := &StreamError{Delivered: 42, Err: &IdleError{After: 15 * time.Second}}
	if got, want := se.Error(), "recoilhttp: stream failed after 42 bytes: recoilhttp: stream idle for 15s"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&StreamError{Delivered: 1}).Error(), "recoilhttp: stream failed after 1 bytes"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(se, ErrIdle) {
		t.Errorf("errors.Is(%v, ErrIdle) = false, want true", se)
	}
	if errors.Is(&IdleError{}, ErrNoEvent) {
		t.Errorf("errors.Is(IdleError, ErrNoEvent) = true, want false")
	}
}

func TestFirstEvent(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		limit   int
		want    Event
		wantErr error
	}{
		{"anthropic after pings", keepAlive + anthropicPing + anthropicStart + anthropicDelta, 4096,
			Event{Name: "message_start", Data: `{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}`}, nil},
		{"anthropic error first", anthropicPing + anthropicError, 4096,
			Event{Name: "error", Data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, nil},
		{"openai chunk", openAIChunk + "data: [DONE]\n\n", 4096,
			Event{Data: `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}`}, nil},
		{"openai done", "data: [DONE]\n\n", 4096, Event{Data: "[DONE]"}, nil},
		{"CRLF and multi-line data", "event: x\r\ndata: a\r\ndata: b\r\n\r\n", 4096, Event{Name: "x", Data: "a\nb"}, nil},
		{"CR line ends", ": c\revent: x\rdata: a\rdata:b\r\r", 4096, Event{Name: "x", Data: "a\nb"}, nil},
		{"mixed line ends", "event: x\r\n\rdata: 1\n\r\n", 4096, Event{Data: "1"}, nil},
		{"no space after colon", "event:x\ndata:y\n\n", 4096, Event{Name: "x", Data: "y"}, nil},
		{"only the first space is dropped", "data:  two\n\n", 4096, Event{Data: " two"}, nil},
		{"data without colon", "data\n\n", 4096, Event{}, nil},
		{"data with colons", "data: a: b\n\n", 4096, Event{Data: "a: b"}, nil},
		{"empty data lines", "data\ndata\n\n", 4096, Event{Data: "\n"}, nil},
		{"event without data skipped", "event: foo\n\nevent: bar\ndata: x\n\n", 4096, Event{Name: "bar", Data: "x"}, nil},
		{"name reset after dispatch", "event: ping\ndata: p\n\ndata: x\n\n", 4096, Event{Data: "x"}, nil},
		{"last event field wins", "event: ping\nevent: b\ndata: x\n\n", 4096, Event{Name: "b", Data: "x"}, nil},
		{"ping named last", "event: b\nevent: ping\ndata: x\n\ndata: y\n\n", 4096, Event{Data: "y"}, nil},
		{"near-ping names", "event: pingx\ndata: x\n\n", 4096, Event{Name: "pingx", Data: "x"}, nil},
		{"short name", "event: pin\ndata: x\n\n", 4096, Event{Name: "pin", Data: "x"}, nil},
		{"empty name", "event\ndata: x\n\n", 4096, Event{Data: "x"}, nil},
		{"other fields ignored", "id: 1\nretry: 100\nfoo: bar\ndataa: no\neventt: no\ndat: no\nevent: x\ndata: y\n\n", 4096, Event{Name: "x", Data: "y"}, nil},
		{"comment with field-like text", ":data: no\n\ndata: y\n\n", 4096, Event{Data: "y"}, nil},
		{"byte order mark", "\ufeffdata: x\n\n", 4096, Event{Data: "x"}, nil},
		{"event fits the limit exactly", "data: x\n\n", 9, Event{Data: "x"}, nil},
		{"long data", "data: " + strings.Repeat("z", 10000) + "\n\n", 1 << 20, Event{Data: strings.Repeat("z", 10000)}, nil},

		{"limit before the event ends", "data: x\n\n", 8, Event{}, ErrNoEvent},
		{"pings beyond the limit", strings.Repeat(anthropicPing, 100), 1000, Event{}, ErrNoEvent},
		{"end before any event", anthropicPing + keepAlive, 4096, Event{}, io.ErrUnexpectedEOF},
		{"end mid-event", "data: x\n", 4096, Event{}, io.ErrUnexpectedEOF},
		{"empty stream", "", 4096, Event{}, io.ErrUnexpectedEOF},
		{"zero limit", "data: x\n\n", 0, Event{}, ErrNoEvent},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				src := &source{r: rd.wrap(strings.NewReader(tt.stream))}
				got, body, err := FirstEvent(src, tt.limit)
				if got != tt.want || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Errorf("FirstEvent(%.50q, %d) = %+v, %v, want %+v, %v", tt.stream, tt.limit, got, err, tt.want, tt.wantErr)
				}
				if src.read > max(tt.limit, 0) {
					t.Errorf("FirstEvent read %d bytes, want at most %d", src.read, tt.limit)
				}
				all, rerr := io.ReadAll(body)
				if string(all) != tt.stream || rerr != nil {
					t.Errorf("replayed body = %.50q, %v, want %.50q, nil", all, rerr, tt.stream)
				}
				if err := body.Close(); err != nil || src.closes.Load() != 1 {
					t.Errorf("Close() = %v, %d closes, want nil, 1", err, src.closes.Load())
				}
			})
		}
	}
}

func TestFirstEventReadError(t *testing.T) {
	for _, tt := range []struct {
		name    string
		r       io.Reader
		want    Event
		wantErr error
		replay  string
	}{
		{"error before an event", io.MultiReader(strings.NewReader(anthropicPing+"data: x"), iotest.ErrReader(errBoom)), Event{}, errBoom, anthropicPing + "data: x"},
		{"error after the event", io.MultiReader(strings.NewReader("data: x\n\n"), iotest.ErrReader(errBoom)), Event{Data: "x"}, nil, "data: x\n\n"},
		{"no progress", &stallReader{empty: 1000, r: strings.NewReader("data: x\n\n")}, Event{}, io.ErrNoProgress, "data: x\n\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, body, err := FirstEvent(io.NopCloser(tt.r), 4096)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("FirstEvent = %+v, %v, want %+v, %v", got, err, tt.want, tt.wantErr)
			}
			var all []byte
			buf := make([]byte, 3)
			var rerr error
			for range 2000 { // past the stall, if any
				var n int
				n, rerr = body.Read(buf)
				all = append(all, buf[:n]...)
				if rerr != nil {
					break
				}
			}
			if string(all) != tt.replay {
				t.Errorf("replayed body = %q, want %q", all, tt.replay)
			}
			if tt.wantErr != io.ErrNoProgress && !errors.Is(rerr, errBoom) {
				t.Errorf("replayed body ends in %v, want %v", rerr, errBoom)
			}
		})
	}
}

// FirstEvent through SSEIdleBody: the idle timer bounds the wait for the
// first event, and the bytes FirstEvent reads count for the stream.
func TestFirstEventThroughSSEIdleBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 5 * time.Second
		pr, pw := io.Pipe()
		bubbleGo(t, func() { writeEvery(pw, anthropicPing, time.Second, -1) })
		start := time.Now()
		_, body, err := FirstEvent(SSEIdleBody(pr, timeout), 1<<20)
		if took := time.Since(start); took != timeout {
			t.Errorf("FirstEvent failed after %v, want %v", took, timeout)
		}
		checkIdle(t, err, timeout, 0)
		body.Close()
	})
}

// referenceEvents interprets a whole event stream the slow, obvious way.
func referenceEvents(stream []byte) []Event {
	s := strings.TrimPrefix(string(stream), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	lines = lines[:len(lines)-1] // the last line is unterminated
	var events []Event
	var name, data string
	hasData := false
	for _, line := range lines {
		if line == "" {
			if hasData && name != "ping" {
				events = append(events, Event{Name: name, Data: strings.TrimSuffix(data, "\n")})
			}
			name, data, hasData = "", "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			data += value + "\n"
			hasData = true
		}
	}
	return events
}

func FuzzSSEScanner(f *testing.F) {
	for _, s := range []string{
		anthropicPing + anthropicStart + anthropicError, openAIChunk + "data: [DONE]\n\n",
		"event: x\r\ndata: a\r\ndata: b\r\n\r\n", ": c\revent: x\rdata: a\r\r", "\ufeffdata\n\n", "event:ping\ndata\n\n",
	} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		want := referenceEvents(stream)
		chunk = max(chunk, 1)
		// The content events counted (as a Transport's slow meter counts
		// them), whole and in chunks.
		for _, size := range []int{len(stream) + 1, int(chunk), 1} {
			var s sseScanner
			count := 0
			for p := stream; len(p) > 0; p = p[min(size, len(p)):] {
				count += s.feed(p[:min(size, len(p))])
			}
			if count != len(want) {
				t.Fatalf("%q: content events fed %d at a time: %d, want %d", stream, size, count, len(want))
			}
		}
		// The first event, whole and in chunks.
		for _, r := range []io.Reader{bytes.NewReader(stream), iotest.OneByteReader(bytes.NewReader(stream)), &chunkReader{stream, int(chunk)}} {
			got, body, err := FirstEvent(io.NopCloser(r), len(stream)+1)
			switch {
			case len(want) == 0 && err == nil:
				t.Fatalf("FirstEvent(%q) = %+v, nil, want an error", stream, got)
			case len(want) > 0 && (err != nil || got != want[0]):
				t.Fatalf("FirstEvent(%q) = %+v, %v, want %+v", stream, got, err, want[0])
			}
			if all, _ := io.ReadAll(body); !bytes.Equal(all, stream) {
				t.Fatalf("FirstEvent(%q) replayed %q", stream, all)
			}
		}
	})
}

// chunkReader returns its bytes n at a time.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

func BenchmarkIdleBody(b *testing.B) {
	stream := []byte(strings.Repeat(anthropicPing+anthropicDelta+anthropicDelta, 200))
	for _, bm := range []struct {
		name string
		wrap func(io.ReadCloser, time.Duration) io.ReadCloser
	}{
		{"Bare", func(rc io.ReadCloser, _ time.Duration) io.ReadCloser { return rc }},
		{"IdleBody", IdleBody},
		{"SSEIdleBody", SSEIdleBody},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(stream)))
			buf := make([]byte, 512)
			r := bytes.NewReader(stream)
			for b.Loop() {
				r.Reset(stream)
				body := bm.wrap(io.NopCloser(r), time.Minute)
				for {
					if _, err := body.Read(buf); err != nil {
						break
					}
				}
				body.Close()
			}
		})
	}
}
