package blast

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"
)

// round rounds x to the given number of decimals, as docs/why.md prints them.
func round(x float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(x*p) / p
}

func seedReport(t *testing.T) Report {
	t.Helper()
	r, err := Compute(DefaultInputs())
	if err != nil {
		t.Fatalf("Compute(DefaultInputs()) error: %v", err)
	}
	return r
}

// figure is one printed figure of docs/why.md: the value Compute gives, and
// the value printed there at the precision it is printed.
type figure struct {
	name     string
	got      float64
	want     float64
	decimals int
}

func checkFigures(t *testing.T, figs []figure) {
	t.Helper()
	for _, f := range figs {
		if got := round(f.got, f.decimals); got != f.want {
			t.Errorf("%s = %v (%.*f), want %v", f.name, f.got, f.decimals, got, f.want)
		}
	}
}

// TestBlastRadiusFigures pins every figure of docs/why.md, section 1, "One
// retried 400 and the two things it spends".
func TestBlastRadiusFigures(t *testing.T) {
	r := seedReport(t)
	fast, one, five := r.Policies[0], r.Policies[1], r.Policies[2]
	if fast.Name != PolicyFailFast || one.Name != PolicyOneRetry || five.Name != PolicyConfigured {
		t.Fatalf("Policies = %q, %q, %q; want %q, %q, %q", fast.Name, one.Name, five.Name, PolicyFailFast, PolicyOneRetry, PolicyConfigured)
	}
	checkFigures(t, []figure{
		// "1 + 2 + 4 + 8 seconds of sleeping … The four sleeps here come to
		// fifteen seconds."
		{"five attempts: ceilings[0]", five.CeilingsS[0], 1, 0},
		{"five attempts: ceilings[1]", five.CeilingsS[1], 2, 0},
		{"five attempts: ceilings[2]", five.CeilingsS[2], 4, 0},
		{"five attempts: ceilings[3]", five.CeilingsS[3], 8, 0},
		{"five attempts: sleeping", five.SleepingS, 15, 0},
		// "carries the whole hold as 15.2 seconds, against the 210
		// milliseconds the failure genuinely took".
		{"five attempts: held", five.HeldS, 15.2, 1},
		{"fail fast: held", fast.HeldS, 0.21, 2},
		{"five attempts: held every attempt", five.HeldEveryAttemptS, 16.05, 2},
		// "one endpoint at 140 requests per minute and 1,450 per minute
		// across everything else … Healthy, the total is 1,590".
		{"fail fast: draw", fast.DrawPerMinute, 140, 0},
		{"fail fast: total", fast.TotalPerMinute, 1590, 0},
		// "a little over four hundred requests a minute of headroom".
		{"fail fast: headroom", fast.HeadroomPerMinute, 410, 0},
		// "it alone draws 700 requests per minute … the total reaches 2,150".
		{"five attempts: draw", five.DrawPerMinute, 700, 0},
		{"five attempts: extra", five.ExtraPerMinute, 560, 0},
		{"five attempts: total", five.TotalPerMinute, 2150, 0},
		// "it crosses it by a hundred and fifty requests a minute".
		{"five attempts: headroom", five.HeadroomPerMinute, -150, 0},
		// "140 requests per minute — 2.33 per second — with a 210 ms service
		// time occupies about half a worker".
		{"arrival per second", fast.ArrivalPerS, 2.33, 2},
		{"fail fast: workers", fast.Workers, 0.49, 2},
		// "the same arrival rate demands 35 workers".
		{"five attempts: workers", five.Workers, 35, 0},
		// "280 requests per minute instead of 140 … a service time of about
		// 1.2 seconds".
		{"one retry: draw", one.DrawPerMinute, 280, 0},
		{"one retry: sleeping", one.SleepingS, 1, 0},
		{"one retry: held", one.HeldS, 1.2, 1},
	})
	// "2.33 multiplied by 1.2, which is under three workers out of 24".
	if one.Workers >= 3 {
		t.Errorf("one retry: workers = %v, want < 3", one.Workers)
	}
	// "The pool has 24. There is no configuration in which 35 concurrent
	// requests fit into 24 workers."
	for _, p := range []struct {
		p        Policy
		overPool bool
		overAllw bool
	}{{fast, false, false}, {one, false, false}, {five, true, true}} {
		if p.p.OverPool != p.overPool {
			t.Errorf("%s: OverPool = %v, want %v (workers %.2f, pool %d)", p.p.Name, p.p.OverPool, p.overPool, p.p.Workers, r.Inputs.Pool)
		}
		if p.p.OverAllowance != p.overAllw {
			t.Errorf("%s: OverAllowance = %v, want %v (total %v of %v)", p.p.Name, p.p.OverAllowance, p.overAllw, p.p.TotalPerMinute, r.Inputs.AllowancePerMinute)
		}
	}
}

