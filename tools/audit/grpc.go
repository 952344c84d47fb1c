package audit

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/internal/strictyaml"
)

// grpcMaxAttempts is the cap gRPC clients put on maxAttempts (gRFC A6:
// "maxAttempts … values greater than 5 are treated as 5"; grpc-go's
// service config parsing does so).
const grpcMaxAttempts = 5

// grpcMethod is one methodConfig with the names it applies to.
type grpcMethod struct {
	n     *yaml.Node
	path  string
	names []string // "svc/method", "svc/" or "/" (the default)
}

// parseGRPC reads the retry behaviour of one method of a gRPC service
// config (JSON, field names in lowerCamelCase as gRPC writes them), chosen
// by sel: "package.Service/Method" or "package.Service", matched as gRPC
// matches them — the method's own entry, else its service's, else the
// default entry (a name with no service). sel may be left out when the
// file has one methodConfig. From the methodConfig it reads timeout,
// retryPolicy (maxAttempts, initialBackoff, maxBackoff, backoffMultiplier,
// retryableStatusCodes) or hedgingPolicy (maxAttempts, hedgingDelay,
// nonFatalStatusCodes), and from the top level retryThrottling (maxTokens,
// tokenRatio). What gRPC would refuse is an error; maxAttempts above 5 is
// capped as gRPC caps it.
func parseGRPC(file string, data []byte, sel selector) (Retry, error) {
	root, err := readJSON(file, data)
	if err != nil {
		return Retry{}, err
	}
	d := &doc{file: file}
	if root, err = d.mapping(root, ""); err != nil {
		return Retry{}, err
	}
	mcs, err := d.field(root, "", "methodConfig")
	if err != nil {
		return Retry{}, err
	}
	var methods []grpcMethod
	if mcs != nil {
		list, err := d.list(mcs, "methodConfig")
		if err != nil {
			return Retry{}, err
		}
		for i, mc := range list {
			p := strictyaml.Index("methodConfig", i)
			if mc, err = d.mapping(mc, p); err != nil {
				return Retry{}, err
			}
			m := grpcMethod{n: mc, path: p}
			if names, err := d.field(mc, p, "name"); err != nil {
				return Retry{}, err
			} else if names != nil {
				nl, err := d.list(names, strictyaml.Join(p, "name"))
				if err != nil {
					return Retry{}, err
				}
				for j, nm := range nl {
					np := strictyaml.Index(strictyaml.Join(p, "name"), j)
					if nm, err = d.mapping(nm, np); err != nil {
						return Retry{}, err
					}
					var svc, meth string
					for _, f := range []struct {
						key string
						v   *string
					}{{"service", &svc}, {"method", &meth}} {
						if v, err := d.field(nm, np, f.key); err != nil {
							return Retry{}, err
						} else if v != nil {
							if *f.v, err = d.str(v, strictyaml.Join(np, f.key)); err != nil {
								return Retry{}, err
							}
						}
					}
					if svc == "" && meth != "" {
						return Retry{}, d.errorf(nm, np, "a method (%q) without a service: gRPC refuses it", meth)
					}
					m.names = append(m.names, svc+"/"+meth)
				}
			}
			methods = append(methods, m)
		}
	}
	m, err := grpcChoose(file, methods, sel)
	if err != nil {
		return Retry{}, err
	}
	out := Retry{Kind: KindGRPC, Attempts: 1, Propagates: true, At: d.at(root), AttemptsAt: d.at(root), Jitter: true,
		JitterNote: "no retryPolicy: gRPC does not retry"}
	if m == nil {
		return out, grpcThrottling(d, root, &out)
	}
	out.At, out.AttemptsAt = d.at(m.n), d.at(m.n)
	if t, err := d.field(m.n, m.path, "timeout"); err != nil {
		return out, err
	} else if t != nil {
		if out.Timeout, err = d.protoDuration(t, strictyaml.Join(m.path, "timeout")); err != nil {
			return out, err
		}
		out.TimeoutAt = d.at(t)
	}
	rp, err := d.field(m.n, m.path, "retryPolicy")
	if err != nil {
		return out, err
	}
	hp, err := d.field(m.n, m.path, "hedgingPolicy")
	if err != nil {
		return out, err
	}
	switch {
	case rp != nil && hp != nil:
		return out, d.errorf(hp, strictyaml.Join(m.path, "hedgingPolicy"), "a methodConfig has a retryPolicy or a hedgingPolicy, not both (gRPC refuses the service config)")
	case rp != nil:
		if err := grpcRetryPolicy(d, rp, strictyaml.Join(m.path, "retryPolicy"), &out); err != nil {
			return out, err
		}
	case hp != nil:
		if err := grpcHedgingPolicy(d, hp, strictyaml.Join(m.path, "hedgingPolicy"), &out); err != nil {
			return out, err
		}
	}
	return out, grpcThrottling(d, root, &out)
}

