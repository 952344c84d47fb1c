package retryloop

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
)

// The retry libraries whose call sites are judged by what their options
// mean: the wait is inside the library, its duration decided by a value
// the caller builds (a Backoff, a DelayType option), which no fact of the
// library's own loop can describe.
const (
	goRetryPath = "github.com/sethvargo/go-retry"
	retryGoPath = "github.com/avast/retry-go"
	rican7Path  = "github.com/Rican7/retry"
	rican7Strat = rican7Path + "/strategy"
	kRetryPath  = "k8s.io/client-go/util/retry"
	kWaitPath   = "k8s.io/apimachinery/pkg/util/wait"
)

// What a library's schedule is made of.
const (
	schedUnknown = iota
	schedPure
	schedJitter
	// schedOnce is a single wait before the first attempt (Rican7's
	// strategy.Delay): deaf, but no retry's schedule
	schedOnce
)

// isModule reports whether path is root's package at some major version.
func isModule(path, root string) bool {
	return path == root || majorOf(path, root) > 1
}

// joinSched is what two ways of making a schedule give together: the same
// answer, or unknown.
func joinSched(a, b int) int {
	if a == b {
		return a
	}
	return schedUnknown
}

// joinSources is the schedule every one of srcs gives, as made reads it:
// the same answer from all, or unknown (as it is for no sources).
func joinSources(srcs []source, made func(source) int) int {
	if len(srcs) == 0 {
		return schedUnknown
	}
	out := made(srcs[0])
	for _, s := range srcs[1:] {
		out = joinSched(out, made(s))
	}
	return out
}

// source is an expression a value is made of, with the body it stands in.
type source struct {
	e    ast.Expr
	body *ast.BlockStmt
}

// sources follows e to what makes it: a local variable to the values body
// gives it, a call of one of the package's functions or methods to what
// its declaration returns. Anything else is its own source.
func (c *checker) sources(e ast.Expr, body *ast.BlockStmt, depth int) []source {
	e = ast.Unparen(e)
	if depth > 4 {
		return []source{{e, body}}
	}
	switch x := e.(type) {
	case *ast.Ident:
		v, ok := c.info.Uses[x].(*types.Var)
		if !ok || v.IsField() || isPkgVar(v) || body == nil {
			break
		}
		var out []source
		for _, rhs := range append(c.assignedIn(v, body), c.firstOfTuple(v, body)...) {
			out = append(out, c.sources(rhs, body, depth+1)...)
		}
		return out
	case *ast.CallExpr:
		if tv, ok := c.info.Types[x.Fun]; ok && tv.IsType() && types.IsInterface(tv.Type) && len(x.Args) == 1 {
			return c.sources(x.Args[0], body, depth+1) // backoff.BackOff(exp): the value converted
		}
		d := c.decls[c.callee(x)]
		if d == nil {
			break
		}
		var out []source
		ast.Inspect(d.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				if len(n.Results) > 0 {
					out = append(out, c.sources(n.Results[0], d.Body, depth+1)...)
				}
			}
			return true
		})
		return out
	}
	return []source{{e, body}}
}

// firstOfTuple returns the calls body takes v's value from as their first
// result (b, err := retry.NewConstant(d)).
func (c *checker) firstOfTuple(v *types.Var, body *ast.BlockStmt) []ast.Expr {
	var out []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 || len(as.Lhs) < 2 {
			return true
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok && c.objOf(id) == v {
			if _, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); ok {
				out = append(out, as.Rhs[0])
			}
		}
		return true
	})
	return out
}

// libCall is what a call that hands its work to a retry library gives
// the library: the schedule of its waits, the function it retries, and,
// for avast/retry-go, whether retry.Context gives the wait a context.
type libCall struct {
	sched  int
	remedy string
	work   ast.Expr
	// forwarded: a helper of this package called with a func parameter
	// of the caller's own as the work (a wrapper passing its caller's
	// function on), or a helper of this package whose own loop fixes the
	// schedule: the helper is reported where it is, once
	forwarded bool
	hears     bool
	retGo     bool
	// forever: only success ends it (retry-go with Attempts(0) and no
	// context, go-retry on context.Background with no cap, cenkalti's
	// Retry with a BackOff that never stops); foreverHow says why, where
	// the default words do not fit
	forever    bool
	foreverHow string
	// sleeps: the library waits with time.Sleep (Rican7's strategies,
	// client-go's retry through wait.ExponentialBackoff); sleepsWhere
	// says where, and sleepsFix what hears the context instead
	sleeps      bool
	sleepsWhere string
	sleepsFix   string
	// deafCtx: cenkalti/backoff before v5 waits on a context of its own,
	// its BackOff given none with WithContext, and the work does not stop
	// on a cancelled one
	deafCtx bool
	// polls: the work is a condition that may answer "not yet" on a
	// success too (apimachinery's ExponentialBackoff): it retries only
	// where it answers so on a failure
	polls bool
	// stop, when not empty, says the library retries every error the
	// work returns but one marked so (backoff.Permanent)
	stop string
}

