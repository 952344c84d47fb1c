// Package blast does the arithmetic of a retry policy's blast radius: the
// models of docs/why.md reason with — the blast radius of a retried 400 on a
// shared allowance and worker pool (section 1), and retries multiplying
// across layers up to a tipping point (sections 2 and 3) — checked against
// every figure it prints.
//
// Everything here is a pure function of its arguments: no clock, no
// randomness, no state. Jitter enters as its mean.
//
// # Usage
//
//	in := blast.DefaultInputs() // the figures of docs/why.md
//	in.Attempts = 3             // what would three attempts do?
//	r, err := blast.Compute(in)
//	if err != nil { … }         // a *blast.InputError naming the field
//	fmt.Println(r.Policies[2].Workers, r.WithoutBackoff.Tipping.Slider)
//
// The command "recoil blast" prints a Report as text or JSON.
//
// # The schedule (docs/why.md §1)
//
// A call that fails every attempt makes n attempts and sleeps before each of
// the n−1 retries. The wait before retry k (k = 1…n−1) has the ceiling
//
//	c_k = min(max, base·multiplier^(k−1))
//
// (a hand-written loop: time.sleep(BASE_DELAY * (2 ** attempt)); package backoff
// computes the same ceiling). Its mean depends on the jitter (Marc Brooker,
// "Exponential Backoff And Jitter", AWS Architecture Blog, 2015):
//
//	none:  c_k            full:  c_k/2  (uniform in [0, c_k])
//	equal: 3·c_k/4        (c_k/2 + uniform in [0, c_k/2])
//
// and the expected sleeping is the sum of the means. The wrapper of docs/why.md §1 — 5 attempts,
// 1 s doubling, no jitter — sleeps 1+2+4+8 = 15 s. (A loop written as
// for attempt in range(5): … time.sleep(BASE_DELAY * (2 ** attempt)) also
// sleeps 16 s after the fifth failure before falling out of the loop; the
// arithmetic, like recoil, counts only the four sleeps between attempts.)
//
// The arithmetic then "carries the whole hold as 15.2 seconds": "Each failing call
// adds about a fifth of a second more". Its accounting is the sleeping plus
// one failure's time,
//
//	held = sleeping + failTime = 15 s + 0.21 s = 15.21 s, printed 15.2 s,
//
// and the same rule gives its counter-proposal's "about 1.2 seconds" (one
// retry: 1 s + 0.21 s = 1.21 s) and the healthy 210 ms (one attempt, no
// sleep). A worker is in fact held for every attempt, sleeping + n·failTime
// (16.05 s for the five-attempt wrapper — what "recoil demo" measures on a virtual
// clock); Policy.HeldEveryAttemptS reports that figure beside the shorter one.
// "To within a rounding, it is the sleeping", as the arithmetic says: the worker
// figures below use that accounting so that they reproduce the figures of docs/why.md,
// and the difference does not change a conclusion.
//
// # The allowance (docs/why.md §1)
//
// Rate limits are metered per organisation, and a rejected attempt the
// provider admitted counts exactly as a success does. An endpoint at r
// requests a minute that fails every attempt draws r·n attempts a minute:
//
//	total = r·n + other,  headroom = allowance − total
//
// docs/why.md §1: 140/min healthy, 1,450/min elsewhere, allowance 2,000/min:
// healthy 1,590 (headroom 410); five attempts turn 140 into 700 (+560) and
// the total into 2,150, over by 150.
//
// # Workers (docs/why.md §1, Little's law)
//
// Workers in use = arrival rate × time held (Little, 1961; derived in
// docs/why.md §1): (r/60)·held. 140/min is 2.33/s; × 0.21 s = 0.49 workers healthy;
// × 15.21 s = 35.49 broken ("a little over 35"; docs/why.md multiplies
// rounded figures, 2.33 × 15.2 = 35.4) against a pool of 24; one retry,
// × 1.21 s = 2.82, "under three workers". A demand above the pool is not a
// steady state: the queue grows for as long as it lasts.
//
// # Layers (docs/why.md §2)
//
// Retries compose by multiplication, with the number of retrying layers as
// the exponent: a attempts at each of L layers send a^L attempts to the
// bottom. Three layers of three attempts (2 retries) send 27. The
// attempts per layer are Retries+1 of the amplification model, as in docs/why.md §2.
//
// # Amplification (docs/why.md §3)
//
// The model's assumptions: every failed attempt is retried
// immediately, up to the attempt count; capacity C is a hard ceiling of
// attempts per second and load above it is shed proportionally; a request
// fails from the underlying fault f or from being shed; with backoff, each
// retry round is spread over a longer window; the failure rate is the same
// for every request. "Each round of retries is the previous round's failures
// coming back as new load, priced at the failure rate that all the
// accumulated load implies." Reconstructed, with O offered requests a second
// and R retries:
//
//	share(L)   = min(1, C/L)                     the proportion not shed
//	p(L)       = 1 − (1−f)·share(L)              failure rate at load L
//	a_0 = O,   L_0 = O
//	a_k = a_(k−1) · p(L_(k−1)) · W_(k−1)/W_k     round k's attempts/s, k = 1…R
//	L_k = L_(k−1) + a_k
//
// The load the system sees is L = L_R; then amplification = L/O, the failure
// rate with retries counted is p(L), the share of attempts taken is
// share(L), the attempts served successfully are L·share(L)·(1−f) =
// min(L, C)·(1−f), and the spare capacity is C − L. docs/why.md §3, f = 20 %,
// R = 2, no backoff, O = 1,000/s, C = 1,200/s: a_1 = 200, a_2 = 40, load
// 1,240/s, ×1.24, failure 1 − 0.8·(1200/1240) = 0.226 (the fault was 0.200:
// the retries manufacture 2.6 points of failure), share 0.968, 960/s
// served, −40/s spare. With no retries the failure rate is exactly f and
// 200/s are spare. All of these reproduce exactly.
//
// The windows W_k: without backoff every round lands in the same window,
// W_k = 1. With backoff the figure of docs/why.md §3 — tipping point 37 % — is
// reproduced by W_k = 2^(k(k+1)/2), that is windows 1, 2, 8, 64…: each round
// is spread over 2^k times the previous round's window (round k's rate is
// the previous round's already-spread rate divided by that round's whole
// window 2^k). The literal reading of "each retry round is spread over
// roughly twice the window of the previous one", windows 1, 2, 4, gives
// load = O·(1 + f/2 + f²/4), an exact crossing of 34.16 % and a slider
// reading of 34.5 %, not the 37 % of docs/why.md §3; no constant ratio of 2
// reproduces 37 (windows 1, w, w² need w between 2.137 and 2.166). For
// R = 2 the reconstruction is load = O·(1 + f/2 + f²/8) below capacity.
//
// Goodput counts requests completed a second. A request stops at its first
// success, so it equals the attempts served successfully, min(L, C)·(1−f);
// without retries it is min(O, C)·(1−f). Below capacity and without backoff
// that is O·(1 − f^(R+1)): retries recover real work (960/s against 800/s in
// the example's case). The model caps served attempts at capacity and sheds
// proportionally, so goodput with retries never falls below goodput without
// while O ≤ C; what the tipping point marks is the failure rate climbing
// past the fault and healthy attempts being shed (Amplification.Shed). What
// the model ignores — queueing, capacity that falls
// with load, callers that give up — is where retries above the tipping point
// become the outage. With backoff the figures are one window's rates.
//
// # Layers of a call graph
//
// Layer, Reaching, StackLoad and StackTippingPoint carry the amplification
// model down a path of retrying layers, each with its own attempts,
// backoff and budget (package audit reads them off a mesh's Envoy, gRPC,
// Istio and recoil configuration). The bottom layer's attempts fail at the
// failing service's rate p; a call through a layer fails when every
// attempt it made did, and that is the rate the layer above sees. A layer
// of R retries makes Σ_{k=0…R} q^k/W_k attempts per call at a failure rate
// q — the single-layer model's rounds, so one layer is exactly Load below
// capacity — and a budget lets only a share of the failing calls retry: a
// ratio budget the share that keeps retries within its ratio, a token
// bucket of token ratio r none once q passes r/(1+r), where the bucket
// drains. With every attempt failing and no budget, the product of the
// layers' attempts reaches the bottom: Reach's 27.
//
// PersistentLoad and PersistentTippingPoint take the other end of an
// outage: a share f of the requests meet a failure that lasts, every
// attempt they make failing, and send the whole product; the rest succeed
// at once. Three layers of three against 20 % of headroom tip at
// 0.2/26 = 0.77 % of requests.
//
// # Tipping points
//
// The tipping point is the underlying failure rate at which the load reaches
// capacity, the root of L(f) = C on [0, 1]. Below capacity every p is f, so
// L is a polynomial with positive coefficients (O·Σ f^k·W_0/W_k) and the root
// is unique; TippingPoint finds it by bisection. docs/why.md §3: without backoff
// O·(1 + f + f²) = C gives f = (√1.8 − 1)/2 = 17.08 %; with backoff
// O·(1 + f/2 + f²/8) = C gives f = √5.6 − 2 = 36.64 %.
//
// docs/why.md §3 reports them as a failure-rate slider that moves in steps
// of 0.5 % would: the figure it shows is the first slider stop at which the load
// reaches capacity, that is the exact crossing rounded up to the next step
// — 17.08 % reads 17.5 %, 36.64 % reads 37 %. Tipping.Exact and
// Tipping.Slider report both. If the offered load alone reaches capacity the
// tipping point is 0; if even f = 100 % leaves the load below capacity there
// is none (Tipping.Exists is false).
package blast
