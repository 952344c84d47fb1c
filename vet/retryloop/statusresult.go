package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A helper that makes the HTTP call and hands back the answer's status as
// an integer result beside its error (status, err := c.send(ctx, buf), the
// status -1 or 0 when no answer came) is read as the response would be:
// the variable the loop keeps it in is the status, so a loop that tests
// it (if status > 0 && status != 429 && status/100 != 5 { break }) picks.

// summarizeStatusResult sets s.StatusResult for a function that makes an
// HTTP call and returns, as its first integer result, the response's
// status on every return that is not a constant (status, err :=
// c.send(…), or g, status, retryAfter, err := c.grantOnce(…)). Where the
// call stands for one value, that value is a status only if it is the
// first result.
func (c *checker) summarizeStatusResult(fn *types.Func, d *ast.FuncDecl, s *FuncFact) {
	res := fn.Type().(*types.Signature).Results()
	if (s.Remote != remoteHTTP && s.Remote != remoteSDK) || d.Body == nil || res.Len() == 0 {
		return
	}
	for i := range res.Len() {
		if b, ok := res.At(i).Type().Underlying().(*types.Basic); !ok || b.Info()&types.IsInteger == 0 {
			continue
		}
		if everyReturn(c.info, d.Body, i, res.Len(), c.isStatus) || c.namedStatus(d.Body, res.At(i), i, res.Len()) {
			s.StatusResult = i + 1
		}
		return // the first integer result is the status, or none is
	}
}

// everyReturn reports whether every return of body (of n results) gives,
// at index i, a constant or an expression ok accepts, and one at least
// what ok accepts. A bare return of named results fails it.
func everyReturn(info *types.Info, body *ast.BlockStmt, i, n int, ok func(ast.Expr) bool) bool {
	some, all := false, true
	ast.Inspect(body, func(nd ast.Node) bool {
		switch r := nd.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(r.Results) != n {
				all = false // a bare return of named results, or a call's
				return false
			}
			x := ast.Unparen(r.Results[i])
			switch {
			case info.Types[x].Value != nil:
			case ok(x):
				some = true
			default:
				all = false
			}
		}
		return all
	})
	return all && some
}

// namedStatus reports whether a function whose results are named and
// returned bare (statusCode = res.StatusCode … return) gives, in the named
// result v (result i of n), the answer's status: every assignment to v is a constant or a
// status, one at least a status, v's address is never taken, and every
// return is bare or gives v itself, a constant or a status there.
func (c *checker) namedStatus(body *ast.BlockStmt, v *types.Var, i, n int) bool {
	if v.Name() == "" || v.Name() == "_" {
		return false
	}
	is := func(x ast.Expr) bool {
		id, ok := ast.Unparen(x).(*ast.Ident)
		return ok && c.info.Uses[id] == v
	}
	some, all := false, true
	value := func(x ast.Expr) {
		switch {
		case c.info.Types[x].Value != nil:
		case c.isStatus(x):
			some = true
		default:
			all = false
		}
	}
	ast.Inspect(body, func(nd ast.Node) bool {
		switch s := nd.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for j, l := range s.Lhs {
				if !is(l) {
					continue
				}
				switch {
				case s.Tok != token.ASSIGN:
					all = false
				case len(s.Lhs) != len(s.Rhs):
					// body, status, err = utils.GetRequest(url): the
					// status result of a helper that hands one back
					call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
					if ok && len(s.Rhs) == 1 && c.statusAt(call) == j+1 {
						some = true
					} else {
						all = false
					}
				default:
					value(ast.Unparen(s.Rhs[j]))
				}
			}
		case *ast.IncDecStmt:
			all = all && !is(s.X)
		case *ast.UnaryExpr:
			all = all && !(s.Op == token.AND && is(s.X))
		case *ast.ReturnStmt:
			if len(s.Results) == n {
				if r := s.Results[i]; !is(r) {
					value(ast.Unparen(r))
				}
			} else if len(s.Results) != 0 {
				all = false
			}
		}
		return all
	})
	return all && some
}

// statusCall reports whether call is of a function whose first result is
// the status of the HTTP answer it got (its fact's StatusResult): where
// the call stands for its first result (status, err := c.send(…)), it is
// a status.
func (c *checker) statusCall(call *ast.CallExpr) bool {
	return c.statusAt(call) == 1
}

// statusAt is one more than the index of call's result that is a status
// (its fact's StatusResult), or 0.
func (c *checker) statusAt(call *ast.CallExpr) int {
	if f := c.fact(c.callee(call)); f != nil {
		return f.StatusResult
	}
	return 0
}

// heldStatus reports whether v is given, anywhere in the package, only
// the status result of such a call (status, err = c.send(…)). Until
// the package's facts are settled, nothing is.
func (c *checker) heldStatus(v types.Object) bool {
	if !c.summarized || v == nil {
		return false
	}
	if c.statusVars == nil {
		c.statusVars = map[types.Object]bool{}
		other := map[types.Object]bool{}
		for _, file := range c.pass.Files {
			ast.Inspect(file, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok {
					c.noteStatusVars(as, other)
				}
				return true
			})
		}
		for o := range other {
			delete(c.statusVars, o)
		}
	}
	return c.statusVars[v]
}

// noteStatusVars records the variables as gives a status result, and in
// other those it gives anything else.
func (c *checker) noteStatusVars(as *ast.AssignStmt, other map[types.Object]bool) {
	for i, l := range as.Lhs {
		id, ok := ast.Unparen(l).(*ast.Ident)
		if !ok {
			continue
		}
		o := c.info.Defs[id]
		if o == nil {
			o = c.info.Uses[id]
		}
		if o == nil {
			continue
		}
		call, isCall := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		switch {
		case len(as.Rhs) == 1 && len(as.Lhs) > 1 && isCall && c.statusAt(call) == i+1:
			c.statusVars[o] = true
		case len(as.Rhs) == len(as.Lhs) && c.statusField(as.Rhs[i]):
			// code := resp.StatusCode: the status, under another name
			c.statusVars[o] = true
		default:
			other[o] = true
		}
	}
}

// statusField reports whether e reads a response's status field or
// method (resp.StatusCode, apiErr.StatusCode()), not a variable holding
// one.
func (c *checker) statusField(e ast.Expr) bool {
	switch ast.Unparen(e).(type) {
	case *ast.SelectorExpr, *ast.CallExpr:
		return c.isStatus(e)
	}
	return false
}