// TestAmplificationFigures pins every figure of docs/why.md, sections 2
// and 3: retries multiplying across layers, and the tipping point.
func TestAmplificationFigures(t *testing.T) {
	r := seedReport(t)
	no, bo := r.WithoutBackoff, r.WithBackoff
	checkFigures(t, []figure{
		// "Three attempts at each of three layers … Twenty-seven".
		{"layers: reach", r.Layers.Reach, 27, 0},
		{"layers: sent by layer 1", r.Layers.Sent[0], 3, 0},
		{"layers: sent by layer 2", r.Layers.Sent[1], 9, 0},
		// The widget at 20 %, 2 retries, backoff 0, 1,000/s against 1,200/s.
		{"load the system actually sees", no.Load, 1240, 0},
		{"times more load than arrived", no.Factor, 1.24, 2},
		{"failure rate once retries are counted", no.Failure, 0.226, 3},
		// "it manufactures two and a half percentage points of failure".
		{"manufactured failure", no.Manufactured, 0.026, 3},
		{"share of attempts the system can take", no.Share, 0.968, 3},
		{"attempts served successfully", no.Served, 960, 0},
		{"capacity left over", no.Spare, -40, 0},
		{"shed", no.Shed, 40, 0},
		// "goodput with retries beats goodput without them".
		{"goodput", no.Goodput, 960, 0},
		{"goodput without retries", no.GoodputNoRetries, 800, 0},
		{"recovered", no.Recovered, 160, 0},
		// "amplified load reaches capacity once the underlying failure rate
		// passes 17.5 per cent … turning backoff on moves the tipping point
		// from 17.5 per cent to 37 per cent".
		{"tipping point, no backoff (slider)", no.Tipping.Slider, 0.175, 4},
		{"tipping point, backoff (slider)", bo.Tipping.Slider, 0.37, 4},
		{"tipping point, no backoff (exact)", no.Tipping.Exact, 0.1708, 4},
		{"tipping point, backoff (exact)", bo.Tipping.Exact, 0.3664, 4},
		// The reconstruction with backoff: 1,000 + 100 + 5.
		{"load with backoff", bo.Load, 1105, 0},
	})
	if !no.Overloaded {
		t.Errorf("no backoff: Overloaded = false, want true (\"Amplified load exceeds capacity 1\")")
	}
	if bo.Overloaded {
		t.Errorf("backoff: Overloaded = true, want false (load %v)", bo.Load)
	}
	if !no.Tipping.Exists || !bo.Tipping.Exists {
		t.Errorf("Tipping.Exists = %v, %v; want true, true (\"A tipping point exists at all 1\")", no.Tipping.Exists, bo.Tipping.Exists)
	}
	if !no.Configured || bo.Configured {
		t.Errorf("Configured = %v, %v; want true, false (backoff off)", no.Configured, bo.Configured)
	}
	// The exact crossings in closed form: 1000·(1+f+f²) = 1200 and
	// 1000·(1+f/2+f²/8) = 1200.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"no backoff", no.Tipping.Exact, (math.Sqrt(1.8) - 1) / 2},
		{"backoff", bo.Tipping.Exact, math.Sqrt(5.6) - 2},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s: Tipping.Exact = %.15f, want %.15f", c.name, c.got, c.want)
		}
	}
}

// TestAmplificationNoRetries: "Turn the retries off entirely and the reported
// rate is exactly the 20 per cent that broke, with 200 attempts a second of
// headroom to spare."
func TestAmplificationNoRetries(t *testing.T) {
	in := DefaultInputs()
	in.Retries = 0
	r, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	a := r.WithoutBackoff
	if a.Failure != 0.2 || a.Spare != 200 || a.Load != 1000 || a.Recovered != 0 {
		t.Errorf("no retries: failure %v, spare %v, load %v, recovered %v; want 0.2, 200, 1000, 0", a.Failure, a.Spare, a.Load, a.Recovered)
	}
	if a.Tipping.Exists {
		t.Errorf("no retries: a tipping point exists at %v, want none (1,000/s never reaches 1,200/s)", a.Tipping.Exact)
	}
	if r.Layers.Reach != 1 {
		t.Errorf("no retries: Layers.Reach = %v, want 1", r.Layers.Reach)
	}
}

