package retryloop

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
)

// A duration is sometimes a later result of a helper of the package
// (retry, backoff := resp.needsRetry(cfg, attempts)): what that result is
// made of is read over the helper's returns, as a first result's is.

// resultKey is a function of this package and the index of one of its
// results.
type resultKey struct {
	fn  *types.Func
	idx int
}

// resultPurity says what a function of this package returns (its first
// result) is made of, over its return statements; a return under an if
// that reads Retry-After is the server's wait, not the function's, and is
// left out.
func (c *checker) resultPurity(callee *types.Func, depth int) purity {
	return c.resultPurityAt(callee, 0)
}

// resultPurityAt is resultPurity for the result at idx.
func (c *checker) resultPurityAt(callee *types.Func, idx int) purity {
	d, ok := c.decls[callee]
	if !ok {
		return purity{}
	}
	key := resultKey{callee, idx}
	if r, done := c.purities[key]; done {
		return r
	}
	c.purities[key] = purity{} // a recursive function: unknown
	r := purity{kind: pNone}
	n := 0
	skip := c.serverBranches(d.Body) // the server's wait, not the result's
	off := c.offByDefault(d.Body)
	ast.Inspect(d.Body, func(n2 ast.Node) bool {
		switch n2 := n2.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if within(off, n2) {
				// taken only when a setting is changed (if
				// w.BackoffMin > 0 { return w.BackoffMin })
				r.byDefault = true
				return true
			}
			if len(n2.Results) > idx && (idx == 0 || len(n2.Results) > 1) && !within(skip, n2) && !zeroConst(c.info, n2.Results[idx]) {
				n++
				// Memoised, so computed afresh: not cut short by how
				// deep the first caller happened to be.
				r = r.and(c.purity(n2.Results[idx], d.Body, callee, 0))
			}
		}
		return true
	})
	if n == 0 || r.kind == pNone {
		r = purity{}
	}
	c.purities[key] = r
	return r
}

// laterResult returns the call of a function of this package whose
// result at idx > 0 is v's one value (retry, backoff := r.needsRetry(n)),
// with idx; nil if v is given anything else.
func (c *checker) laterResult(v *types.Var, body *ast.BlockStmt) (*ast.CallExpr, int) {
	if body == nil {
		return nil, 0
	}
	call, idx, ok := c.classifierCall(v, body)
	if !ok || idx == 0 || c.decls[c.callee(call)] == nil {
		return nil, 0
	}
	return call, idx
}

// serverBranches is retryAfterBranches, with the ifs that test a kept
// Retry-After text too (if r.retryAfter != "" { … }).
func (c *checker) serverBranches(body *ast.BlockStmt) []ast.Node {
	out := retryAfterBranches(body)
	ast.Inspect(body, func(n ast.Node) bool {
		if s, ok := n.(*ast.IfStmt); ok && (c.retryAfterField(s.Init) || c.retryAfterField(s.Cond)) {
			out = append(out, s.Body)
		}
		return true
	})
	return out
}

// retryAfterField reports whether n reads a string field or variable
// named retryAfter: the header's text, kept (r.retryAfter != "").
func (c *checker) retryAfterField(n ast.Node) bool {
	found := false
	if n == nil || isNilNode(n) {
		return false
	}
	ast.Inspect(n, func(m ast.Node) bool {
		if id, ok := m.(*ast.Ident); ok && strings.EqualFold(id.Name, "retryAfter") {
			if b, ok := c.info.TypeOf(id).(*types.Basic); ok && b.Kind() == types.String {
				found = true
			}
		}
		return !found
	})
	return found
}

// zeroConst reports whether e is the constant zero: a helper's "no wait"
// (return 0, false), which says nothing of how its waits are made.
func zeroConst(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	return ok && tv.Value != nil && tv.Value.Kind() == constant.Int && constant.Sign(tv.Value) == 0
}
