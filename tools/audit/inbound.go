package audit

import "fmt"

// InboundDefault is what an Istio sidecar does on the inbound route from
// itself to its own app. Since Istio 1.24 (1.23 behind the flag) istiod
// gives that route, on a port that is not gRPC, a retry policy of two
// retries on reset-before-request: a request the app refused or reset
// before any of it was sent is tried again, up to 3 times in all
// (istiod's ENABLE_INBOUND_RETRY_POLICY, on by default; Istio 1.24's
// release notes, "Added retry policy for inbound requests"). The zero
// InboundDefault is DefaultInbound's.
type InboundDefault struct {
	// Off says the mesh runs without it: ENABLE_INBOUND_RETRY_POLICY=false,
	// Istio 1.23's default and the 1.23 compatibility profile of 1.24.
	Off bool `json:"off"`
	// Retries are the retries after the first attempt.
	Retries int `json:"retries"`
	// RetryOn are the retry conditions, in Envoy's words.
	RetryOn string `json:"retry_on"`
}

// DefaultInbound returns Istio's inbound retry policy since 1.24: two
// retries on reset-before-request.
func DefaultInbound() InboundDefault {
	return InboundDefault{Retries: 2, RetryOn: "reset-before-request"}
}

func (d InboundDefault) orDefault() InboundDefault {
	if !d.Off && d.Retries == 0 && d.RetryOn == "" {
		return DefaultInbound()
	}
	return d
}

// inboundRetry returns the retry layer of the callee's Istio sidecar on
// edge e — the inbound route from the sidecar to the callee's app — or
// nil when the callee has no Istio sidecar, the edge is gRPC (Istio gives
// a gRPC port's inbound route no retry policy), or d turns it off.
func inboundRetry(e *Edge, callee *Service, protocol string, d InboundDefault) *Retry {
	d = d.orDefault()
	if callee == nil || callee.Sidecar != SidecarIstio || protocol == ProtocolGRPC || d.Off || d.Retries <= 0 {
		return nil
	}
	r := &Retry{Kind: KindIstio, At: callee.At, Attempts: d.Retries + 1, Jitter: true,
		JitterNote: fmt.Sprintf("%s's sidecar, inbound: %d retries on %s, Envoy's default back-off, jittered, from 25ms", e.To, d.Retries, d.RetryOn),
		Budget:     Budget{Describe: "an inbound route has no retry budget", At: callee.At}}
	r.RetryOn, r.StatusCodes = splitConditions(d.RetryOn, true)
	r.setWaits()
	r.setProtocol(protocol)
	return r
}

// passedUp is the failure class the callers above a live sidecar see when
// the app behind it fails with class c: Envoy answers a reset or a refused
// connection to its upstream with a 503 of its own; an answer it passes
// on as it is.
func passedUp(c string) string {
	if c == ClassReset {
		return Class503
	}
	return c
}

// layerClass is a retry layer and the failure class it sees.
type layerClass struct {
	r *Retry
	c string
}

// pathLayers returns the retry layers along path p, callers first — each
// edge's own, then its sidecar's, which retries each of them —, each with
// the class it sees when the service at the path's end fails with class c.
// behind chooses the failure: the app failing behind its live sidecar,
// whose inbound retries (the last edge's Inbound) see c and the layers
// above passedUp(c); or, not behind, every layer seeing c and no inbound
// retry (the callee's pod gone, or no sidecar).
func pathLayers(p []*Edge, c string, behind bool) []layerClass {
	up := c
	last := p[len(p)-1]
	if behind && last.Inbound != nil {
		up = passedUp(c)
	}
	var ls []layerClass
	for _, e := range p {
		for _, r := range e.retries() {
			ls = append(ls, layerClass{r, up})
		}
	}
	if behind && last.Inbound != nil {
		ls = append(ls, layerClass{last.Inbound, c})
	}
	return ls
}

// scenarios returns the failures pathLayers tells apart for class c on
// paths ending at a service whose last edges are ps's: behind its live
// sidecar always (the only way a service answers 503, 500 or 429); and,
// for a reset into a service whose sidecar retries inbound, the pod gone
// as well, in which the layers above see the reset itself.
func scenarios(ps [][]*Edge, c string) []bool {
	if c == ClassReset && len(ps) > 0 && ps[0][len(ps[0])-1].Inbound != nil {
		return []bool{false, true}
	}
	return []bool{true}
}