func TestSleeping(t *testing.T) {
	tests := []struct {
		attempts      int
		base          time.Duration
		mult          float64
		max           time.Duration
		j             Jitter
		mean, longest time.Duration
	}{
		{5, time.Second, 2, 0, JitterNone, 15 * time.Second, 15 * time.Second},
		{5, time.Second, 0, 0, JitterNone, 15 * time.Second, 15 * time.Second}, // 0 means 2
		{5, time.Second, 2, 0, JitterFull, 7500 * time.Millisecond, 15 * time.Second},
		{5, time.Second, 2, 0, JitterEqual, 11250 * time.Millisecond, 15 * time.Second},
		{5, time.Second, 2, 3 * time.Second, JitterNone, 9 * time.Second, 9 * time.Second}, // 1+2+3+3
		{6, time.Second, 2, 0, JitterNone, 31 * time.Second, 31 * time.Second},             // a sixth attempt costs 16 s
		{4, time.Second, 2, 0, JitterNone, 7 * time.Second, 7 * time.Second},               // one fewer removes 8 of 15
		{3, 100 * time.Millisecond, 1.6, 0, JitterNone, 260 * time.Millisecond, 260 * time.Millisecond},
		{2, time.Second, 2, 0, JitterNone, time.Second, time.Second},
		{1, time.Second, 2, 0, JitterFull, 0, 0},
		{5, 0, 2, 0, JitterNone, 0, 0},
	}
	for _, tt := range tests {
		mean, longest := Sleeping(tt.attempts, tt.base, tt.mult, tt.max, tt.j)
		if mean != tt.mean || longest != tt.longest {
			t.Errorf("Sleeping(%d, %v, %v, %v, %v) = %v, %v; want %v, %v",
				tt.attempts, tt.base, tt.mult, tt.max, tt.j, mean, longest, tt.mean, tt.longest)
		}
	}
}

func TestCeiling(t *testing.T) {
	tests := []struct {
		k    int
		base time.Duration
		mult float64
		max  time.Duration
		want time.Duration
	}{
		{1, time.Second, 2, 0, time.Second},
		{4, time.Second, 2, 0, 8 * time.Second},
		{4, time.Second, 2, 5 * time.Second, 5 * time.Second},
		{0, time.Second, 2, 0, time.Second},
		{3, time.Second, 0.5, 0, time.Second}, // below 1 means no growth
		{200, time.Second, 2, 0, math.MaxInt64},
		{1, -time.Second, 2, 0, 0},
	}
	for _, tt := range tests {
		if got := Ceiling(tt.k, tt.base, tt.mult, tt.max); got != tt.want {
			t.Errorf("Ceiling(%d, %v, %v, %v) = %v, want %v", tt.k, tt.base, tt.mult, tt.max, got, tt.want)
		}
	}
}

func TestHeldAndWorkers(t *testing.T) {
	fail := 210 * time.Millisecond
	if got, want := Held(15*time.Second, fail), 15210*time.Millisecond; got != want {
		t.Errorf("Held(15s, 210ms) = %v, want %v", got, want)
	}
	if got, want := HeldEveryAttempt(15*time.Second, 5, fail), 16050*time.Millisecond; got != want {
		t.Errorf("HeldEveryAttempt(15s, 5, 210ms) = %v, want %v", got, want)
	}
	tests := []struct {
		perMinute float64
		held      time.Duration
		want      float64
	}{
		{140, 210 * time.Millisecond, 0.49},
		{140, 1210 * time.Millisecond, 2.8233},
		{140, 15210 * time.Millisecond, 35.49},
		{60, time.Second, 1},
		{0, time.Hour, 0},
	}
	for _, tt := range tests {
		if got := Workers(tt.perMinute, tt.held); math.Abs(got-tt.want) > 1e-4 {
			t.Errorf("Workers(%v, %v) = %v, want %v", tt.perMinute, tt.held, got, tt.want)
		}
	}
}

