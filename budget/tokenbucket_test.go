package budget

import (
	"math"
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

func TestTokenBucketDefaults(t *testing.T) {
	for name, b := range map[string]*TokenBucket{
		"zero value":  new(TokenBucket),
		"zero config": NewTokenBucket(TokenBucketConfig{}),
		"explicit A6": NewTokenBucket(TokenBucketConfig{MaxTokens: 10, TokenRatio: 0.1}),
		"negative":    NewTokenBucket(TokenBucketConfig{MaxTokens: -1, TokenRatio: -1}),
		"NaN":         NewTokenBucket(TokenBucketConfig{MaxTokens: math.NaN(), TokenRatio: math.NaN()}),
	} {
		got := b.State()
		want := TokenBucketState{Tokens: 10, MaxTokens: 10, TokenRatio: 0.1, RetryAllowed: true}
		if got != want {
			t.Errorf("%s: State() = %+v, want %+v", name, got, want)
		}
	}
}

func TestTokenBucketConfigLimits(t *testing.T) {
	tests := []struct {
		cfg            TokenBucketConfig
		max, ratio     float64
		firstRetryFail int // failures after which a retry is first refused
	}{
		{TokenBucketConfig{MaxTokens: 2000}, 1000, 0.1, 500},
		{TokenBucketConfig{MaxTokens: 1000}, 1000, 0.1, 500},
		{TokenBucketConfig{MaxTokens: 3}, 3, 0.1, 2}, // 2 > 1.5, then 1 ≤ 1.5
		{TokenBucketConfig{MaxTokens: 0.0001}, 0.001, 0.1, 1},
		{TokenBucketConfig{TokenRatio: 0.0004}, 10, 0.001, 5},
		{TokenBucketConfig{TokenRatio: 0.1234}, 10, 0.123, 5},
		{TokenBucketConfig{TokenRatio: 5}, 10, 5, 5},
	}
	for _, tt := range tests {
		b := NewTokenBucket(tt.cfg)
		s := b.State()
		if s.MaxTokens != tt.max || s.TokenRatio != tt.ratio || s.Tokens != tt.max {
			t.Errorf("NewTokenBucket(%+v).State() = %+v, want MaxTokens=Tokens=%v TokenRatio=%v",
				tt.cfg, s, tt.max, tt.ratio)
		}
		n := 0
		for b.RetryAt(t0, CauseError) {
			b.RecordAt(t0, failure)
			n++
		}
		if n != tt.firstRetryFail {
			t.Errorf("NewTokenBucket(%+v): retry refused after %d failures, want %d", tt.cfg, n, tt.firstRetryFail)
		}
	}
}

// TestTokenBucketHalfwayRule pins A6: "If token_count is less than or equal
// to the threshold, defined to be (maxTokens / 2), then RPCs will not be
// retried."
func TestTokenBucketHalfwayRule(t *testing.T) {
	tests := []struct {
		failures int
		tokens   float64
		retry    bool
	}{
		{0, 10, true},
		{1, 9, true},
		{4, 6, true},
		{5, 5, false}, // 5 is not above 10/2
		{6, 4, false},
		{10, 0, false},
		{11, 0, false}, // never below 0
		{50, 0, false},
	}
	for _, tt := range tests {
		var b TokenBucket
		for range tt.failures {
			b.RecordAt(time.Time{}, failure)
		}
		if got := b.State().Tokens; got != tt.tokens {
			t.Errorf("after %d failures: tokens = %v, want %v", tt.failures, got, tt.tokens)
		}
		if got := b.RetryAt(time.Time{}, CauseError); got != tt.retry {
			t.Errorf("after %d failures: RetryAt = %v, want %v", tt.failures, got, tt.retry)
		}
		if got := b.State().RetryAllowed; got != tt.retry {
			t.Errorf("after %d failures: State().RetryAllowed = %v, want %v", tt.failures, got, tt.retry)
		}
	}
}

// TestTokenBucketTokenRatio pins A6: "Every successful RPC will increment
// the token_count by tokenRatio", capped at maxTokens.
func TestTokenBucketTokenRatio(t *testing.T) {
	tests := []struct {
		failures, successes int
		tokens              float64
		retry               bool
	}{
		{5, 0, 5, false},
		{5, 1, 5.1, true}, // just above the threshold
		{5, 10, 6, true},
		{5, 50, 10, true},
		{5, 51, 10, true}, // capped at maxTokens
		{10, 49, 4.9, false},
		{10, 51, 5.1, true},
		{0, 3, 10, true},
	}
	for _, tt := range tests {
		var b TokenBucket
		for range tt.failures {
			b.Record(failure)
		}
		for range tt.successes {
			b.Record(success)
		}
		s := b.State()
		if s.Tokens != tt.tokens {
			t.Errorf("%d failures, %d successes: tokens = %v, want %v", tt.failures, tt.successes, s.Tokens, tt.tokens)
		}
		if got := b.Retry(CauseError); got != tt.retry {
			t.Errorf("%d failures, %d successes: Retry = %v, want %v", tt.failures, tt.successes, got, tt.retry)
		}
	}
}

func TestTokenBucketResults(t *testing.T) {
	tests := []struct {
		o     Outcome
		delta float64 // from 7 tokens
	}{
		{success, +0.1},
		{Outcome{Attempt: 3, Result: Success, After: CauseTimeout}, +0.1},
		{failure, -1},
		{overload, -1},
		{permanent, 0},
		{ignored, 0},
		{Outcome{Result: Result(200)}, 0},
	}
	for _, tt := range tests {
		var b TokenBucket
		for range 3 {
			b.RecordAt(t0, failure)
		}
		b.RecordAt(t0, tt.o)
		if got, want := b.State().Tokens, 7+tt.delta; math.Abs(got-want) > 1e-9 {
			t.Errorf("RecordAt(%+v) from 7 tokens: tokens = %v, want %v", tt.o, got, want)
		}
	}
}

func TestTokenBucketRetryDoesNotWithdraw(t *testing.T) {
	var b TokenBucket
	for range 1000 {
		if !b.RetryAt(t0, CauseTimeout) {
			t.Fatal("RetryAt on a full bucket = false, want true")
		}
		if !b.AdmitAt(t0) || !b.Admit() {
			t.Fatal("AdmitAt = false, want true")
		}
	}
	if got, want := b.State().Tokens, 10.0; got != want {
		t.Errorf("tokens after 1000 RetryAt = %v, want %v", got, want)
	}
}

// tokenModel is a reference model of A6 in exact milli-token arithmetic.
type tokenModel struct{ tokens, max, ratio int64 }

func (m *tokenModel) record(r Result) {
	switch r {
	case Success:
		m.tokens = min(m.tokens+m.ratio, m.max)
	case Failure, Overload:
		m.tokens = max(m.tokens-1000, 0)
	}
}

func TestTokenBucketProperty(t *testing.T) {
	fuzzgen.ForRandomInputs(t, 300, 8000, checkTokenBucketProperty)
}

func FuzzTokenBucketProperty(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 8000)
	f.Fuzz(func(t *testing.T, data []byte) { checkTokenBucketProperty(t, fuzzgen.New(data)) })
}

