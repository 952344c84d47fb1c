package hop_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/recoil-go/recoil/hop"
)

// chain simulates a three-layer call path in-process: an edge, two services
// behind it and a leaf that is down, each hop allowing three attempts.
type chain struct {
	hops     []string // the services, edge first; the last calls the leaf
	protocol bool     // whether the services speak the hop protocol
	budget   int      // the edge's own retry budget
	leafSaw  int      // attempts that reached the leaf
	trace    bool
}

const attemptsPerHop = 3

// serve is hop i answering a request with headers in. It reports whether it
// succeeded, and its response headers.
func (c *chain) serve(i int, in http.Header) (bool, http.Header) {
	out := http.Header{}
	if i == len(c.hops) {
		c.leafSaw++ // the leaf is down, and does not speak the protocol
		return false, out
	}
	name, next := c.hops[i], "leaf"
	if i+1 < len(c.hops) {
		next = c.hops[i+1]
	}

	// Read the request; with no budget in it, this hop is an edge and
	// starts from its own.
	req, _ := hop.ParseRequest(in)
	budget := c.budget
	if req.HasBudget {
		budget = req.Budget
	}
	acct := hop.NewAccount(budget)

	for attempt := 1; ; attempt++ {
		h := http.Header{}
		if c.protocol {
			hop.Request{Budget: acct.Remaining(), HasBudget: true, Attempt: attempt}.Write(h)
		}
		c.logf("%s → %s: attempt %d, budget %s", name, next, attempt, h.Get(hop.HeaderBudget))
		ok, resp := c.serve(i+1, h)
		if ok {
			return true, out
		}
		back, _ := hop.ParseResponse(resp)
		acct.Below(back.Spent) // retries made below come off this hop's budget too
		if attempt == attemptsPerHop {
			c.logf("%s: attempts used up; reports %d spent", name, acct.Spent())
			break
		}
		if c.protocol && !acct.TrySpend() {
			c.logf("%s: %d spent below, %d left, no retry; reports %d spent", name, back.Spent, acct.Remaining(), acct.Spent())
			break
		}
	}
	if c.protocol {
		hop.Response{Spent: acct.Spent()}.Write(out)
	}
	return false, out
}

func (c *chain) logf(format string, args ...any) {
	if c.trace {
		fmt.Printf(format+"\n", args...)
	}
}

// Three layers that each make three attempts send 3×3×3 = 27 requests to a
// leaf that is down (docs/why.md, section 2). With the hop protocol the retry budget the
// edge sets travels with the request, and the retries spent below travel
// back: B retries twice, and A and the edge find the budget spent.
func Example() {
	without := &chain{hops: []string{"edge", "A", "B"}, budget: 2}
	without.serve(0, http.Header{})

	with := &chain{hops: []string{"edge", "A", "B"}, budget: 2, protocol: true, trace: true}
	with.serve(0, http.Header{}) // the client sends no hop headers

	fmt.Printf("the leaf saw %d attempts without the protocol, %d with a budget of 2\n", without.leafSaw, with.leafSaw)
	// Output:
	// edge → A: attempt 1, budget 2
	// A → B: attempt 1, budget 2
	// B → leaf: attempt 1, budget 2
	// B → leaf: attempt 2, budget 1
	// B → leaf: attempt 3, budget 0
	// B: attempts used up; reports 2 spent
	// A: 2 spent below, 0 left, no retry; reports 2 spent
	// edge: 2 spent below, 0 left, no retry; reports 2 spent
	// the leaf saw 27 attempts without the protocol, 3 with a budget of 2
}

// A malformed header is reported, and read as absent: the hop falls back to
// its own budget, as it would for a peer that does not speak the protocol.
func ExampleParseRequest() {
	h := http.Header{}
	h.Set(hop.HeaderBudget, "1e3")
	h.Set(hop.HeaderDeadline, "2950")
	h.Set(hop.HeaderAttempt, "2")

	req, err := hop.ParseRequest(h)
	fmt.Println(err)
	fmt.Printf("budget %v (carried: %v), deadline %v, attempt %d\n", req.Budget, req.HasBudget, req.Deadline, req.Attempt)
	// Output:
	// hop: Recoil-Retry-Budget "1e3": invalid syntax, want decimal digits only; ignored
	// budget 0 (carried: false), deadline 2.95s, attempt 2
}

// Metadata lets the same code read and write gRPC metadata, whose keys are
// lower case, without importing gRPC: hop.Metadata(md) converts a
// metadata.MD in place.
func ExampleMetadata() {
	md := map[string][]string{} // a metadata.MD
	hop.Request{Budget: 2, HasBudget: true, Attempt: 1}.Write(hop.Metadata(md))
	fmt.Println(md)
	// Output:
	// map[recoil-attempt:[1] recoil-retry-budget:[2]]
}

