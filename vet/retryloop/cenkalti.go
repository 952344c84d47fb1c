package retryloop

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// cenkalti/backoff's schedules: an ExponentialBackOff randomises each
// interval by its RandomizationFactor (0.5 from NewExponentialBackOff, 0
// in a literal that leaves it out); a ConstantBackOff never does. Its
// Retry functions wait what the BackOff they are given says and go round
// on every error the operation returns but a Permanent one.

// cenkaltiCall reads a cenkalti/backoff Retry call: the schedule of the
// BackOff it is given (v5's WithBackOff option; without one, v5's default
// is jittered) and its operation. It is a retry only where the operation
// returns an error on a failure it tested: an operation that returns one
// on an answer that is not ready yet (a poll) is not judged.
func (c *checker) cenkaltiCall(call *ast.CallExpr, callee *types.Func, decl *ast.BlockStmt) (libCall, bool) {
	path, name := funcPath(callee), callee.Name()
	if !isCenkalti(path) || !strings.HasPrefix(name, "Retry") || recvNamed(callee) != nil {
		return libCall{}, false
	}
	var b, op ast.Expr
	params := callee.Type().(*types.Signature).Params()
	for i, a := range call.Args {
		t := c.info.TypeOf(a)
		if i < params.Len() {
			t = params.At(i).Type() // the BackOff an *ExponentialBackOff is passed as
		}
		if t == nil {
			continue
		}
		if s, ok := t.(*types.Slice); ok && i >= params.Len()-1 {
			t = s.Elem() // v5's ...RetryOption
		}
		switch {
		case isNamed(t, path, "BackOff"):
			b = a
		case isNamed(t, path, "RetryOption"):
			if opt, ok := ast.Unparen(a).(*ast.CallExpr); ok && len(opt.Args) == 1 {
				if f := c.callee(opt); f != nil && f.Name() == "WithBackOff" {
					b = opt.Args[0]
				}
			}
		case op == nil:
			if sig, ok := t.Underlying().(*types.Signature); ok && sig.Results().Len() > 0 {
				op = a
			}
		}
	}
	if b == nil || op == nil {
		return libCall{}, false
	}
	sched := c.cenkaltiSched(b, decl, 0)
	if sched == schedPure && !c.failureReturn(op, decl) {
		sched = schedUnknown // a poll of something not ready yet
	}
	return libCall{sched: sched, work: op, stop: "backoff.Permanent",
		deafCtx:    cenkaltiMajor(path) < 5 && c.madeWithoutContext(b, decl, 0) && !c.stopsOnCancel(op, decl),
		forever:    c.cenkaltiForever(path, b, op, decl),
		foreverHow: "with a BackOff that never answers Stop (a constant one, or MaxElapsedTime 0) and nothing else to end it: wrap it in backoff.WithMaxRetries, give it a MaxElapsedTime, or wrap it in backoff.WithContext with a context that can end",
		remedy:     "use an ExponentialBackOff with a RandomizationFactor (NewExponentialBackOff's is 0.5)"}, true
}

// madeWithoutContext reports whether every way the function makes a
// cenkalti BackOff is in sight and none wraps it in WithContext: before
// v5, Retry then waits on context.Background.
func (c *checker) madeWithoutContext(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	srcs := c.sources(e, body, depth)
	if len(srcs) == 0 || depth > 6 {
		return false
	}
	for _, s := range srcs {
		x := s.e
		if u, ok := x.(*ast.UnaryExpr); ok {
			x = ast.Unparen(u.X)
		}
		switch x := x.(type) {
		case *ast.CompositeLit:
			if c.cenkaltiLit(x) == schedUnknown {
				return false
			}
		case *ast.CallExpr:
			f := c.callee(x)
			if f == nil || !isCenkalti(funcPath(f)) {
				return false
			}
			switch f.Name() {
			case "NewExponentialBackOff", "NewConstantBackOff":
			case "WithMaxRetries":
				if len(x.Args) == 0 || !c.madeWithoutContext(x.Args[0], s.body, depth+1) {
					return false
				}
			default:
				return false // WithContext, or something out of sight
			}
		default:
			return false
		}
	}
	return true
}

// stopsOnCancel reports whether an operation, in sight, makes a
// cancelled context permanent: a backoff.Permanent under a test of the
// context or its error (errors.Is(err, context.Canceled), ctx.Err() !=
// nil), or of ctx.Err() itself. One out of sight might, so it does.
func (c *checker) stopsOnCancel(op ast.Expr, decl *ast.BlockStmt) bool {
	bodies := c.condBodies(op, decl)
	if len(bodies) == 0 {
		return true
	}
	for _, body := range bodies {
		stops := false
		var stack []ast.Node
		ast.Inspect(body, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			call, ok := n.(*ast.CallExpr)
			if ok && c.marksBackoff(call) && c.underCtxTest(stack) {
				stops = true
			}
			return !stops
		})
		if stops {
			return true
		}
	}
	return false
}

// underCtxTest reports whether the top of stack is reached under an if
// or case that tests a context or its error, or every error (`if err !=
// nil`, a cancelled call's included), or is itself such a call.
func (c *checker) underCtxTest(stack []ast.Node) bool {
	for _, n := range stack {
		var tests []ast.Expr
		switch n := n.(type) {
		case *ast.IfStmt:
			if b, ok := ast.Unparen(n.Cond).(*ast.BinaryExpr); ok && b.Op == token.NEQ && c.errVerdict(b) > 0 {
				return true
			}
			tests = []ast.Expr{n.Cond}
		case *ast.CaseClause:
			tests = n.List
		}
		for _, e := range tests {
			if c.testsCtx(e) {
				return true
			}
		}
	}
	return c.testsCtx(stack[len(stack)-1])
}

