package blast_test

import (
	"fmt"
	"time"

	"github.com/recoil-go/recoil/tools/sim/blast"
)

// Compute with the values of docs/why.md reproduces their figures.
func ExampleCompute() {
	r, err := blast.Compute(blast.DefaultInputs())
	if err != nil {
		panic(err)
	}
	for _, p := range r.Policies {
		fmt.Printf("%-10s %d attempt(s): held %.2fs, %.0f/min of %.0f allowed in total, %.2f workers of %d\n",
			p.Name, p.Attempts, p.HeldS, p.TotalPerMinute, r.Inputs.AllowancePerMinute, p.Workers, r.Inputs.Pool)
	}
	fmt.Printf("layers: %.0f attempts reach the bottom\n", r.Layers.Reach)
	a := r.WithoutBackoff
	fmt.Printf("load %.0f/s (×%.2f), failure %.3f, share %.3f, served %.0f/s, spare %.0f/s\n",
		a.Load, a.Factor, a.Failure, a.Share, a.Served, a.Spare)
	for _, a := range []blast.Amplification{r.WithoutBackoff, r.WithBackoff} {
		fmt.Printf("backoff %-5v tipping point %.2f%%, slider %.1f%%\n", a.Backoff, 100*a.Tipping.Exact, 100*a.Tipping.Slider)
	}
	// Output:
	// fail fast  1 attempt(s): held 0.21s, 1590/min of 2000 allowed in total, 0.49 workers of 24
	// one retry  2 attempt(s): held 1.21s, 1730/min of 2000 allowed in total, 2.82 workers of 24
	// configured 5 attempt(s): held 15.21s, 2150/min of 2000 allowed in total, 35.49 workers of 24
	// layers: 27 attempts reach the bottom
	// load 1240/s (×1.24), failure 0.226, share 0.968, served 960/s, spare -40/s
	// backoff false tipping point 17.08%, slider 17.5%
	// backoff true  tipping point 36.64%, slider 37.0%
}

// A bad field gives an error that names it.
func ExampleCompute_invalid() {
	in := blast.DefaultInputs()
	in.Capacity = 0
	_, err := blast.Compute(in)
	fmt.Println(err)
	// Output:
	// blast: Inputs.Capacity = 0: must be positive and at most 1e+15
}

// Full jitter halves the expected sleeping; the longest is unchanged.
func ExampleSleeping() {
	for _, j := range []blast.Jitter{blast.JitterNone, blast.JitterFull, blast.JitterEqual} {
		mean, longest := blast.Sleeping(5, time.Second, 2, 0, j)
		fmt.Printf("%-5v mean %v, longest %v\n", j, mean, longest)
	}
	// Output:
	// none  mean 15s, longest 15s
	// full  mean 7.5s, longest 15s
	// equal mean 11.25s, longest 15s
}

// The tipping point of docs/why.md §3, exactly and as its 0.5 % slider reads it.
func ExampleTippingPoint() {
	for _, backoff := range []bool{false, true} {
		t := blast.TippingPoint(1000, 1200, 2, backoff, 0.005)
		fmt.Printf("backoff %-5v exact %.4f, slider %.3f\n", backoff, t.Exact, t.Slider)
	}
	// Output:
	// backoff false exact 0.1708, slider 0.175
	// backoff true  exact 0.3664, slider 0.370
}

// The longest wait before each retry of a schedule that starts at 500 ms,
// doubles, and is capped at 8 s.
func ExampleCeiling() {
	var waits []time.Duration
	for k := 1; k <= 6; k++ {
		waits = append(waits, blast.Ceiling(k, 500*time.Millisecond, 2, 8*time.Second))
	}
	fmt.Println(waits)
	// Output:
	// [500ms 1s 2s 4s 8s 8s]
}

// Start from the figures of docs/why.md and change one: what would three
// attempts instead of five do to the worker pool?
func ExampleDefaultInputs() {
	in := blast.DefaultInputs()
	in.Attempts = 3
	r, err := blast.Compute(in)
	if err != nil {
		panic(err)
	}
	p := r.Policies[2] // the configured policy
	fmt.Printf("%d attempts: held %.2fs, %.2f workers of %d\n", p.Attempts, p.HeldS, p.Workers, in.Pool)
	// Output:
	// 3 attempts: held 3.21s, 7.49 workers of 24
}