func TestReach(t *testing.T) {
	tests := []struct {
		attempts, layers int
		want             float64
	}{{3, 3, 27}, {3, 1, 3}, {5, 2, 25}, {1, 10, 1}, {2, 0, 1}}
	for _, tt := range tests {
		if got := Reach(tt.attempts, tt.layers); got != tt.want {
			t.Errorf("Reach(%d, %d) = %v, want %v", tt.attempts, tt.layers, got, tt.want)
		}
	}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		k       int
		backoff bool
		want    float64
	}{{0, true, 1}, {1, true, 2}, {2, true, 8}, {3, true, 64}, {2, false, 1}, {5, false, 1}}
	for _, tt := range tests {
		if got := Window(tt.k, tt.backoff); got != tt.want {
			t.Errorf("Window(%d, %v) = %v, want %v", tt.k, tt.backoff, got, tt.want)
		}
	}
}

// TestLoadClosedForm checks Load below capacity against the polynomials the
// package documentation gives: O·(1+f+f²) and, with backoff, O·(1+f/2+f²/8).
func TestLoadClosedForm(t *testing.T) {
	const o, c = 1000.0, 1e9 // capacity out of reach: nothing is shed
	for i := 0; i <= 100; i++ {
		f := float64(i) / 100
		tests := []struct {
			backoff bool
			want    float64
		}{{false, o * (1 + f + f*f)}, {true, o * (1 + f/2 + f*f/8)}}
		for _, tt := range tests {
			if got := Load(o, c, f, 2, tt.backoff); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Load(%v, %v, %v, 2, %v) = %v, want %v", o, c, f, tt.backoff, got, tt.want)
			}
		}
	}
	// Rounds and Load agree.
	for _, f := range []float64{0, 0.1, 0.2, 0.5, 0.9, 1} {
		for _, b := range []bool{false, true} {
			rs := Rounds(1000, 1200, f, 3, b)
			if got, want := rs[len(rs)-1].Load, Load(1000, 1200, f, 3, b); got != want {
				t.Errorf("Rounds(…, %v, 3, %v) last Load = %v, want Load(…) = %v", f, b, got, want)
			}
		}
	}
}

func TestFailureAt(t *testing.T) {
	tests := []struct {
		load, capacity, f, want float64
	}{
		{1000, 1200, 0.2, 0.2},
		{1200, 1200, 0.2, 0.2},
		{1240, 1200, 0.2, 1 - 0.8*1200/1240},
		{2400, 1200, 0, 0.5},
		{2400, 1200, 1, 1},
	}
	for _, tt := range tests {
		if got := FailureAt(tt.load, tt.capacity, tt.f); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("FailureAt(%v, %v, %v) = %v, want %v", tt.load, tt.capacity, tt.f, got, tt.want)
		}
	}
}

func TestTippingPoint(t *testing.T) {
	const (
		noBackoff = 0.170820393249937 // (√1.8 − 1)/2
		backoff   = 0.366431913239846 // √5.6 − 2
	)
	tests := []struct {
		name              string
		offered, capacity float64
		retries           int
		backoff           bool
		step              float64
		exists            bool
		exact, slider     float64
	}{
		{"amplification example", 1000, 1200, 2, false, 0.005, true, noBackoff, 0.175},
		{"amplification example with backoff", 1000, 1200, 2, true, 0.005, true, backoff, 0.37},
		{"zero step means 0.5 %", 1000, 1200, 2, false, 0, true, noBackoff, 0.175},
		{"a 1 % slider", 1000, 1200, 2, false, 0.01, true, noBackoff, 0.18},
		{"one retry: 1000·(1+f) = 1200", 1000, 1200, 1, false, 0.005, true, 0.2, 0.2},
		{"offered alone reaches capacity", 1200, 1200, 2, false, 0.005, true, 0, 0},
		{"offered above capacity", 1500, 1200, 0, false, 0.005, true, 0, 0},
		{"no retries, below capacity", 1000, 1200, 0, false, 0.005, false, 0, 0},
		{"out of reach even at 100 %", 100, 1200, 2, false, 0.005, false, 0, 0},
		{"crossing at 100 %", 400, 1200, 2, false, 0.005, true, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TippingPoint(tt.offered, tt.capacity, tt.retries, tt.backoff, tt.step)
			if got.Exists != tt.exists {
				t.Fatalf("TippingPoint(%v, %v, %d, %v, %v).Exists = %v, want %v", tt.offered, tt.capacity, tt.retries, tt.backoff, tt.step, got.Exists, tt.exists)
			}
			if math.Abs(got.Exact-tt.exact) > 1e-12 {
				t.Errorf("Exact = %.15f, want %.15f", got.Exact, tt.exact)
			}
			if round(got.Slider, 6) != tt.slider {
				t.Errorf("Slider = %v, want %v", got.Slider, tt.slider)
			}
			if load := Load(tt.offered, tt.capacity, got.Slider, tt.retries, tt.backoff); got.Exists && load < tt.capacity {
				t.Errorf("Load at the slider reading %v = %v, below capacity %v", got.Slider, load, tt.capacity)
			}
			if below := got.Slider - got.Step; got.Exists && below >= 0 && Load(tt.offered, tt.capacity, below, tt.retries, tt.backoff) >= tt.capacity {
				t.Errorf("the stop below the slider reading, %v, already reaches capacity", below)
			}
		})
	}
}

