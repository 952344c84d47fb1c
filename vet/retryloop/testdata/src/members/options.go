package members

import (
	"math/rand"
	"net/http"
	"time"
)

// statusPolicy is how often one status is retried, and whether to wait.
type statusPolicy struct {
	tries int
	wait  bool
}

// retryTable is filled by options, one status each: a map field made
// empty where the table is built.
type retryTable struct{ byStatus map[int]statusPolicy }

type tableOption func(*retryTable)

func withStatus(code, tries int, wait bool) tableOption {
	return func(t *retryTable) { t.byStatus[code] = statusPolicy{tries: tries, wait: wait} }
}

func newTable(opts ...tableOption) *retryTable {
	t := &retryTable{byStatus: make(map[int]statusPolicy)}
	for _, o := range opts {
		o(t)
	}
	return t
}

// tableTransport retries what its table lists.
type tableTransport struct {
	next  http.RoundTripper
	table *retryTable
}

func newThrottledTransport(next http.RoundTripper) *tableTransport {
	return &tableTransport{next: next, table: newTable(withStatus(http.StatusTooManyRequests, 5, true), withStatus(http.StatusServiceUnavailable, 5, true))}
}

// RoundTrip retries the table's 429 and 503 after a wait that grows with
// the count alone, deaf to the request's context.
//
// case: flag nojitter deafwait retryafter
func (t *tableTransport) RoundTrip(req *http.Request) (*http.Response, error) { // want RoundTrip:"remote=1 waits=true deaf=false jitter=1 durparam=0 retryafter=false bydefault=false ownretry"
	tries := make(map[int]int)
	for {
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		p, again := t.table.byStatus[resp.StatusCode]
		if !again || tries[resp.StatusCode] >= p.tries {
			return resp, nil
		}
		tries[resp.StatusCode]++
		if p.wait {
			time.Sleep(time.Duration(2*tries[resp.StatusCode]+5) * time.Second) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores req.Context\(\)` `retryafter: retry loop retries 429 and 503`
		}
	}
}

// gatewayTable is the same table given only gateway failures.
type gatewayTable struct{ byStatus map[int]bool }

func (g *gatewayTable) add(code int) { g.byStatus[code] = true }

func newGatewayTable() *gatewayTable {
	g := &gatewayTable{byStatus: map[int]bool{}}
	g.add(http.StatusBadGateway)
	g.add(http.StatusGatewayTimeout)
	return g
}

// sendGateway retries 502 and 504 alone, at a random moment that hears
// the request's context.
//
// case: clean
func sendGateway(rt http.RoundTripper, g *gatewayTable, req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := rt.RoundTrip(req)
		if err != nil || !g.byStatus[resp.StatusCode] || try == 3 {
			return resp, err
		}
		resp.Body.Close()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second << try)))):
		}
	}
}

var _, _ = newThrottledTransport, newGatewayTable