func checkTokenBucketProperty(t testing.TB, g *fuzzgen.Gen) {
	maxT := g.IntRange(1, 1000)
	ratio := g.IntRange(1, 2000)
	b := NewTokenBucket(TokenBucketConfig{MaxTokens: float64(maxT), TokenRatio: float64(ratio) / 1000})
	m := tokenModel{tokens: int64(maxT) * 1000, max: int64(maxT) * 1000, ratio: int64(ratio)}
	// Mostly failures, so that the bucket empties and refills.
	pFail := g.IntRange(0, 100)
	n := g.IntRange(0, 3000)
	for i := range n {
		r := fuzzgen.Pick(g, Success, Permanent, Ignored)
		if g.IntRange(0, 99) < pFail {
			r = fuzzgen.Pick(g, Failure, Overload)
		}
		b.Record(Outcome{Attempt: 1 + i%3, Result: r})
		m.record(r)
		s := b.State()
		if s.Tokens < 0 || s.Tokens > s.MaxTokens {
			t.Fatalf("step %d: tokens = %v, want in [0, %v]", i, s.Tokens, s.MaxTokens)
		}
		if got, want := s.Tokens, float64(m.tokens)/1000; got != want {
			t.Fatalf("step %d: tokens = %v, want %v (model)", i, got, want)
		}
		if got, want := b.Retry(CauseError), 2*m.tokens > m.max; got != want {
			t.Fatalf("step %d: Retry = %v, want %v with %v of %v tokens", i, got, want, s.Tokens, s.MaxTokens)
		}
	}
}