// A server counts what it receives by attempt number, to see how much of
// its load is retries, and sheds retries first when overloaded.
func ExampleHistogram() {
	var h hop.Histogram
	for _, attempt := range []int{1, 1, 1, 2, 1, 3, 2, 1} {
		h.Observe(attempt)
	}
	fmt.Printf("%d requests, %d of them retries; first five buckets %v\n", h.Total(), h.Retries(), h.Snapshot()[:5])
	// Output:
	// 8 requests, 3 of them retries; first five buckets [5 2 1 0 0]
}

// An account is shared by everything one incoming request causes at this
// hop: every retry, of any call, spends from the same budget.
func ExampleNewAccount() {
	acct := hop.NewAccount(2) // the request carried Recoil-Retry-Budget: 2
	for _, dep := range []string{"inventory", "pricing", "inventory"} {
		fmt.Println("retry", dep+":", acct.TrySpend())
	}
	fmt.Println("spent", acct.Spent(), "left", acct.Remaining())
	fmt.Println("clamped:", hop.NewAccount(-5).Remaining(), hop.NewAccount(1_000_000).Remaining())
	// Output:
	// retry inventory: true
	// retry pricing: true
	// retry inventory: false
	// spent 2 left 0
	// clamped: 0 1000
}

// The server side of a transport puts the incoming request's account in
// the handler's context; code deep in the handler spends from it without
// being handed it.
func ExampleWithAccount() {
	handler := func(w http.ResponseWriter, r *http.Request) {
		req, _ := hop.ParseRequest(r.Header)
		ctx := hop.WithAccount(r.Context(), hop.NewAccount(req.Budget))
		fmt.Println("retry allowed:", retryLookup(ctx), retryLookup(ctx))
	}
	r := httptest.NewRequest(http.MethodGet, "/orders/7", nil)
	r.Header.Set(hop.HeaderBudget, "1")
	handler(httptest.NewRecorder(), r)
	// Output: retry allowed: true false
}

// retryLookup is a call deep inside a handler deciding whether it may retry.
func retryLookup(ctx context.Context) bool {
	return hop.AccountFrom(ctx).TrySpend()
}

// A caller with no account in its context is an edge: no upstream set a
// budget, so it starts one of its own.
func ExampleAccountFrom() {
	acct := hop.AccountFrom(context.Background())
	if acct == nil {
		acct = hop.NewAccount(3) // this service's own budget per request
	}
	fmt.Println(acct.Remaining())
	// Output: 3
}

// An outer retry loop records its attempt number; a client below it reads
// it, does not retry on its own (the outer loop does), and can forward the
// number to the server.
func ExampleWithAttempt() {
	for attempt := 1; attempt <= 2; attempt++ {
		ctx := hop.WithAttempt(context.Background(), attempt)
		fmt.Println(fetchInvoice(ctx))
	}
	fmt.Println(fetchInvoice(context.Background()))
	// Output:
	// single attempt, sent as attempt 1
	// single attempt, sent as attempt 2
	// retrying here
}

// fetchInvoice is a client that retries only when no layer above it does.
func fetchInvoice(ctx context.Context) string {
	if n := hop.AttemptFrom(ctx); n > 0 {
		return fmt.Sprintf("single attempt, sent as attempt %d", n)
	}
	return "retrying here"
}

// A server that sheds load says so, and says how many retries it already
// spent below: the caller charges those to its own account and does not
// retry.
func ExampleParseResponse() {
	h := http.Header{}
	h.Set(hop.HeaderSpent, "2")
	h.Set(hop.HeaderRetry, "no")

	resp, err := hop.ParseResponse(h)
	acct := hop.NewAccount(5)
	acct.Below(resp.Spent)
	fmt.Println(err, resp.NoRetry, acct.Remaining())

	h.Set(hop.HeaderRetry, "later")
	_, err = hop.ParseResponse(h)
	fmt.Println(err)
	// Output:
	// <nil> true 3
	// hop: Recoil-Retry "later": invalid syntax, want "no"; ignored
}

// A client that sends the outer loop's attempt number, so the server can
// count its retries (see Histogram); with no outer loop it sends nothing.
func ExampleAttemptFrom() {
	outgoing := func(ctx context.Context) http.Header {
		h := http.Header{}
		hop.Request{Attempt: hop.AttemptFrom(ctx)}.Write(h)
		return h
	}
	fmt.Println(outgoing(hop.WithAttempt(context.Background(), 3)))
	fmt.Println(outgoing(context.Background()))
	// Output:
	// map[Recoil-Attempt:[3]]
	// map[]
}
