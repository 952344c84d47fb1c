package retryloop

import (
	"go/ast"
	"go/types"
)

// A request a helper is handed carries its caller's context, and a wait
// that does not hear req.Context() outlasts the caller's deadline — unless
// every caller in the package made the request with http.NewRequest, no
// context given: then req.Context() is context.Background(), and there is
// nothing to hear (a Powerwall client's httpDo, whose every request is
// built without one).

// backgroundRequest reports whether v, an *http.Request parameter of an
// unexported function, is handed in by callers in the package, each
// passing a variable every assignment of which is a plain http.NewRequest.
// An exported function is the user's to call with any request, and one
// nothing in the package calls by name is called through a value: no.
func (c *checker) backgroundRequest(v *types.Var) bool {
	if r, ok := c.bgRequests[v]; ok {
		return r
	}
	r := c.backgroundRequestOf(v)
	if c.bgRequests == nil {
		c.bgRequests = map[*types.Var]bool{}
	}
	c.bgRequests[v] = r
	return r
}

func (c *checker) backgroundRequestOf(v *types.Var) bool {
	fn, idx, sites := c.paramSitesOf(v)
	if fn == nil || fn.Exported() || len(sites) == 0 {
		return false
	}
	for _, s := range sites {
		if idx >= len(s.call.Args) || !c.madeWithoutCtx(s.call.Args[idx], s.body) {
			return false
		}
	}
	return true
}

// madeWithoutCtx reports whether e is a variable of body every assignment
// of which is a call of http.NewRequest: a request with no context.
func (c *checker) madeWithoutCtx(e ast.Expr, body *ast.BlockStmt) bool {
	id := identOf(e)
	if id == nil {
		return false
	}
	xs := c.assignsOf(body)[c.info.Uses[id]]
	for _, x := range xs {
		call, ok := ast.Unparen(x).(*ast.CallExpr)
		if !ok || !isFunc(c.callee(call), "net/http", "NewRequest") {
			return false
		}
	}
	return len(xs) > 0
}