// TestBackoffLiteralReading records why the backoff windows are 1, 2, 8 and
// not the literal 1, 2, 4: the literal reading, O·(1 + f/2 + f²/4) = C, puts
// the crossing at √1.8 − 1 = 34.16 %, which a 0.5 % slider reads as 34.5 %,
// not the 37 % of docs/why.md §3.
func TestBackoffLiteralReading(t *testing.T) {
	literal := math.Sqrt(1.8) - 1
	if got := 1000 * (1 + literal/2 + literal*literal/4); math.Abs(got-1200) > 1e-9 {
		t.Fatalf("literal reading at %v: load %v, want 1200", literal, got)
	}
	if got := math.Ceil(literal/0.005) * 0.005; round(got, 4) != 0.345 {
		t.Errorf("literal reading on the slider = %v, want 0.345", got)
	}
	if got := seedReport(t).WithBackoff.Tipping.Slider; round(got, 4) != 0.37 {
		t.Errorf("reconstruction on the slider = %v, want 0.37", got)
	}
}

// TestGoodputBelowTipping: below the tipping point retries recover real
// work, O·(1 − f^(R+1)) against O·(1 − f).
func TestGoodputBelowTipping(t *testing.T) {
	for _, f := range []float64{0.01, 0.05, 0.1, 0.15, 0.17} {
		in := DefaultInputs()
		in.Failure = f
		r, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		a := r.WithoutBackoff
		if a.Overloaded {
			t.Errorf("f = %v: overloaded below the tipping point (load %v)", f, a.Load)
		}
		if want := 1000 * (1 - f*f*f); math.Abs(a.Goodput-want) > 1e-9 {
			t.Errorf("f = %v: Goodput = %v, want %v", f, a.Goodput, want)
		}
		if a.Recovered <= 0 {
			t.Errorf("f = %v: Recovered = %v, want > 0", f, a.Recovered)
		}
		if a.Failure != f {
			t.Errorf("f = %v: Failure = %v, want the fault itself below capacity", f, a.Failure)
		}
	}
}

