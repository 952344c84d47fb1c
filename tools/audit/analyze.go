package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/recoil-go/recoil/tools/sim/blast"
)

// Options are the figures an audit is priced at. The zero Options is not
// usable: start from DefaultOptions.
type Options struct {
	// FailureRate is the share of attempts the failing service fails, in
	// [0, 1], at which the amplification is priced (default 0.1).
	FailureRate float64 `json:"failure_rate"`
	// Headroom is each service's capacity as a multiple of the load it
	// sees when nothing fails, at least 1 (default 1.2: blast's 1,200/s
	// against 1,000/s).
	Headroom float64 `json:"headroom"`
	// Step is the failure-rate slider's step the tipping point is read on,
	// in (0, 1] (default blast.DefaultSliderStep, 0.5 %).
	Step float64 `json:"step"`
	// InFlight is the calls in flight on an edge at which a cap on
	// retries in flight (Envoy's circuit breaker max_retries, default 3)
	// is priced once a failure lasts: the cap lets InFlight of them retry
	// (default 100; at least 1).
	InFlight float64 `json:"in_flight"`
}

// DefaultOptions returns a 10 % failure rate, 20 % headroom, a 0.5 %
// slider and 100 calls in flight.
func DefaultOptions() Options {
	return Options{FailureRate: 0.1, Headroom: 1.2, Step: blast.DefaultSliderStep, InFlight: 100}
}

// MaxPaths bounds the paths from one entry point the audit enumerates:
// its paths to every service it reaches, added up.
const MaxPaths = 10_000

// maxHeadroom keeps capacity finite.
const maxHeadroom = 1e6

// ErrOptions is matched by every error Analyze returns for bad Options.
var ErrOptions = errors.New("audit: invalid options")

func (o Options) check() error {
	switch {
	case !(o.FailureRate >= 0 && o.FailureRate <= 1):
		return fmt.Errorf("%w: FailureRate %v: must be between 0 and 1", ErrOptions, o.FailureRate)
	case !(o.Headroom >= 1 && o.Headroom <= maxHeadroom):
		return fmt.Errorf("%w: Headroom %v: must be between 1 and %g", ErrOptions, o.Headroom, maxHeadroom)
	case !(o.Step > 0 && o.Step <= 1):
		return fmt.Errorf("%w: Step %v: must be more than 0 and at most 1", ErrOptions, o.Step)
	case !(o.InFlight >= 1 && o.InFlight <= 1e9):
		return fmt.Errorf("%w: InFlight %v: must be between 1 and 1e9", ErrOptions, o.InFlight)
	}
	return nil
}

// Report is what an audit finds. It is plain data, safe to copy and share.
type Report struct {
	Mesh    string  `json:"mesh"`
	File    string  `json:"file"`
	Options Options `json:"options"`
	// Edges are the mesh's edges with what each multiplies.
	Edges []EdgeReport `json:"edges"`
	// Entries are the figures per entry point.
	Entries []EntryReport `json:"entries"`
	// Findings are the edges that lack a budget, a deadline or jitter.
	Findings []Finding `json:"findings"`
}

// EdgeReport is one edge and its multipliers.
type EdgeReport struct {
	Edge
	// Attempts is the most attempts one call through the edge makes, its
	// sidecar's retries included, for the class retried most.
	Attempts int `json:"attempts"`
	// Sustained is the attempts a call makes once the edge's budget is
	// spent and every attempt fails (Attempts without a budget).
	Sustained float64 `json:"sustained"`
	// InboundAttempts is the attempts the callee's sidecar makes at its
	// app for each attempt that reaches it, for the class it retries most
	// (0 without an inbound retry policy); not in Attempts, since it
	// multiplies only a failure of the callee's own app (see Edge.Inbound).
	InboundAttempts int `json:"inbound_attempts,omitempty"`
}