func TestTokenBucketConcurrent(t *testing.T) {
	var b TokenBucket
	const goroutines, n = 8, 5000
	// Half the goroutines fail, half succeed: the balance must stay in
	// range, and a run of pure failures must empty it exactly.
	hammer(goroutines, n, func(g, i int) {
		if g%2 == 0 {
			b.Record(failure)
		} else {
			b.Record(success)
		}
		b.Retry(CauseError)
		if s := b.State(); s.Tokens < 0 || s.Tokens > s.MaxTokens {
			t.Errorf("tokens = %v, want in [0, %v]", s.Tokens, s.MaxTokens)
		}
	})
	hammer(goroutines, 10, func(g, i int) { b.Record(failure) })
	if got := b.State().Tokens; got != 0 {
		t.Errorf("tokens after 80 concurrent failures = %v, want 0", got)
	}
	hammer(goroutines, 25, func(g, i int) { b.Record(success) }) // 200 × 0.1
	if got := b.State().Tokens; got != 10 {
		t.Errorf("tokens after 200 concurrent successes from 0 = %v, want 10", got)
	}
}

func BenchmarkTokenBucket(b *testing.B) {
	b.Run("record-success-full", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		for b.Loop() {
			tb.RecordAt(time.Time{}, success)
		}
	})
	b.Run("record-success-full-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tb.RecordAt(time.Time{}, success)
			}
		})
	})
	b.Run("admit", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		for b.Loop() {
			tb.AdmitAt(time.Time{})
		}
	})
	b.Run("retry", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		for b.Loop() {
			tb.RetryAt(time.Time{}, CauseError)
		}
	})
	b.Run("retry-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tb.RetryAt(time.Time{}, CauseError)
			}
		})
	})
	// A failure, a retry and its success: the bucket's write path.
	b.Run("fail-retry-succeed", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		for b.Loop() {
			tb.RecordAt(time.Time{}, failure)
			tb.RetryAt(time.Time{}, CauseError)
			tb.RecordAt(time.Time{}, success)
		}
	})
	b.Run("fail-retry-succeed-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var tb TokenBucket
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tb.RecordAt(time.Time{}, failure)
				tb.RetryAt(time.Time{}, CauseError)
				tb.RecordAt(time.Time{}, success)
			}
		})
	})
}

func TestTokenBucketFull(t *testing.T) {
	var b TokenBucket
	if !b.Full() {
		t.Error("zero bucket: Full() = false, want true")
	}
	b.Record(Outcome{Attempt: 1, Result: Failure})
	if b.Full() {
		t.Error("after a failure: Full() = true, want false")
	}
	for range 10 {
		b.Record(Outcome{Attempt: 1, Result: Success})
	}
	if !b.Full() {
		t.Errorf("after 10 successes at ratio 0.1: Full() = false (tokens %v), want true", b.State().Tokens)
	}
}
