package retryloop

import (
	"go/ast"
	"go/constant"
	"go/types"
)

// Two more backoff libraries whose randomness is off unless asked for:
// jpillora/backoff's Backoff adds jitter only with Jitter: true, and
// eapache/go-resiliency's Retrier only after SetJitter.
const (
	jpilloraPath = "github.com/jpillora/backoff"
	retrierPath  = "github.com/eapache/go-resiliency/retrier"
)

// jpilloraPurity is what b.Duration() or b.ForAttempt(n) is made of when
// every value b is given is a Backoff literal in sight: pure when each
// leaves Jitter out or sets it to a constant false, jittered when each
// sets it true; unknown when the function sets b.Jitter apart.
func (c *checker) jpilloraPurity(call *ast.CallExpr, body *ast.BlockStmt) purity {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || body == nil {
		return purity{}
	}
	if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok {
		if v, ok := c.info.Uses[id].(*types.Var); ok && c.fieldSetIn(v, body) {
			return purity{}
		}
	}
	srcs := c.sources(sel.X, body, 0)
	kind := -1
	for _, s := range srcs {
		got := c.jpilloraLit(s.e)
		if kind == -1 {
			kind = got
		} else if kind != got {
			return purity{}
		}
	}
	if kind == pPure || kind == pRand {
		return purity{kind: kind}
	}
	return purity{}
}

// jpilloraLit is the purity a Backoff literal's Jitter field gives.
func (c *checker) jpilloraLit(e ast.Expr) int {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok || !isNamed(c.info.TypeOf(lit), jpilloraPath, "Backoff") {
		return pUnknown
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return pUnknown
		}
		if k, _ := kv.Key.(*ast.Ident); k != nil && k.Name == "Jitter" {
			tv := c.info.Types[kv.Value]
			switch {
			case tv.Value == nil:
				return pUnknown
			case constant.BoolVal(tv.Value):
				return pRand
			}
		}
	}
	return pPure
}

// retrierCall reads a go-resiliency Retrier's Run, RunCtx or RunFn on a
// Retrier the function makes with retrier.New from one of the package's
// schedules (ConstantBackoff, ExponentialBackoff, LimitedExponentialBackoff)
// or a slice literal, and never gives a SetJitter: its waits are exactly
// the schedule's.
func (c *checker) retrierCall(call *ast.CallExpr, callee *types.Func, decl *ast.BlockStmt) (libCall, bool) {
	r := recvNamed(callee)
	if funcPath(callee) != retrierPath || r == nil || r.Obj().Name() != "Retrier" || len(call.Args) == 0 {
		return libCall{}, false
	}
	switch callee.Name() {
	case "Run", "RunCtx", "RunFn":
	default:
		return libCall{}, false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || decl == nil {
		return libCall{}, false
	}
	sched := joinSources(c.sources(sel.X, decl, 0), func(s source) int { return c.retrierMade(s.e, decl) })
	if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok && c.jitterSet(id, decl) {
		sched = schedJitter
	}
	return libCall{sched: sched, work: call.Args[len(call.Args)-1],
		remedy: "call the Retrier's SetJitter"}, true
}

// retrierMade is the schedule of a Retrier made by e: retrier.New (through
// WithInfiniteRetry or WithSurfaceWorkErrors) from a schedule in sight.
func (c *checker) retrierMade(e ast.Expr, decl *ast.BlockStmt) int {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return schedUnknown
	}
	f := c.callee(call)
	if f == nil || funcPath(f) != retrierPath {
		return schedUnknown
	}
	if recvNamed(f) != nil {
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && f.Name() != "SetJitter" {
			return c.retrierMade(sel.X, decl)
		}
		return schedUnknown
	}
	if f.Name() != "New" || len(call.Args) != 2 {
		return schedUnknown
	}
	switch b := ast.Unparen(call.Args[0]).(type) {
	case *ast.CompositeLit:
		return schedPure
	case *ast.CallExpr:
		if g := c.callee(b); g != nil && funcPath(g) == retrierPath {
			return schedPure
		}
	}
	return schedUnknown
}

// jitterSet reports whether decl calls SetJitter on the variable id names.
func (c *checker) jitterSet(id *ast.Ident, decl *ast.BlockStmt) bool {
	v := c.info.Uses[id]
	found := false
	ast.Inspect(decl, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "SetJitter" {
			if x, ok := ast.Unparen(sel.X).(*ast.Ident); ok && c.info.Uses[x] == v {
				found = true
			}
		}
		return !found
	})
	return found
}
