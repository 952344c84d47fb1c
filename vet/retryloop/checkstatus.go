package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// An API client often keeps the test of an answer's status in a function
// of its own, handed the response: CheckResponse(r) returns nil on a 2xx
// and an error carrying the status otherwise. The client's call that
// hands it each answer and returns its error folds the status into that
// error as surely as one that tests resp.StatusCode itself.

// checksStatusBody reports whether fn, handed an *http.Response and
// returning an error last, returns a non-nil error somewhere and tests
// the answer's status (an if on it, or a switch on it or on its cases).
func (c *checker) checksStatusBody(fn *types.Func, d *ast.FuncDecl) bool {
	sig := fn.Type().(*types.Signature)
	res := sig.Results()
	if res.Len() == 0 || !isError(res.At(res.Len()-1).Type()) {
		return false
	}
	handed := false
	for i := range sig.Params().Len() {
		handed = handed || isNamed(sig.Params().At(i).Type(), "net/http", "Response")
	}
	if !handed || !returnsError(c.info, d.Body, res.Len()) {
		return false
	}
	tests := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			tests = tests || c.hasStatus(n.Cond)
		case *ast.SwitchStmt:
			tests = tests || n.Tag != nil && c.hasStatus(n.Tag)
		case *ast.CaseClause:
			for _, e := range n.List {
				tests = tests || c.hasStatus(e)
			}
		}
		return !tests
	})
	return tests
}

// checksStatus reports whether fn is known, by summary or fact, to check
// an answer's status (ChecksStatus).
func (c *checker) checksStatus(fn *types.Func) bool {
	f := c.fact(fn)
	return f != nil && f.ChecksStatus
}

// handsResponse reports whether call is handed an *http.Response.
func handsResponse(info *types.Info, call *ast.CallExpr) bool {
	for _, a := range call.Args {
		if isNamed(info.TypeOf(a), "net/http", "Response") {
			return true
		}
	}
	return false
}

// foldedErr returns the variable an operation literal keeps its remote
// call's error in, when that call folds the answer's status into its
// error (a helper of the package's that tests or checks the status, a
// model SDK's method): err != nil there holds on every failed status.
// It returns nil for a call whose error is only the transport's.
func (c *checker) foldedErr(lit *ast.FuncLit, r *remoteAt) types.Object {
	callee := c.callee(r.call)
	if r.kind != remoteSDK && (callee == nil || funcPath(callee) == "net/http" || !c.foldsStatus(callee)) {
		return nil
	}
	var out types.Object
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || out != nil {
			return out == nil
		}
		if len(as.Rhs) == 1 && ast.Unparen(as.Rhs[0]) == r.call && len(as.Lhs) > 0 {
			if id := identOf(as.Lhs[len(as.Lhs)-1]); id != nil && id.Name != "_" {
				out = c.info.ObjectOf(id)
			}
		}
		return out == nil
	})
	return out
}

// nilTestOf reports, when e is fold != nil or fold == nil, whether it
// holds when fold is set (ok false for any other condition).
func (c *checker) nilTestOf(e ast.Expr, fold types.Object) (set, ok bool) {
	b, isBin := ast.Unparen(e).(*ast.BinaryExpr)
	if fold == nil || !isBin || (b.Op != token.NEQ && b.Op != token.EQL) {
		return false, false
	}
	x, y := b.X, b.Y
	if isNil(c.info, x) {
		x, y = y, x
	}
	id := identOf(x)
	if id == nil || !isNil(c.info, y) || c.info.ObjectOf(id) != fold {
		return false, false
	}
	return b.Op == token.NEQ, true
}

// localStatusTest reports whether cond calls a function literal of the
// function's own, handed an *http.Response, that tests its status
// (hasError := func(r *http.Response) bool { return r.StatusCode !=
// 200 }; if hasError(out) { … }).
func (c *checker) localStatusTest(cond ast.Expr, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(cond, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found || !handsResponse(c.info, call) {
			return !found
		}
		if lit := c.funcLitOf(call.Fun, body); lit != nil {
			ast.Inspect(lit.Body, func(m ast.Node) bool {
				if x, ok := m.(ast.Expr); ok && c.isStatus(x) {
					found = true
				}
				return !found
			})
		}
		return !found
	})
	return found
}
