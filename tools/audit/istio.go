package audit

import (
	"fmt"
	"strings"

	"github.com/recoil-go/recoil/tools/internal/strictyaml"
)

// Istio's defaults for an http route of a VirtualService: with no retries
// field Istio gives the route 2 retries on connect-failure,
// refused-stream, unavailable, cancelled and retriable-status-codes; the
// route's timeout is disabled unless set; the waits are Envoy's default
// back-off, which is jittered.
const istioDefaultRetries = 2

var istioDefaultRetryOn = []string{"connect-failure", "refused-stream", "unavailable", "cancelled", "retriable-status-codes"}

// parseIstio reads the retry behaviour of one http route of an Istio
// VirtualService (one YAML document), chosen by sel (the route's name;
// it may be left out when spec.http has one route): timeout and retries
// (attempts — the retries after the first —, perTryTimeout, retryOn).
func parseIstio(file string, data []byte, sel selector) (Retry, error) {
	root, err := readYAML(file, data)
	if err != nil {
		return Retry{}, err
	}
	d := &doc{file: file}
	if root, err = d.mapping(root, ""); err != nil {
		return Retry{}, err
	}
	if k, err := d.field(root, "", "kind"); err != nil {
		return Retry{}, err
	} else if k != nil {
		s, err := d.str(k, "kind")
		if err != nil {
			return Retry{}, err
		}
		if s != "VirtualService" {
			return Retry{}, d.errorf(k, "kind", "%q: want a VirtualService", s)
		}
	}
	spec, err := d.field(root, "", "spec")
	if err != nil {
		return Retry{}, err
	}
	if spec == nil {
		return Retry{}, d.errorf(root, "spec", "missing: a VirtualService's routes are in spec.http")
	}
	if spec, err = d.mapping(spec, "spec"); err != nil {
		return Retry{}, err
	}
	h, err := d.field(spec, "spec", "http")
	if err != nil {
		return Retry{}, err
	}
	if h == nil {
		return Retry{}, d.errorf(spec, "spec.http", "missing: no http routes")
	}
	routes, err := d.list(h, "spec.http")
	if err != nil {
		return Retry{}, err
	}
	var names []string
	chosen, path := -1, ""
	for i, r := range routes {
		p := strictyaml.Index("spec.http", i)
		if routes[i], err = d.mapping(r, p); err != nil {
			return Retry{}, err
		}
		name := ""
		if n, err := d.field(routes[i], p, "name"); err != nil {
			return Retry{}, err
		} else if n != nil {
			if name, err = d.str(n, strictyaml.Join(p, "name")); err != nil {
				return Retry{}, err
			}
		}
		names = append(names, name)
		if sel.name != "" && name == sel.name && chosen < 0 {
			chosen, path = i, p
		}
	}
	switch {
	case len(routes) == 0:
		return Retry{}, d.errorf(h, "spec.http", "empty: no http routes")
	case sel.name == "" && len(routes) > 1:
		return Retry{}, sel.errorf("%s has %d http routes (%s): name one with route", file, len(routes), quoteList(names))
	case sel.name == "":
		chosen, path = 0, "spec.http[0]"
	case chosen < 0:
		return Retry{}, sel.errorf("%s has no http route named %q (it has %s)", file, sel.name, quoteList(names))
	}
	r := routes[chosen]
	out := Retry{Kind: KindIstio, At: d.at(r), AttemptsAt: Source{}, Attempts: istioDefaultRetries + 1,
		RetryOn: istioDefaultRetryOn, Jitter: true,
		JitterNote: "Istio sets no back-off: Envoy's default, jittered, from 25ms",
		Budget:     Budget{Describe: "a VirtualService has no retry budget", At: d.at(r)}}
	if t, err := d.field(r, path, "timeout"); err != nil {
		return out, err
	} else if t != nil {
		if out.Timeout, err = d.goDuration(t, strictyaml.Join(path, "timeout")); err != nil {
			return out, err
		}
		out.TimeoutAt = d.at(t)
	}
	rt, err := d.field(r, path, "retries")
	if err != nil {
		return out, err
	}
	if rt == nil {
		out.JitterNote += "; no retries field: Istio's default of 2 retries"
	} else {
		rp := strictyaml.Join(path, "retries")
		if rt, err = d.mapping(rt, rp); err != nil {
			return out, err
		}
		out.At = d.at(rt)
		a, err := d.field(rt, rp, "attempts")
		if err != nil {
			return out, err
		}
		if a == nil {
			return out, d.errorf(rt, strictyaml.Join(rp, "attempts"), "missing: Istio requires it in retries")
		}
		n, err := d.integer(a, strictyaml.Join(rp, "attempts"), 0, envoyMaxRetries)
		if err != nil {
			return out, err
		}
		out.Attempts, out.AttemptsAt = n+1, d.at(a)
		if pt, err := d.field(rt, rp, "perTryTimeout"); err != nil {
			return out, err
		} else if pt != nil {
			if out.PerTry, err = d.goDuration(pt, strictyaml.Join(rp, "perTryTimeout")); err != nil {
				return out, err
			}
			if out.PerTry > 0 && out.PerTry < 1e6 {
				return out, d.errorf(pt, strictyaml.Join(rp, "perTryTimeout"), "must be at least 1ms")
			}
			out.PerTryAt = d.at(pt)
		}
		if ro, err := d.field(rt, rp, "retryOn"); err != nil {
			return out, err
		} else if ro != nil {
			s, err := d.str(ro, strictyaml.Join(rp, "retryOn"))
			if err != nil {
				return out, err
			}
			out.RetryOn = nil
			for _, c := range strings.Split(s, ",") {
				if c = strings.TrimSpace(c); c != "" {
					out.RetryOn = append(out.RetryOn, c)
				}
			}
		}
	}
	for k := 1; k < out.Attempts; k++ {
		c := 10 * envoyDefaultBase
		if k < 4 {
			c = min(envoyDefaultBase*((1<<k)-1), c)
		}
		out.Waits = append(out.Waits, c)
	}
	if out.Attempts > 1 {
		out.Budget.Describe = fmt.Sprintf("%s; only a DestinationRule's connectionPool.http.maxRetries (retries in flight) limits them", out.Budget.Describe)
	}
	return out, nil
}
