package recoilhttp

// Server-sent events: stream errors, the first event, the scanner fuzzed
// against a reference, and the idle body benchmark.

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"
)

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