func TestComputeInvalid(t *testing.T) {
	tests := []struct {
		field  string
		mutate func(*Inputs)
	}{
		{"Attempts", func(in *Inputs) { in.Attempts = 0 }},
		{"Attempts", func(in *Inputs) { in.Attempts = 101 }},
		{"Base", func(in *Inputs) { in.Base = -time.Second }},
		{"Multiplier", func(in *Inputs) { in.Multiplier = 0.5 }},
		{"Multiplier", func(in *Inputs) { in.Multiplier = math.NaN() }},
		{"Multiplier", func(in *Inputs) { in.Multiplier = math.Inf(1) }},
		{"MaxDelay", func(in *Inputs) { in.MaxDelay = -1 }},
		{"Jitter", func(in *Inputs) { in.Jitter = 7 }},
		{"FailTime", func(in *Inputs) { in.FailTime = -time.Millisecond }},
		{"RatePerMinute", func(in *Inputs) { in.RatePerMinute = -1 }},
		{"RatePerMinute", func(in *Inputs) { in.RatePerMinute = math.NaN() }},
		{"OtherPerMinute", func(in *Inputs) { in.OtherPerMinute = math.Inf(1) }},
		{"AllowancePerMinute", func(in *Inputs) { in.AllowancePerMinute = 0 }},
		{"Pool", func(in *Inputs) { in.Pool = 0 }},
		{"Layers", func(in *Inputs) { in.Layers = 0 }},
		{"Offered", func(in *Inputs) { in.Offered = 0 }},
		{"Offered", func(in *Inputs) { in.Offered = math.NaN() }},
		{"Capacity", func(in *Inputs) { in.Capacity = 0 }},
		{"Capacity", func(in *Inputs) { in.Capacity = -1200 }},
		{"Capacity", func(in *Inputs) { in.Capacity = math.NaN() }},
		{"Failure", func(in *Inputs) { in.Failure = -0.1 }},
		{"Failure", func(in *Inputs) { in.Failure = 1.5 }},
		{"Failure", func(in *Inputs) { in.Failure = math.NaN() }},
		{"Retries", func(in *Inputs) { in.Retries = -1 }},
		{"Retries", func(in *Inputs) { in.Retries = 41 }},
		{"SliderStep", func(in *Inputs) { in.SliderStep = 2 }},
		{"SliderStep", func(in *Inputs) { in.SliderStep = -0.005 }},
	}
	for _, tt := range tests {
		in := DefaultInputs()
		tt.mutate(&in)
		_, err := Compute(in)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("Compute with bad %s: error = %v, want *InputError", tt.field, err)
			continue
		}
		if ie.Field != tt.field {
			t.Errorf("Compute with bad %s: InputError.Field = %q, want %q (%v)", tt.field, ie.Field, tt.field, err)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Compute with bad %s: errors.Is(%v, ErrInvalid) = false", tt.field, err)
		}
	}
	if _, err := Compute(Inputs{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Compute(Inputs{}) error = %v, want ErrInvalid", err)
	}
}

func TestComputeDefaults(t *testing.T) {
	in := DefaultInputs()
	in.Multiplier, in.SliderStep = 0, 0
	r, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Inputs.Multiplier != DefaultMultiplier || r.Inputs.SliderStep != DefaultSliderStep {
		t.Errorf("defaults: Multiplier %v, SliderStep %v; want %v, %v", r.Inputs.Multiplier, r.Inputs.SliderStep, DefaultMultiplier, DefaultSliderStep)
	}
	if r.Policies[2].SleepingS != 15 {
		t.Errorf("zero Multiplier: sleeping = %v, want 15", r.Policies[2].SleepingS)
	}
}

// TestComputeExtremes checks that the largest valid inputs give a Report
// that encodes as JSON (no NaN or infinity).
func TestComputeExtremes(t *testing.T) {
	in := DefaultInputs()
	in.Attempts, in.Multiplier, in.Base = 100, 100, time.Duration(math.MaxInt64)
	in.Retries, in.Layers, in.Backoff = 40, 64, true
	in.RatePerMinute, in.Offered, in.Capacity, in.Failure = 1e15, 1e15, 1, 1
	r, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("json.Marshal(extreme report): %v", err)
	}
}

func TestInputsJSON(t *testing.T) {
	in := DefaultInputs()
	in.Jitter, in.MaxDelay = JitterFull, 20*time.Second
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"base_ms": 1000.0, "fail_time_ms": 210.0, "max_delay_ms": 20000.0, "jitter": "full", "attempts": 5.0} {
		if m[k] != want {
			t.Errorf("json %s = %v, want %v (%s)", k, m[k], want, b)
		}
	}
	var back Inputs
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != in {
		t.Errorf("round trip = %+v, want %+v", back, in)
	}
}

func TestJitterText(t *testing.T) {
	for _, j := range []Jitter{JitterNone, JitterFull, JitterEqual} {
		b, err := j.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Jitter
		if err := back.UnmarshalText(b); err != nil || back != j {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, j)
		}
	}
	if _, err := ParseJitter("decorrelated"); err == nil {
		t.Errorf("ParseJitter(%q) succeeded, want an error", "decorrelated")
	}
	if _, err := Jitter(9).MarshalText(); err == nil {
		t.Errorf("Jitter(9).MarshalText succeeded, want an error")
	}
	if got := Jitter(9).String(); got != "Jitter(9)" {
		t.Errorf("Jitter(9).String() = %q", got)
	}
}