// EntryReport is the audit of one entry point.
type EntryReport struct {
	Entry string `json:"entry"`
	// Services are the services the entry's requests reach, nearest
	// first, each with the attempts that reach it.
	Services []Reach `json:"services"`
	// Tipping is the lowest tipping point among the services: the failure
	// rate at which retries alone push one of them past its capacity;
	// TipsAt names it. PersistentTipping and PersistentTipsAt are the same
	// for a failure that lasts (see Reach.PersistentTipping).
	Tipping           blast.Tipping `json:"tipping"`
	TipsAt            string        `json:"tips_at,omitempty"`
	PersistentTipping blast.Tipping `json:"persistent_tipping"`
	PersistentTipsAt  string        `json:"persistent_tips_at,omitempty"`
	// Hold is the longest one request can hold the entry's caller.
	Hold Hold `json:"hold"`
}

// Reach is what one request at an entry point sends to one service.
type Reach struct {
	Service string `json:"service"`
	// Leaf says the service calls nothing.
	Leaf bool `json:"leaf"`
	// Paths is the number of paths from the entry to the service.
	Paths int `json:"paths"`
	// Class is the failure class the figures below are for: the one that
	// multiplies most (the first of Classes on a tie). Classes has the
	// attempts for each class.
	Class   string       `json:"class"`
	Classes []ClassReach `json:"classes"`
	// WorstCase is the most attempts one request can send it when every
	// attempt fails and every budget is full: the product of the attempts
	// along each path, added over the paths (3 × 3 × 3 = 27).
	WorstCase float64 `json:"worst_case"`
	// Bounded is WorstCase under the hop protocol's edge budgets, which
	// bound a request's retries wherever recoil policies carry it; equal
	// to WorstCase when no edge sets one.
	Bounded float64 `json:"bounded"`
	// Sustained is the attempts per request once the budgets have drained
	// under a failure that lasts: every attempt failing, a ratio budget
	// allowing its ratio, a token bucket none.
	Sustained float64 `json:"sustained"`
	// Amplification is the load the service sees, over its load when
	// nothing fails, when it fails Options.FailureRate of its attempts
	// (blast's layered model, budgets included, shedding above capacity).
	Amplification float64 `json:"amplification"`
	// Overloaded says that load exceeds the capacity Options.Headroom
	// gives it.
	Overloaded bool `json:"overloaded"`
	// Tipping is the failure rate of the service at which the load its
	// callers' retries send reaches its capacity, each attempt failing
	// independently (a retry may succeed).
	Tipping blast.Tipping `json:"tipping"`
	// Persistent is the load over the healthy load when a share
	// Options.FailureRate of the requests meet a failure that lasts —
	// every attempt they make fails — once the budgets have drained; and
	// PersistentTipping the share at which that load reaches capacity.
	Persistent        float64       `json:"persistent"`
	PersistentTipping blast.Tipping `json:"persistent_tipping"`
}

// ClassReach is what one request sends a service when it fails every
// attempt with one failure class.
type ClassReach struct {
	Class     string  `json:"class"`
	WorstCase float64 `json:"worst_case"`
	Bounded   float64 `json:"bounded"`
	Sustained float64 `json:"sustained"`
	// Behind says a reset is counted as the app failing behind its live
	// Istio sidecar, whose inbound retries multiply it and which answers
	// the callers above with a 503 — the way that sends more than the pod
	// gone, when the layers above see the reset itself.
	Behind bool `json:"behind_sidecar,omitempty"`
}

// behindFor says how class c is counted: behind the sidecar (see
// pathLayers) unless it is a reset counted with the pod gone.
func (rc *Reach) behindFor(c string) bool {
	for _, cr := range rc.Classes {
		if cr.Class == c && c == ClassReset {
			return cr.Behind
		}
	}
	return true
}

