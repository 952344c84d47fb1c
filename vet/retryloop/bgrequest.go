package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A request a helper is handed carries its caller's context, and a wait
// that does not hear req.Context() outlasts the caller's deadline — unless
// every caller in the package made the request with http.NewRequest, no
// context given: then req.Context() is context.Background(), and there is
// nothing to hear (a Powerwall client's httpDo, whose every request is
// built without one).

// backgroundRequest reports whether v, an *http.Request parameter of the
// function declared around pos, is handed in by callers in the package
// only, each passing a variable every assignment of which is a plain
// http.NewRequest. An exported function or a method nothing in the package
// calls by name is the user's to call with any request: no.
func (c *checker) backgroundRequest(v *types.Var, pos token.Pos) bool {
	if r, ok := c.bgRequests[v]; ok {
		return r
	}
	r := c.backgroundRequestOf(v, pos)
	if c.bgRequests == nil {
		c.bgRequests = map[*types.Var]bool{}
	}
	c.bgRequests[v] = r
	return r
}

func (c *checker) backgroundRequestOf(v *types.Var, pos token.Pos) bool {
	fd := c.declAt(pos)
	if fd == nil {
		return false
	}
	fn, _ := c.info.Defs[fd.Name].(*types.Func)
	idx := c.paramIndex(fd.Type, v)
	if fn == nil || idx < 0 {
		return false
	}
	if c.sites == nil {
		c.findSites()
	}
	sites := c.sites[fn]
	if len(sites) == 0 {
		return false
	}
	for _, s := range sites {
		if idx >= len(s.call.Args) || !c.madeWithoutCtx(s.call.Args[idx], s.body) {
			return false
		}
	}
	return true
}

// paramIndex returns the index of v among ft's parameters, or -1.
func (c *checker) paramIndex(ft *ast.FuncType, v *types.Var) int {
	i := 0
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			i++
			continue
		}
		for _, n := range f.Names {
			if c.info.Defs[n] == v {
				return i
			}
			i++
		}
	}
	return -1
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