// Below capacity only the fault fails requests; above it, shedding adds
// to it.
func ExampleFailureAt() {
	for _, load := range []float64{1000, 1240, 2400} {
		fmt.Printf("%4.0f/s: %.3f\n", load, blast.FailureAt(load, 1200, 0.2))
	}
	// Output:
	// 1000/s: 0.200
	// 1240/s: 0.226
	// 2400/s: 0.600
}

// The hold docs/why.md carries for the five-attempt wrapper, and for one
// retry.
func ExampleHeld() {
	fail := 210 * time.Millisecond
	fmt.Println(blast.Held(15*time.Second, fail), blast.Held(time.Second, fail))
	// Output:
	// 15.21s 1.21s
}

// Counting every attempt's failure time, not just one, the wrapper holds
// a worker a little longer: what a virtual clock measures.
func ExampleHeldEveryAttempt() {
	fmt.Println(blast.HeldEveryAttempt(15*time.Second, 5, 210*time.Millisecond))
	// Output:
	// 16.05s
}

// The load 1,000 requests a second become with two retries each, as the
// underlying failure rate grows, against a capacity of 1,200/s.
func ExampleLoad() {
	for _, f := range []float64{0.1, 0.2, 0.3} {
		fmt.Printf("f=%.1f: %4.0f/s without backoff, %4.0f/s with\n", f,
			blast.Load(1000, 1200, f, 2, false), blast.Load(1000, 1200, f, 2, true))
	}
	// Output:
	// f=0.1: 1110/s without backoff, 1051/s with
	// f=0.2: 1240/s without backoff, 1105/s with
	// f=0.3: 1406/s without backoff, 1161/s with
}

// A command-line flag's value, checked.
func ExampleParseJitter() {
	for _, s := range []string{"full", "half"} {
		j, err := blast.ParseJitter(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(j)
	}
	// Output:
	// full
	// blast: unknown jitter "half" (want none, full or equal)
}

// Attempts multiply across layers: each retrying layer multiplies what
// reaches the bottom.
func ExampleReach() {
	for layers := 1; layers <= 4; layers++ {
		fmt.Printf("%d layer(s) of 3 attempts: %.0f\n", layers, blast.Reach(3, layers))
	}
	// Output:
	// 1 layer(s) of 3 attempts: 3
	// 2 layer(s) of 3 attempts: 9
	// 3 layer(s) of 3 attempts: 27
	// 4 layer(s) of 3 attempts: 81
}

// Round by round: each round's retries are the last round's failures.
func ExampleRounds() {
	for _, r := range blast.Rounds(1000, 1200, 0.2, 2, false) {
		fmt.Printf("round %d: %4.0f attempts/s, load %4.0f/s, failure %.3f\n", r.Round, r.Attempts, r.Load, r.Failure)
	}
	// Output:
	// round 0: 1000 attempts/s, load 1000/s, failure 0.200
	// round 1:  200 attempts/s, load 1200/s, failure 0.200
	// round 2:   40 attempts/s, load 1240/s, failure 0.226
}

// Load above capacity is shed in proportion.
func ExampleShare() {
	fmt.Printf("%.3f %.3f\n", blast.Share(1000, 1200), blast.Share(1240, 1200))
	// Output:
	// 1.000 0.968
}

// With backoff each retry round is spread over a wider window.
func ExampleWindow() {
	for k := range 4 {
		fmt.Println(k, blast.Window(k, false), blast.Window(k, true))
	}
	// Output:
	// 0 1 1
	// 1 1 2
	// 2 1 8
	// 3 1 64
}

// Little's law, from the schedule to the pool: 140 failing calls a
// minute, each held for the wrapper's sleeping plus a failure, need more
// workers than a pool of 24 has.
func ExampleWorkers() {
	sleeping, _ := blast.Sleeping(5, time.Second, 2, 0, blast.JitterNone)
	held := blast.Held(sleeping, 210*time.Millisecond)
	fmt.Printf("%.2f workers\n", blast.Workers(140, held))
	// Output:
	// 35.49 workers
}