// libCallOf reads a call that hands its work to a retry library:
// sethvargo/go-retry's Do with a backoff no WithJitter wraps, avast/
// retry-go's Do with a DelayType that adds no RandomDelay, client-go's
// RetryOnConflict and OnError with a wait.Backoff whose Jitter is zero;
// or a function of any package that hands one of its func parameters to
// such a call or retries it in a loop of its own with such waits (its
// fact's LibWork), unless the work handed is a literal that acts on this
// machine only.
func (c *checker) libCallOf(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) (libCall, bool) {
	callee := c.callee(call)
	if callee == nil || len(call.Args) == 0 {
		return libCall{}, false
	}
	if lc, ok := c.retrierCall(call, callee, decl); ok {
		return lc, true
	}
	if lc, ok := c.pkgzRepeaterCall(call, callee, decl); ok {
		return lc, true
	}
	if made := c.retryGoMade(call, callee, decl); made != nil {
		o := c.retryGoOptions(made, decl, fn)
		return libCall{sched: o.sched, work: made.Args[0], hears: o.hears, retGo: true,
			forever: o.forever && !o.hears && !o.callers,
			remedy:  "leave retry-go's default DelayType (BackOffDelay combined with RandomDelay) or combine yours with retry.RandomDelay"}, true
	}
	path, name, last := funcPath(callee), callee.Name(), call.Args[len(call.Args)-1]
	switch {
	case recvNamed(callee) != nil:
	case isModule(path, goRetryPath):
		return libCall{sched: c.goRetryCall(callee, call, decl, fn), work: last,
			forever: c.goRetryForever(callee, call, decl),
			remedy:  "wrap the backoff in retry.WithJitter or retry.WithJitterPercent"}, true
	case isModule(path, retryGoPath) && (name == "Do" || name == "DoWithData"):
		o := c.retryGoOptions(call, decl, fn)
		return libCall{sched: o.sched, work: call.Args[0], hears: o.hears, retGo: true,
			forever: o.forever && !o.hears && !o.callers,
			remedy:  "leave retry-go's default DelayType (BackOffDelay combined with RandomDelay) or combine yours with retry.RandomDelay"}, true
	case path == rican7Path && name == "Retry":
		sched, waits := c.rican7Retry(call)
		return libCall{sched: sched, work: call.Args[0], sleeps: waits,
			sleepsWhere: "in its strategies", sleepsFix: "wait in a select on %s.Done() instead",
			remedy: "use strategy.BackoffWithJitter"}, true
	case path == kRetryPath && (name == "RetryOnConflict" || name == "OnError"):
		return libCall{sched: c.backoffArg(call.Args[0], decl), work: last,
			sleeps:      c.backoffMayWait(call.Args[0], decl),
			sleepsWhere: "between attempts (wait.ExponentialBackoff)",
			sleepsFix:   "retry with wait.ExponentialBackoffWithContext(%s, …), which hears it",
			remedy:      "give the wait.Backoff a Jitter (retry.DefaultRetry's is 0.1)"}, true
	case path == kWaitPath && (name == "ExponentialBackoff" || name == "ExponentialBackoffWithContext"):
		b := call.Args[0]
		if name == "ExponentialBackoffWithContext" && len(call.Args) == 3 {
			b = call.Args[1]
		}
		return libCall{sched: c.backoffArg(b, decl), work: last, polls: true,
			remedy: "give the wait.Backoff a Jitter"}, true
	}
	if lc, ok := c.cenkaltiCall(call, callee, decl); ok {
		return lc, true
	}
	if f := c.fact(callee); f != nil && f.LibWork > 0 && f.LibWork <= len(call.Args) && !call.Ellipsis.IsValid() {
		work := call.Args[f.LibWork-1]
		if c.localWork(work) {
			return libCall{}, false
		}
		sched, remedy := schedPure, "jitter the waits "+callee.Name()+" makes between attempts"
		switch {
		case f.LibPolicy > 0:
			sched, remedy = c.policySched(call, callee, f.LibPolicy-1), "hand "+callee.Name()+" a policy that randomises its waits"
		case f.LibField != "":
			sched, remedy = c.heldSched(call, f.LibField, decl, fn), "build it with a policy that randomises its waits"
		}
		return libCall{sched: sched, work: work, forwarded: callee.Pkg() == c.pass.Pkg && (c.isParam(work) || f.OwnLoop),
			remedy: remedy}, true
	}
	return libCall{}, false
}

