package gateway

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/recoil-go/recoil/idempotency"
)

// chargeCounts counts the charge route's side effects.
type chargeCounts struct {
	perRequest keyed         // charges per logical request (in Attempts)
	effects    atomic.Uint64 // charges made
	duplicates atomic.Uint64 // charges beyond the first of their logical request
	dropped    atomic.Uint64 // connections dropped after a charge
	handler    http.Handler  // the charge, behind the idempotency middleware if asked
}

// ChargeStats is what the charge route counted: a plain value. Its JSON
// form is the "charges" object of /stats.
type ChargeStats struct {
	// Path is the charge route's path.
	Path string `json:"path"`
	// Idempotency reports whether the route honours Idempotency-Key.
	Idempotency bool `json:"idempotency"`
	// Effects counts the charges made: the side effect, once per run of
	// the charge.
	Effects uint64 `json:"effects"`
	// Duplicates counts the charges beyond the first of their logical
	// request (the request header's value, or its idempotency key): the
	// double effects. Charges of attempts without either are in Effects
	// only.
	Duplicates uint64 `json:"duplicates"`
	// Doubled counts the logical requests charged more than once.
	Doubled int `json:"requests_charged_more_than_once"`
	// Dropped counts the connections dropped after a charge, before the
	// answer (Charge.DropRate).
	Dropped uint64 `json:"dropped_after_charge"`
}

func (g *Gateway) initCharges() {
	g.charges.perRequest.init(g.cfg.MaxKeys)
	h := http.Handler(http.HandlerFunc(g.charge))
	if g.cfg.Charge.Idempotency {
		// The config is valid, so the middleware's is too.
		h, _ = idempotency.NewMiddleware(h, idempotency.Config{Scope: idempotency.ScopeHeader(g.cfg.ClientHeader)})
	}
	g.charges.handler = h
}

var chargeType = []string{"application/json"}

// charge makes one charge, counts it against its logical request, and
// answers with it.
func (g *Gateway) charge(w http.ResponseWriter, r *http.Request) {
	c := &g.charges
	n := c.effects.Add(1)
	if id := g.requestID(r.Header); id != "" && c.perRequest.add(id, true, 0) > 1 {
		c.duplicates.Add(1)
	}
	w.Header()["Content-Type"] = chargeType
	_, _ = w.Write([]byte(`{"id":"ch_` + strconv.FormatUint(n, 10) + `","object":"charge","status":"succeeded"}`))
}

// serveCharge runs the charge route for an attempt the faults let
// through, and drops the connection after the charge when d says so.
func (g *Gateway) serveCharge(w http.ResponseWriter, r *http.Request, d decision) {
	if !d.drop {
		g.charges.handler.ServeHTTP(w, r)
		return
	}
	g.charges.handler.ServeHTTP(discardWriter{h: http.Header{}}, r)
	g.charges.dropped.Add(1)
	panic(http.ErrAbortHandler) // the answer is lost: the client sees the connection end
}

// discardWriter is a ResponseWriter whose answer goes nowhere.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d discardWriter) WriteHeader(int)             {}

// chargeStats returns what the charge route counted.
func (g *Gateway) chargeStats() ChargeStats {
	c := &g.charges
	s := ChargeStats{Path: g.cfg.Charge.Path, Idempotency: g.cfg.Charge.Idempotency,
		Effects: c.effects.Load(), Duplicates: c.duplicates.Load(), Dropped: c.dropped.Load()}
	c.perRequest.each(func(_ string, e KeyStats) {
		if e.Attempts > 1 {
			s.Doubled++
		}
	})
	return s
}
