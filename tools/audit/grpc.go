package audit

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
	"github.com/recoil-go/recoil/tools/sim/blast"
)

// grpcMaxAttempts is the cap gRPC clients put on maxAttempts (gRFC A6:
// "maxAttempts … values greater than 5 are treated as 5"; grpc-go's
// service config parsing does so).
const grpcMaxAttempts = 5

// parseGRPC reads the retry behaviour of one method of a gRPC service
// config, chosen by sel: "package.Service/Method" or "package.Service",
// matched as gRPC matches them — the method's own entry, else its
// service's, else the default entry (a name with no service). sel may be
// left out when the file has one methodConfig. A method no methodConfig
// applies to makes one attempt.
func parseGRPC(file string, data []byte, sel selector) (Retry, error) {
	routes, base, err := grpcFile(file, data)
	if err != nil {
		return Retry{}, err
	}
	m, err := grpcChoose(file, routes, sel)
	if err != nil || m == nil {
		return base, err
	}
	return m.Retry, nil
}

// grpcRoutes reads every methodConfig of a gRPC service config.
func grpcRoutes(file string, data []byte) ([]Route, error) {
	routes, _, err := grpcFile(file, data)
	if err == nil && len(routes) == 0 {
		err = &Error{File: file, Err: fmt.Errorf("no methodConfig: gRPC retries nothing")}
	}
	return routes, err
}

// grpcFile reads a gRPC service config (JSON, field names in any case, as
// grpc-go's decoding takes them): each methodConfig's timeout, retryPolicy
// (maxAttempts, initialBackoff, maxBackoff, backoffMultiplier,
// retryableStatusCodes) or hedgingPolicy (maxAttempts, hedgingDelay,
// nonFatalStatusCodes), with the top level's retryThrottling (maxTokens,
// tokenRatio); and base, what a method no methodConfig names gets. What
// gRPC would refuse is an error; maxAttempts above 5 is capped as gRPC
// caps it. Each Route's Hosts are the names it applies to: "svc/method",
// "svc/" or "/" (the default).
func grpcFile(file string, data []byte) (routes []Route, base Retry, err error) {
	root, err := readJSON(file, data)
	if err != nil {
		return nil, base, err
	}
	d := &doc{file: file, names: foldedNames}
	if root, err = d.mapping(root, ""); err != nil {
		return nil, base, err
	}
	base = Retry{Kind: KindGRPC, Attempts: 1, Propagates: true, At: d.at(root), AttemptsAt: d.at(root), Jitter: true,
		JitterNote: "no retryPolicy: gRPC does not retry", On: []string{}, Protocol: ProtocolGRPC}
	if err := grpcThrottling(d, root, &base); err != nil {
		return nil, base, err
	}
	mcs, err := d.field(root, "", "methodConfig")
	if err != nil || mcs == nil {
		return nil, base, err
	}
	list, err := d.list(mcs, "methodConfig")
	if err != nil {
		return nil, base, err
	}
	for i, mc := range list {
		p := strictyaml.Index("methodConfig", i)
		if mc, err = d.mapping(mc, p); err != nil {
			return nil, base, err
		}
		r := Route{Path: p}
		if r.Hosts, err = grpcNames(d, mc, p); err != nil {
			return nil, base, err
		}
		if len(r.Hosts) > 0 {
			r.Name = r.Hosts[0]
		}
		if r.Retry, err = grpcMethod(d, mc, p, base); err != nil {
			return nil, base, err
		}
		routes = append(routes, r)
	}
	return routes, base, nil
}

// grpcNames reads a methodConfig's names as "svc/method".
func grpcNames(d *doc, mc *yaml.Node, p string) ([]string, error) {
	names, err := d.field(mc, p, "name")
	if err != nil || names == nil {
		return nil, err
	}
	nl, err := d.list(names, strictyaml.Join(p, "name"))
	if err != nil {
		return nil, err
	}
	var out []string
	for j, nm := range nl {
		np := strictyaml.Index(strictyaml.Join(p, "name"), j)
		if nm, err = d.mapping(nm, np); err != nil {
			return nil, err
		}
		var svc, meth string
		for _, f := range []struct {
			key string
			v   *string
		}{{"service", &svc}, {"method", &meth}} {
			if v, err := d.field(nm, np, f.key); err != nil {
				return nil, err
			} else if v != nil {
				if *f.v, err = d.str(v, strictyaml.Join(np, f.key)); err != nil {
					return nil, err
				}
			}
		}
		if svc == "" && meth != "" {
			return nil, d.errorf(nm, np, "a method (%q) without a service: gRPC refuses it", meth)
		}
		out = append(out, svc+"/"+meth)
	}
	return out, nil
}

