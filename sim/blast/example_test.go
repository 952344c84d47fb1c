package blast_test

import (
	"fmt"
	"time"

	"github.com/recoil-go/recoil/sim/blast"
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