// libraryRetry reports a call that hands its work to a retry library
// whose waits have no jitter (nojitter), or to avast/retry-go without a
// retry.Context while a context is in scope (deafwait) or with no count
// and no context (unbounded), or to Rican7/retry's time.Sleep strategies
// while a context is in scope (deafwait).
func (c *checker) libraryRetry(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) {
	lc, ok := c.libCallOf(call, decl, fn)
	if !ok {
		return
	}
	if lc.polls {
		if _, ok := c.failureRound(lc.work, decl); !ok {
			return // a poll, not a retry
		}
	}
	if ctx := c.ctxName(call.Pos()); lc.retGo && lc.sched != schedUnknown && !lc.hears && ctx != "" {
		c.add(finding{check: CheckDeafWait, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s waits on a context of its own (context.Background) and cannot hear %s: the caller's cancellation and deadline go unheard; pass retry.Context(%s)", c.callName(call), ctx, ctx)})
	}
	if ctx := c.ctxName(call.Pos()); lc.deafCtx && ctx != "" {
		c.add(finding{check: CheckDeafWait, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s waits on a context of its own (its BackOff has no WithContext) and cannot hear %s: a cancelled caller keeps retrying until the backoff gives up; wrap the backoff in backoff.WithContext(b, %s)", c.callName(call), ctx, ctx)})
	}
	if ctx := c.ctxName(call.Pos()); lc.sleeps && ctx != "" {
		c.add(finding{check: CheckDeafWait, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s waits with time.Sleep %s and cannot hear %s: the caller's cancellation and deadline go unheard; "+lc.sleepsFix, c.callName(call), lc.sleepsWhere, ctx, ctx)})
	}
	if lc.forever {
		how := "(Attempts(0) or UntilSucceeded) with no context to stop it: bound the attempts, or pass retry.Context with a deadline"
		if !lc.retGo {
			how = "on context.Background with no WithMaxRetries or WithMaxDuration: bound the backoff, or pass a context with a deadline"
		}
		if lc.foreverHow != "" {
			how = lc.foreverHow
		}
		c.add(finding{check: CheckUnbounded, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s retries until it succeeds %s", c.callName(call), how)})
	}
	if lc.sched == schedPure && !lc.forwarded {
		c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s waits a constant or purely exponential schedule between attempts: clients that failed together retry together; %s, or use recoil", c.callName(call), lc.remedy)})
	}
}

// libWork is one more than the index of fn's parameter that a call in
// its body hands to a retry library with no jitter as the work to retry
// (retryx.Do(c, fn, retryIf) calling retry.Do(fn, opts…)), or 0.
func (c *checker) libWork(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) int {
	lc, ok := c.libCallOf(call, decl, fn)
	if !ok || lc.sched != schedPure || lc.polls {
		return 0
	}
	return c.workParam(lc.work, decl, fn)
}

// everyWork is one more than the index of fn's parameter that a call in
// its body hands, on any schedule, to a retry library that retries every
// error of the work but one marked so, and the mark; or 0.
func (c *checker) everyWork(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) (int, string) {
	lc, ok := c.libCallOf(call, decl, fn)
	if !ok || lc.stop == "" || lc.polls {
		return 0, ""
	}
	if i := c.workParam(lc.work, decl, fn); i > 0 {
		return i, lc.stop
	}
	return 0, ""
}

// workParam is one more than the index of fn's func parameter that work
// is — the parameter itself, or a local literal that only calls it
// (operation := func() (R, error) { return handler() }) — or 0.
func (c *checker) workParam(work ast.Expr, decl *ast.BlockStmt, fn *types.Func) int {
	if fn == nil {
		return 0
	}
	if lit := c.funcLitOf(work, decl); lit != nil {
		work = c.forwardedCall(lit)
	}
	id, ok := ast.Unparen(work).(*ast.Ident)
	if !ok {
		return 0
	}
	params := fn.Type().(*types.Signature).Params()
	for i := range params.Len() {
		if c.info.Uses[id] == params.At(i) {
			return i + 1
		}
	}
	return 0
}

// forwardedCall is the function a literal does nothing but call and hand
// back the results of, passing on only its own parameters (func() (R,
// error) { return handler() }), or nil: a literal that hands it values
// of its own (flush(0)) makes an attempt of its own.
func (c *checker) forwardedCall(lit *ast.FuncLit) ast.Expr {
	if len(lit.Body.List) != 1 {
		return nil
	}
	r, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return nil
	}
	call, ok := ast.Unparen(r.Results[0]).(*ast.CallExpr)
	if !ok {
		return nil
	}
	for _, a := range call.Args {
		id, ok := ast.Unparen(a).(*ast.Ident)
		if !ok {
			return nil
		}
		v, _ := c.info.Uses[id].(*types.Var)
		if v == nil || v.Pos() < lit.Type.Pos() || v.Pos() >= lit.Type.End() {
			return nil
		}
	}
	return call.Fun
}

// typeNameOf is the type a conversion's Fun names, or nil.
func (c *checker) typeNameOf(e ast.Expr) *types.TypeName {
	id := calleeIdent(e)
	if id == nil {
		return nil
	}
	tn, _ := c.info.Uses[id].(*types.TypeName)
	return tn
}

// litSchedule is the schedule a function literal's first results make:
// pure if every one is, jittered if one is randomised.
func (c *checker) litSchedule(e ast.Expr, body *ast.BlockStmt, fn *types.Func) int {
	lit, ok := ast.Unparen(e).(*ast.FuncLit)
	if !ok {
		return schedUnknown
	}
	all := purity{kind: pPure}
	n := 0
	ast.Inspect(lit.Body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(x.Results) > 0 {
				n++
				all = all.and(c.purity(x.Results[0], body, fn, 0))
			}
		}
		return true
	})
	switch {
	case n == 0:
		return schedUnknown
	case all.kind == pPure:
		return schedPure
	case all.kind == pRand:
		return schedJitter
	}
	return schedUnknown
}

// retryGoOpts is what an avast/retry-go call's options say.
type retryGoOpts struct {
	sched   int
	hears   bool // retry.Context gives the wait a context
	forever bool // Attempts(0) or UntilSucceeded: only success ends it
	callers bool // the caller's options are spread in too
}

// retryGoOptions reads the options of an avast/retry-go Do call: the
// schedule its DelayType gives (the default combines BackOffDelay with
// RandomDelay: jittered), whether retry.Context hands it a context, and
// whether Attempts(0) or UntilSucceeded leaves it no count. Options are
// followed through the slices they are spread from; a parameter's
// options are the caller's and leave the default to decide; an option of
// another package's making leaves the schedule unknown.
func (c *checker) retryGoOptions(call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) retryGoOpts {
	out := retryGoOpts{sched: schedJitter}
	var opts []source
	for i, a := range call.Args[1:] {
		if call.Ellipsis.IsValid() && i == len(call.Args)-2 {
			spread, ok := c.optionSlice(a, decl, 0, map[*types.Var]bool{}, &out.callers)
			if !ok {
				return retryGoOpts{}
			}
			opts = append(opts, spread...)
			continue
		}
		opts = append(opts, source{a, decl})
	}
	for _, o := range opts {
		oc, ok := o.e.(*ast.CallExpr)
		if !ok {
			return retryGoOpts{}
		}
		f := c.callee(oc)
		if f == nil || !isModule(funcPath(f), retryGoPath) {
			return retryGoOpts{}
		}
		switch f.Name() {
		case "Context":
			out.hears = true
		case "UntilSucceeded":
			out.forever = true
		case "Attempts":
			if len(oc.Args) == 1 {
				tv := c.info.Types[oc.Args[0]]
				out.forever = tv.Value != nil && constant.Sign(tv.Value) == 0
			}
		case "DelayType":
			if len(oc.Args) != 1 {
				return retryGoOpts{}
			}
			out.sched = c.retryGoDelay(oc.Args[0], o.body, fn, 0)
		}
	}
	return out
}

// optionSlice is the options a spread slice holds: the elements of the
// slice literals it is made of (a package variable's initializer among
// them, when nothing assigns it again) and what append adds to them; a
// parameter's (the caller's options) hold none the package chose.
func (c *checker) optionSlice(e ast.Expr, body *ast.BlockStmt, depth int, seen map[*types.Var]bool, callers *bool) ([]source, bool) {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if v, ok := c.info.Uses[id].(*types.Var); ok && (c.params[v] || seen[v]) {
			// the caller's options, or the slice append grows
			*callers = *callers || c.params[v]
			return nil, true
		} else if ok {
			seen[v] = true
			if init, isInit := c.pkgVars[v]; isInit && isPkgVar(v) && !c.pkgAssigned[v] {
				// var defaultRetryOpts = []retry.Option{…}: the package's own
				// options, never assigned again
				return c.optionSlice(init, nil, depth+1, seen, callers)
			}
		}
	}
	srcs := c.sources(e, body, depth)
	if len(srcs) == 0 || depth > 6 {
		return nil, false
	}
	var out []source
	for _, s := range srcs {
		switch x := s.e.(type) {
		case *ast.CompositeLit:
			for _, el := range x.Elts {
				out = append(out, source{ast.Unparen(el), s.body})
			}
		case *ast.CallExpr:
			if id, ok := ast.Unparen(x.Fun).(*ast.Ident); !ok || id.Name != "append" || len(x.Args) == 0 {
				return nil, false
			}
			for i, a := range x.Args {
				if i == 0 || (x.Ellipsis.IsValid() && i == len(x.Args)-1) {
					more, ok := c.optionSlice(a, s.body, depth+1, seen, callers)
					if !ok {
						return nil, false
					}
					out = append(out, more...)
					continue
				}
				out = append(out, source{ast.Unparen(a), s.body})
			}
		default:
			return nil, false
		}
	}
	return out, true
}

// retryGoDelay is the schedule of a retry-go DelayTypeFunc: BackOffDelay
// and FixedDelay are pure, RandomDelay jittered, CombineDelay jittered if
// one of its parts is; a function literal is what its returns are, a
// value that names RetryAfter (the server's wait) aside.
func (c *checker) retryGoDelay(e ast.Expr, body *ast.BlockStmt, fn *types.Func, depth int) int {
	if depth > 4 {
		return schedUnknown
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.FuncLit:
		return c.retryGoLit(x.Body, fn, depth)
	case *ast.CallExpr:
		f := c.callee(x)
		if f == nil || !isModule(funcPath(f), retryGoPath) || f.Name() != "CombineDelay" {
			return schedUnknown
		}
		out := schedPure
		for _, a := range x.Args {
			switch c.retryGoDelay(a, body, fn, depth+1) {
			case schedJitter:
				return schedJitter
			case schedUnknown:
				out = schedUnknown
			}
		}
		return out
	case *ast.Ident, *ast.SelectorExpr:
		f, ok := c.info.Uses[calleeIdent(x)].(*types.Func)
		if d := c.decls[f]; ok && d != nil {
			return c.retryGoLit(d.Body, fn, depth) // DelayType(delay), a function of the package
		}
		if !ok || !isModule(funcPath(f), retryGoPath) {
			return schedUnknown
		}
		switch f.Name() {
		case "BackOffDelay", "FixedDelay":
			return schedPure
		case "RandomDelay":
			return schedJitter
		}
	}
	return schedUnknown
}

// retryGoLit is the schedule of a DelayTypeFunc's body (a literal's, or
// a function's of the package): each return is a call of a DelayTypeFunc
// (retry.BackOffDelay(n, err, config)), or a value that names RetryAfter,
// the server's wait, which does not count.
func (c *checker) retryGoLit(body *ast.BlockStmt, fn *types.Func, depth int) int {
	out, n := schedPure, 0
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(x.Results) != 1 {
				out = schedUnknown
				return false
			}
			r := ast.Unparen(x.Results[0])
			if namesRetryAfter(r) {
				return false
			}
			n++
			got := schedUnknown
			if rc, ok := r.(*ast.CallExpr); ok {
				got = c.retryGoDelay(rc.Fun, body, fn, depth+1)
			}
			if got == schedJitter {
				out = schedJitter
			} else if got == schedUnknown && out != schedJitter {
				out = schedUnknown
			}
		}
		return true
	})
	if n == 0 {
		return schedUnknown
	}
	return out
}

// namesRetryAfter reports whether e names something called RetryAfter (a
// rate-limit error's field).
func namesRetryAfter(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && strings.EqualFold(id.Name, "RetryAfter") {
			found = true
		}
		return !found
	})
	return found
}
