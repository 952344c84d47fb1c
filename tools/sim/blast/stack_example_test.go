package blast_test

import (
	"fmt"

	"github.com/recoil-go/recoil/tools/sim/blast"
)

// Three layers of three attempts: 27 reach the bottom when everything
// fails, barely more than one layer's retries when a retry may succeed.
func ExampleReaching() {
	path := []blast.Layer{{Retries: 2}, {Retries: 2}, {Retries: 2}}
	for _, p := range []float64{1, 0.5, 0.1} {
		a, f := blast.Reaching(path, p)
		fmt.Printf("p = %.1f: %.4g attempts reach the bottom, the request fails with %.3g\n", p, a, f)
	}
	// Output:
	// p = 1.0: 27 attempts reach the bottom, the request fails with 1
	// p = 0.5: 2 attempts reach the bottom, the request fails with 7.45e-09
	// p = 0.1: 1.111 attempts reach the bottom, the request fails with 1e-27
}

// A budget caps what a layer does once it is spent.
func ExampleLayer_Expect() {
	for _, l := range []blast.Layer{{Retries: 2}, {Retries: 2, RetryRatio: 0.2}, {Retries: 2, ThrottleRatio: 0.1}, {Retries: 2, SuccessRatio: 0.2}} {
		a, _ := l.Expect(1)
		b, _ := l.Expect(0.3)
		fmt.Printf("%+v: %.3g attempts per call when every attempt fails, %.3g at 30 %%\n", l, a, b)
	}
	// Output:
	// {Retries:2 Backoff:false RetryRatio:0 ThrottleRatio:0 SuccessRatio:0}: 3 attempts per call when every attempt fails, 1.39 at 30 %
	// {Retries:2 Backoff:false RetryRatio:0.2 ThrottleRatio:0 SuccessRatio:0}: 1.2 attempts per call when every attempt fails, 1.2 at 30 %
	// {Retries:2 Backoff:false RetryRatio:0 ThrottleRatio:0.1 SuccessRatio:0}: 1 attempts per call when every attempt fails, 1 at 30 %
	// {Retries:2 Backoff:false RetryRatio:0 ThrottleRatio:0 SuccessRatio:0.2}: 1 attempts per call when every attempt fails, 1.16 at 30 %
}

// A token bucket of ratio 0.1 stops retries above 9.09 % failure.
func ExampleThrottleAbove() {
	fmt.Printf("%.2f%%\n", 100*blast.ThrottleAbove(0.1))
	// Output: 9.09%
}

// One layer of two retries is the single-layer model: the same load and
// the same tipping point.
func ExampleStackLoad() {
	one := [][]blast.Layer{{{Retries: 2}}}
	fmt.Printf("%.0f %.0f\n", blast.StackLoad(1000, 1200, 0.1, one), blast.Load(1000, 1200, 0.1, 2, false))
	// Output: 1110 1110
}

// The tipping point of docs/why.md §3 through the layered model.
func ExampleStackTippingPoint() {
	t := blast.StackTippingPoint(1000, 1200, [][]blast.Layer{{{Retries: 2}}}, 0.005)
	fmt.Printf("%.2f%%, slider %.1f%%\n", 100*t.Exact, 100*t.Slider)
	// Output: 17.08%, slider 17.5%
}

// One request in a failure that lasts sends the whole product: three
// layers of three tip a 20 % headroom once 0.2/26 of requests fail so.
func ExamplePersistentTippingPoint() {
	three := [][]blast.Layer{{{Retries: 2}, {Retries: 2}, {Retries: 2}}}
	fmt.Printf("load at 10%%: %.1f× ", blast.PersistentLoad(1, 0.1, three))
	t := blast.PersistentTippingPoint(1, 1.2, three, 0.005)
	fmt.Printf("tips at %.2f%%\n", 100*t.Exact)
	// Output: load at 10%: 3.6× tips at 0.77%
}