// grpcChoose returns the methodConfig sel names, as gRPC matches one.
func grpcChoose(file string, methods []grpcMethod, sel selector) (*grpcMethod, error) {
	if sel.name == "" {
		switch len(methods) {
		case 0:
			return nil, nil
		case 1:
			return &methods[0], nil
		}
		for i := range methods {
			for _, n := range methods[i].names {
				if n == "/" {
					return &methods[i], nil
				}
			}
		}
		return nil, sel.errorf("%s has %d methodConfigs and no default: name a method (package.Service/Method) with method", file, len(methods))
	}
	svc, meth, _ := strings.Cut(sel.name, "/")
	if svc == "" {
		return nil, sel.errorf("%q: want package.Service/Method or package.Service", sel.name)
	}
	for _, want := range []string{svc + "/" + meth, svc + "/", "/"} {
		for i := range methods {
			for _, n := range methods[i].names {
				if n == want {
					return &methods[i], nil
				}
			}
		}
	}
	var all []string
	for _, m := range methods {
		for _, n := range m.names {
			switch {
			case n == "/":
				n = "the default"
			case strings.HasSuffix(n, "/"):
				n = strings.TrimSuffix(n, "/")
			}
			all = append(all, n)
		}
	}
	if len(all) == 0 {
		all = []string{"no names"}
	}
	return nil, sel.errorf("no methodConfig of %s applies to %q (it names %s)", file, sel.name, strings.Join(all, ", "))
}

// grpcAttempts reads maxAttempts: at least 2, capped at 5.
func grpcAttempts(d *doc, p *yaml.Node, path string, out *Retry) error {
	n, err := d.field(p, path, "maxAttempts")
	if err != nil {
		return err
	}
	ap := strictyaml.Join(path, "maxAttempts")
	if n == nil {
		return d.errorf(p, ap, "missing: gRPC requires it")
	}
	a, err := d.integer(n, ap, math.MinInt32, math.MaxInt32)
	if err != nil {
		return err
	}
	if a < 2 {
		return d.errorf(n, ap, "%d: must be at least 2 (gRPC refuses the service config)", a)
	}
	out.AttemptsAt = d.at(n)
	out.Attempts = a
	if a > grpcMaxAttempts {
		out.Attempts, out.Capped, out.Asked = grpcMaxAttempts, true, a
	}
	return nil
}

func grpcCodes(d *doc, p *yaml.Node, path, key string, required bool, out *Retry) error {
	c, err := d.field(p, path, key)
	if err != nil {
		return err
	}
	cp := strictyaml.Join(path, key)
	if c == nil {
		if required {
			return d.errorf(p, cp, "missing: gRPC requires at least one status code")
		}
		return nil
	}
	list, err := d.list(c, cp)
	if err != nil {
		return err
	}
	if required && len(list) == 0 {
		return d.errorf(c, cp, "empty: gRPC requires at least one status code")
	}
	for i, code := range list {
		s, err := d.scalar(code, strictyaml.Index(cp, i), "a status code such as UNAVAILABLE or 14")
		if err != nil {
			return err
		}
		out.RetryOn = append(out.RetryOn, s)
	}
	return nil
}