// grpcMethod reads one methodConfig mc at p; base carries the channel's
// throttling.
func grpcMethod(d *doc, mc *yaml.Node, p string, base Retry) (Retry, error) {
	out := base
	out.At, out.AttemptsAt = d.at(mc), d.at(mc)
	if t, err := d.field(mc, p, "timeout"); err != nil {
		return out, err
	} else if t != nil {
		if out.Timeout, err = d.protoDuration(t, strictyaml.Join(p, "timeout")); err != nil {
			return out, err
		}
		out.TimeoutAt = d.at(t)
	}
	rp, err := d.field(mc, p, "retryPolicy")
	if err != nil {
		return out, err
	}
	hp, err := d.field(mc, p, "hedgingPolicy")
	if err != nil {
		return out, err
	}
	switch {
	case rp != nil && hp != nil:
		return out, d.errorf(hp, strictyaml.Join(p, "hedgingPolicy"), "a methodConfig has a retryPolicy or a hedgingPolicy, not both (gRPC refuses the service config)")
	case rp != nil:
		err = grpcRetryPolicy(d, rp, strictyaml.Join(p, "retryPolicy"), &out)
	case hp != nil:
		err = grpcHedgingPolicy(d, hp, strictyaml.Join(p, "hedgingPolicy"), &out)
	}
	out.On = []string{}
	if out.Attempts > 1 {
		out.On = grpcClasses(out.RetryOn)
	}
	if out.Budget.Kind == "" {
		out.Budget.At = out.At
	}
	return out, err
}

// grpcChoose returns the methodConfig sel names, as gRPC matches one,
// or nil when none applies.
func grpcChoose(file string, methods []Route, sel selector) (*Route, error) {
	if sel.name == "" {
		switch len(methods) {
		case 0:
			return nil, nil
		case 1:
			return &methods[0], nil
		}
		for i := range methods {
			for _, n := range methods[i].Hosts {
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
			for _, n := range methods[i].Hosts {
				if n == want {
					return &methods[i], nil
				}
			}
		}
	}
	var all []string
	for _, m := range methods {
		for _, n := range m.Hosts {
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
	if n == nil && out.Timeout > 0 && !out.Hedged {
		out.Attempts = 0 // untilTimeout counts them once the backoff is read
		return nil
	}
	if n == nil {
		return d.errorf(p, ap, "missing: gRPC requires it (a googleapis service config may leave it out when it sets a timeout: its clients retry until the timeout)")
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

// untilTimeout counts the attempts of a retryPolicy with no maxAttempts,
// as googleapis' generated clients (GAPIC) read one: retries until the
// methodConfig's timeout, each after its backoff, so a failure that comes
// at once is tried as often as the waits fit in the timeout (at most
// 1000 times). grpc-go itself refuses such a policy.
func untilTimeout(out *Retry, base time.Duration, mult float64, maxWait time.Duration) {
	var t time.Duration
	out.Attempts = 1
	for out.Attempts < envoyMaxRetries {
		w := blast.Ceiling(out.Attempts, base, mult, maxWait)
		if t+w >= out.Timeout || w <= 0 {
			break
		}
		t += w
		out.Waits = append(out.Waits, w)
		out.Attempts++
	}
	out.Notes = append(out.Notes, fmt.Sprintf("no maxAttempts: googleapis' generated clients retry until the %v timeout — %d attempts when each fails at once (grpc-go refuses the policy)", out.Timeout, out.Attempts))
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
	if out.Attempts == 0 {
		untilTimeout(out, durs[0], mult, durs[1])
		return nil
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