// Hold is the longest a request can hold its caller.
type Hold struct {
	// Unbounded says nothing bounds it: a service can hang and no
	// timeout on the way stops the wait.
	Unbounded bool `json:"unbounded"`
	// Duration is the bound, when there is one.
	Duration time.Duration `json:"-"`
	// Path is the slowest path, entry first.
	Path []string `json:"path"`
	// BoundBy is what bounds it at the top: a timeout and where it is
	// written (empty when Unbounded).
	BoundBy string `json:"bound_by,omitempty"`
	// Why says, when Unbounded, what can hang.
	Why string `json:"why,omitempty"`
}

// MarshalJSON writes Duration as hold_ms (null when unbounded), the
// convention of every recoil -json output.
func (h Hold) MarshalJSON() ([]byte, error) {
	type fields Hold
	var ms *float64
	if !h.Unbounded {
		v := h.Duration.Seconds() * 1e3
		ms = &v
	}
	return json.Marshal(struct {
		fields
		HoldMS *float64 `json:"hold_ms"`
	}{fields(h), ms})
}

// Checks a Finding names.
const (
	CheckBudget   = "no-budget"   // retries that nothing bounds over time
	CheckDeadline = "no-deadline" // a call that nothing bounds in time
	CheckJitter   = "no-jitter"   // retries at the same moment on every caller
	CheckCapped   = "capped"      // a configuration asking for more than the client does
	CheckTimeouts = "timeout-cut" // per-try timeouts × attempts beyond the call's timeout
)

// Finding is a problem with one edge, at the line of the configuration
// that has it (or should).
type Finding struct {
	Check   string `json:"check"`
	Edge    string `json:"edge"`
	At      Source `json:"at"`
	Message string `json:"message"`
}

// String returns "file:line: check: edge: message".
func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: %s: %s", f.At, f.Check, f.Edge, f.Message)
}

// Analyze audits m at the figures o gives.
func Analyze(m *Mesh, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	r := &Report{Mesh: m.Name, File: m.File, Options: o, Entries: []EntryReport{}, Findings: []Finding{}}
	for _, e := range m.Edges {
		er := EdgeReport{Edge: e}
		for _, c := range Classes {
			a, s := 1, 1.0
			for _, rt := range e.retries() {
				a *= rt.AttemptsFor(c)
				s *= rt.sustained(c, o.InFlight)
			}
			er.Attempts, er.Sustained = max(er.Attempts, a), math.Max(er.Sustained, s)
			if e.Inbound != nil {
				er.InboundAttempts = max(er.InboundAttempts, e.Inbound.AttemptsFor(c))
			}
		}
		r.Edges = append(r.Edges, er)
		r.Findings = append(r.Findings, findings(&e)...)
	}
	out := m.outEdges()
	holds := map[string]hold{}
	for _, entry := range m.Entries {
		er, err := analyzeEntry(m, out, entry, o)
		if err != nil {
			return nil, err
		}
		h := m.hold(out, holds, entry)
		er.Hold = Hold{Unbounded: math.IsInf(h.s, 1), Path: h.path, Why: h.why}
		if !er.Hold.Unbounded {
			er.Hold.Duration = time.Duration(math.Round(h.s * 1e9))
			er.Hold.BoundBy = h.by
		}
		r.Entries = append(r.Entries, er)
	}
	return r, nil
}

// analyzeEntry enumerates the paths from entry and prices each service
// they reach.
func analyzeEntry(m *Mesh, out map[string][]int, entry string, o Options) (EntryReport, error) {
	er := EntryReport{Entry: entry, Services: []Reach{}, Tipping: blast.Tipping{Step: o.Step}, PersistentTipping: blast.Tipping{Step: o.Step}}
	paths, order, err := m.paths(out, entry)
	if err != nil {
		return er, err
	}
	for _, s := range order {
		rc := Reach{Service: s, Leaf: len(out[s]) == 0, Paths: len(paths[s])}
		if err := rc.count(paths[s], o); err != nil {
			return er, overflow(m, entry, s)
		}
		if err := rc.price(paths[s], o); err != nil {
			return er, overflow(m, entry, s)
		}
		if rc.Tipping.Exists && (!er.Tipping.Exists || rc.Tipping.Exact < er.Tipping.Exact) {
			er.Tipping, er.TipsAt = rc.Tipping, s
		}
		if rc.PersistentTipping.Exists && (!er.PersistentTipping.Exists || rc.PersistentTipping.Exact < er.PersistentTipping.Exact) {
			er.PersistentTipping, er.PersistentTipsAt = rc.PersistentTipping, s
		}
		er.Services = append(er.Services, rc)
	}
	return er, nil
}