func grpcRetryPolicy(d *doc, rp *yaml.Node, path string, out *Retry) error {
	rp, err := d.mapping(rp, path)
	if err != nil {
		return err
	}
	out.At = d.at(rp)
	out.JitterAt = d.at(rp)
	out.JitterNote = "gRPC waits a random time up to the current backoff (gRFC A6)"
	if err := grpcAttempts(d, rp, path, out); err != nil {
		return err
	}
	var durs [2]time.Duration
	for i, key := range []string{"initialBackoff", "maxBackoff"} {
		n, err := d.field(rp, path, key)
		if err != nil {
			return err
		}
		kp := strictyaml.Join(path, key)
		if n == nil {
			return d.errorf(rp, kp, "missing: gRPC requires it")
		}
		if durs[i], err = d.protoDuration(n, kp); err != nil {
			return err
		}
		if durs[i] <= 0 {
			return d.errorf(n, kp, "must be greater than zero")
		}
	}
	n, err := d.field(rp, path, "backoffMultiplier")
	if err != nil {
		return err
	}
	mp := strictyaml.Join(path, "backoffMultiplier")
	if n == nil {
		return d.errorf(rp, mp, "missing: gRPC requires it")
	}
	mult, err := d.number(n, mp, 0, 1e6)
	if err != nil {
		return err
	}
	if mult <= 0 {
		return d.errorf(n, mp, "must be greater than zero")
	}
	if err := grpcCodes(d, rp, path, "retryableStatusCodes", true, out); err != nil {
		return err
	}
	if mult < 1 {
		mult = 1 // a shrinking backoff: the first ceiling bounds every wait
	}
	out.Waits = waitsCeiling(out.Attempts, durs[0], mult, durs[1])
	return nil
}

func grpcHedgingPolicy(d *doc, hp *yaml.Node, path string, out *Retry) error {
	hp, err := d.mapping(hp, path)
	if err != nil {
		return err
	}
	out.At = d.at(hp)
	out.Hedged = true
	out.JitterNote = "hedging: copies go hedgingDelay apart, whether or not the first fails"
	if err := grpcAttempts(d, hp, path, out); err != nil {
		return err
	}
	if n, err := d.field(hp, path, "hedgingDelay"); err != nil {
		return err
	} else if n != nil {
		if out.HedgeDelay, err = d.protoDuration(n, strictyaml.Join(path, "hedgingDelay")); err != nil {
			return err
		}
		out.JitterAt = d.at(n)
	}
	return grpcCodes(d, hp, path, "nonFatalStatusCodes", false, out)
}

// grpcThrottling reads retryThrottling, the channel's token bucket.
func grpcThrottling(d *doc, root *yaml.Node, out *Retry) error {
	rt, err := d.field(root, "", "retryThrottling")
	if err != nil {
		return err
	}
	if rt == nil {
		out.Budget.Describe = "the service config has no retryThrottling"
		out.Budget.At = out.At
		return nil
	}
	if rt, err = d.mapping(rt, "retryThrottling"); err != nil {
		return err
	}
	var vals [2]float64
	for i, f := range []struct {
		key    string
		lo, hi float64
	}{{"maxTokens", 0, 1000}, {"tokenRatio", 0, 1e6}} {
		n, err := d.field(rt, "retryThrottling", f.key)
		if err != nil {
			return err
		}
		kp := strictyaml.Join("retryThrottling", f.key)
		if n == nil {
			return d.errorf(rt, kp, "missing: gRPC requires it")
		}
		if vals[i], err = d.number(n, kp, f.lo, f.hi); err != nil {
			return err
		}
		if vals[i] <= 0 {
			return d.errorf(n, kp, "must be greater than zero")
		}
	}
	out.Budget = Budget{Kind: BudgetTokenBucket, ThrottleRatio: vals[1], At: d.at(rt),
		Describe: fmt.Sprintf("retryThrottling: %s tokens, %s back per success; retries stop at half", trimFloat(vals[0]), trimFloat(vals[1]))}
	return nil
}