// testsCtx reports whether n mentions a context or context.Canceled or
// DeadlineExceeded.
func (c *checker) testsCtx(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && (c.isCtxErr(e) || isContext(c.info.TypeOf(e))) {
			found = true
		}
		return !found
	})
	return found
}

// failureReturn reports whether an operation returns an error, other than
// a Permanent one, on a failure, and never on anything else.
func (c *checker) failureReturn(op ast.Expr, decl *ast.BlockStmt) bool {
	_, ok := c.retriesOnly(op, decl, c.errorRound)
	return ok
}

// errorRound reads an operation's return: an error other than nil or a
// backoff marker goes round. One that is a call's own outcome (return
// err, return c.send()) goes round on that call's failure; one made on
// the spot (errors.New, fmt.Errorf) on whatever the tests on the way say.
func (c *checker) errorRound(r *ast.ReturnStmt, stack []ast.Node) (string, int) {
	if len(r.Results) == 0 {
		return "", roundNone
	}
	last := ast.Unparen(r.Results[len(r.Results)-1])
	if isNil(c.info, last) || c.marksBackoff(last) {
		return "", roundNone
	}
	if c.isOutcome(last) && !c.successPath(stack) {
		return types.ExprString(last) + " is not nil", roundFailure
	}
	if why, ok := c.failurePath(stack); ok {
		return why, roundFailure
	}
	return "", roundSuccess
}

// isOutcome reports whether e is a call's error as it came back: a local
// variable, or a call other than errors.New and fmt.Errorf — one of a
// func value's too (return handler()).
func (c *checker) isOutcome(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		v, ok := c.info.Uses[x].(*types.Var)
		return ok && !isPkgVar(v)
	case *ast.CallExpr:
		if f := c.callee(x); f != nil {
			return !isFunc(f, "errors", "New") && !isFunc(f, "fmt", "Errorf")
		}
		t := c.info.TypeOf(x.Fun)
		if t == nil {
			return false
		}
		_, isFunc := t.Underlying().(*types.Signature)
		return isFunc
	}
	return false
}

// cenkaltiSched is the schedule of a cenkalti BackOff value: pure for a
// ConstantBackOff and for an ExponentialBackOff whose RandomizationFactor
// is a constant zero (left out of a literal, or set so), jittered for
// NewExponentialBackOff's default; WithMaxRetries and WithContext keep
// what they wrap.
func (c *checker) cenkaltiSched(e ast.Expr, body *ast.BlockStmt, depth int) int {
	if depth > 6 {
		return schedUnknown
	}
	if id, ok := ast.Unparen(e).(*ast.Ident); ok && body != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok {
			if f, set := c.randomizationSet(v, body); set {
				return f
			}
		}
	}
	return joinSources(c.sources(e, body, depth), func(s source) int { return c.cenkaltiMade(s, depth) })
}

func (c *checker) cenkaltiMade(s source, depth int) int {
	switch x := s.e.(type) {
	case *ast.UnaryExpr:
		return c.cenkaltiMade(source{ast.Unparen(x.X), s.body}, depth)
	case *ast.CompositeLit:
		return c.cenkaltiLit(x)
	case *ast.CallExpr:
		f := c.callee(x)
		if f == nil || !isCenkalti(funcPath(f)) {
			return schedUnknown
		}
		switch f.Name() {
		case "NewConstantBackOff":
			return schedPure
		case "NewExponentialBackOff":
			return schedJitter // options aside: a factor set to 0 is rare
		case "WithMaxRetries", "WithContext":
			if len(x.Args) > 0 {
				return c.cenkaltiSched(x.Args[0], s.body, depth+1)
			}
		}
	}
	return schedUnknown
}

// cenkaltiLit is the schedule of a ConstantBackOff or ExponentialBackOff
// literal.
func (c *checker) cenkaltiLit(lit *ast.CompositeLit) int {
	t := c.info.TypeOf(lit)
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !isCenkalti(n.Obj().Pkg().Path()) {
		return schedUnknown
	}
	switch n.Obj().Name() {
	case "ConstantBackOff":
		return schedPure
	case "ExponentialBackOff":
		v, keyed := litKey(lit, "RandomizationFactor")
		switch {
		case !keyed:
			return schedUnknown
		case v != nil:
			return c.factorSched(v)
		}
		return schedPure
	}
	return schedUnknown
}

// factorSched is the schedule a RandomizationFactor value gives.
func (c *checker) factorSched(e ast.Expr) int {
	tv, ok := c.info.Types[e]
	if !ok || tv.Value == nil {
		return schedUnknown
	}
	if constant.Sign(tv.Value) == 0 {
		return schedPure
	}
	return schedJitter
}

// randomizationSet reports whether body sets v.RandomizationFactor, and
// the schedule the last such assignment gives.
func (c *checker) randomizationSet(v *types.Var, body *ast.BlockStmt) (int, bool) {
	x, set := c.lastFieldSet(v, body, "RandomizationFactor")
	if !set {
		return schedUnknown, false
	}
	return c.factorSched(x), true
}

// nextBackOffPurity is what b.NextBackOff() is made of when the analyzer
// sees how b was made: constant or purely exponential, or jittered.
func (c *checker) nextBackOffPurity(call *ast.CallExpr, body *ast.BlockStmt) purity {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return purity{}
	}
	switch c.cenkaltiSched(sel.X, body, 0) {
	case schedPure:
		return purity{kind: pPure}
	case schedJitter:
		return purity{kind: pRand}
	}
	return purity{}
}