// errOverflow marks a figure past a float64.
var errOverflow = errors.New("overflow")

func overflow(m *Mesh, entry, s string) error {
	return &Error{File: m.File, Field: "edges", Err: fmt.Errorf("the attempts one request at %s can send %s overflow a float64 (above 1e308): the mesh multiplies past any figure", entry, s)}
}

func finite(xs ...float64) error {
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return errOverflow
		}
	}
	return nil
}

// paths returns every path from entry to each service it reaches, and
// the services nearest first: by the shortest path's length, then by
// first reached.
func (m *Mesh) paths(out map[string][]int, entry string) (map[string][][]*Edge, []string, error) {
	paths := map[string][][]*Edge{}
	var order []string
	count := 0
	var walk func(s string, path []*Edge) error
	walk = func(s string, path []*Edge) error {
		for _, i := range out[s] {
			e := &m.Edges[i]
			p := append(path[:len(path):len(path)], e)
			if count++; count > MaxPaths {
				return &Error{File: m.File, Field: "entries", Err: fmt.Errorf("more than %d paths from entry %s to the services it reaches: the audit prices every path, and cannot price these", MaxPaths, entry)}
			}
			if _, seen := paths[e.To]; !seen {
				order = append(order, e.To)
			}
			paths[e.To] = append(paths[e.To], p)
			if err := walk(e.To, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(entry, nil); err != nil {
		return nil, nil, err
	}
	depth := func(s string) int {
		d := math.MaxInt
		for _, p := range paths[s] {
			d = min(d, len(p))
		}
		return d
	}
	stableSort(order, func(a, b string) bool { return depth(a) < depth(b) })
	return paths, order, nil
}

// count sets the attempts one request sends over paths ps for each
// failure class, and the worst class's as rc's figures. A class that
// fails two ways (a reset behind a sidecar that retries it inbound, or
// with the pod gone) is counted the way that sends more.
func (rc *Reach) count(ps [][]*Edge, o Options) error {
	for _, c := range Classes {
		var cr ClassReach
		ways := scenarios(ps, c)
		for i, behind := range ways {
			sc := ClassReach{Class: c, Behind: behind && len(ways) > 1}
			for _, p := range ps {
				ls := pathLayers(p, c, behind)
				sc.WorstCase += reachAll(ls, false, false, o.InFlight)
				sc.Bounded += reachAll(ls, false, true, o.InFlight)
				sc.Sustained += reachAll(ls, true, true, o.InFlight)
			}
			if err := finite(sc.WorstCase, sc.Bounded, sc.Sustained); err != nil {
				return err
			}
			if i == 0 || sc.WorstCase > cr.WorstCase {
				cr = sc
			}
		}
		if rc.Class == "" || cr.WorstCase > rc.WorstCase || (cr.WorstCase == rc.WorstCase && cr.Sustained > rc.Sustained) {
			rc.Class, rc.WorstCase, rc.Bounded, rc.Sustained = c, cr.WorstCase, cr.Bounded, cr.Sustained
		}
		rc.Classes = append(rc.Classes, cr)
	}
	return nil
}

// price sets the amplification and tipping points of the worst class
// over paths ps, with blast's layered models.
func (rc *Reach) price(ps [][]*Edge, o Options) error {
	var layered, persistent [][]blast.Layer
	for _, p := range ps {
		ls := pathLayers(p, rc.Class, rc.behindFor(rc.Class))
		layered = append(layered, layers(ls, o.InFlight))
		persistent = append(persistent, persistentLayers(ls, o.InFlight))
	}
	healthy := float64(len(ps))
	capacity := o.Headroom * healthy
	load := blast.StackLoad(1, capacity, o.FailureRate, layered)
	rc.Amplification = load / healthy
	rc.Overloaded = load > capacity*(1+1e-12)
	rc.Tipping = blast.StackTippingPoint(1, capacity, layered, o.Step)
	rc.Persistent = blast.PersistentLoad(1, o.FailureRate, persistent) / healthy
	rc.PersistentTipping = blast.PersistentTippingPoint(1, capacity, persistent, o.Step)
	return finite(rc.Amplification, rc.Persistent)
}

func stableSort(xs []string, less func(a, b string) bool) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && less(xs[j], xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func layers(ls []layerClass, inFlight float64) []blast.Layer {
	out := make([]blast.Layer, len(ls))
	for i, l := range ls {
		out[i] = l.r.layer(l.c, inFlight)
	}
	return out
}

// hopRun returns the end of the run of recoil layers that ls[i] begins
// and whose hop budget bounds it, or i+1 if ls[i] sets none.
func hopRun(ls []layerClass, i int) int {
	j := i + 1
	if ls[i].r.Kind == KindRecoil && ls[i].r.Hop > 0 {
		for j < len(ls) && ls[j].r.Kind == KindRecoil {
			j++
		}
	}
	return j
}

// persistentLayers returns the layers ls for blast's persistent model —
// counts, not rates: in a failure that lasts, backoff delays retries but
// every one arrives —
// each run of recoil layers a hop budget bounds folded into one layer that
// makes, when every attempt fails, what the run can send: the smaller of
// its product and 1 + the budget.
func persistentLayers(ls []layerClass, inFlight float64) []blast.Layer {
	var out []blast.Layer
	for i := 0; i < len(ls); {
		j := hopRun(ls, i)
		if j == i+1 {
			out = append(out, ls[i].r.countLayer(ls[i].c, inFlight))
			i = j
			continue
		}
		v := reachAll(ls[i:j], true, true, inFlight)
		l := blast.Layer{Retries: int(math.Ceil(v-1e-9)) - 1}
		if frac := v - math.Floor(v+1e-9); frac > 1e-9 {
			l.RetryRatio = v - 1
		}
		out = append(out, l)
		i = j
	}
	return out
}

// reachAll returns the attempts that reach the end of layers ls for one
// request at their start when every attempt fails, each layer seeing its
// class: with budgets drained (budgets) or full, and with the hop
// protocol's bound (hop) or without. A run of recoil layers whose first
// sets a hop budget B shares one account: the run sends at most 1 + B
// attempts to its end for each call into it.
func reachAll(ls []layerClass, budgets, hop bool, inFlight float64) float64 {
	total := 1.0
	for i := 0; i < len(ls); {
		j := i + 1
		if hop {
			j = hopRun(ls, i)
		}
		seg := make([]blast.Layer, 0, j-i)
		for _, l := range ls[i:j] {
			cl := l.r.countLayer(l.c, inFlight)
			if !budgets {
				cl.RetryRatio, cl.ThrottleRatio, cl.SuccessRatio = 0, 0, 0
			}
			seg = append(seg, cl)
		}
		a, _ := blast.Reaching(seg, 1)
		if hop && ls[i].r.Kind == KindRecoil && ls[i].r.Hop > 0 {
			a = math.Min(a, float64(1+ls[i].r.Hop))
		}
		total *= a
		i = j
	}
	return total
}

// Summary returns the figures of the service reached last with the most
// attempts: the leaf a storm lands on.
func (er *EntryReport) Summary() (Reach, bool) {
	var best Reach
	found := false
	for _, s := range er.Services {
		if !found || s.WorstCase > best.WorstCase {
			best, found = s, true
		}
	}
	return best, found
}
