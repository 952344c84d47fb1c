package retryloop

import (
	"go/ast"
	"go/types"
)

// A function of the package may take the call it retries as a parameter
// (readWithRetries(get httpget, …)) while every caller in the package
// hands it the same named function (readWithRetries(httpGet, …)): a
// reader sees a call of that function, and so does the analyzer.

// handedFunc returns the named function a call of a func parameter calls:
// the one every call of the parameter's function in the package (its
// tests aside) passes for it. Nil if the function is exported (its
// callers are the user's), if nothing in the package calls it, if its
// callers pass different functions or anything but a named one, or if
// the function assigns the parameter.
func (c *checker) handedFunc(call *ast.CallExpr) *types.Func {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || !c.declsRead || c.findingSites {
		return nil
	}
	p, ok := c.info.Uses[id].(*types.Var)
	if !ok || !c.params[p] {
		return nil
	}
	if _, isFunc := p.Type().Underlying().(*types.Signature); !isFunc {
		return nil
	}
	if fn, done := c.handed[p]; done {
		return fn
	}
	c.handed[p] = nil // while it is worked out: a recursive caller finds none
	fn := c.handedBy(id, p)
	c.handed[p] = fn
	return fn
}

// handedBy is handedFunc's answer for parameter p, named by id.
func (c *checker) handedBy(id *ast.Ident, p *types.Var) *types.Func {
	owner, i, sites := c.paramSites(id)
	if owner == nil || owner.Exported() || len(sites) == 0 || len(c.assignsOf(c.decls[owner].Body)[p]) > 0 {
		return nil
	}
	var picked *types.Func
	for _, s := range sites {
		if i >= len(s.call.Args) {
			return nil
		}
		var obj types.Object
		switch a := ast.Unparen(s.call.Args[i]).(type) {
		case *ast.Ident:
			obj = c.info.Uses[a]
		case *ast.SelectorExpr:
			obj = c.info.Uses[a.Sel]
		}
		fn, ok := obj.(*types.Func)
		if !ok || (picked != nil && fn != picked) {
			return nil
		}
		picked = fn
	}
	return picked
}
