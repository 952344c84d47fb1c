package retryloop

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
)

// A bool the loop tests is often a classifier's verdict handed on: taken
// from its call, or set under an if that asked one (retry = true,
// retry = backOff(i, n, d)). Such a variable is read as the verdict.

// verdictOfClassifier reports whether every assignment to the boolean v
// in body takes a result of a call that classifies an error or a response
// (ok := shouldRetry(resp, err); d, retry := r.Retry(code, err)).
func (c *checker) verdictOfClassifier(v *types.Var, body *ast.BlockStmt) bool {
	if body == nil {
		return false
	}
	if b, ok := v.Type().Underlying().(*types.Basic); !ok || b.Kind() != types.Bool {
		return false
	}
	n, all := 0, true
	var stack []ast.Node
	ast.Inspect(body, func(m ast.Node) bool {
		if m == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		as, ok := m.(*ast.AssignStmt)
		if ok && all {
			for i, l := range as.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok || (c.info.Defs[id] != v && c.info.Uses[id] != v) {
					continue
				}
				n++
				rhs := rhsOf(as, i)
				if !c.relaysVerdict(as, rhs, stack) {
					all = false
				}
			}
		}
		if !all {
			return false
		}
		stack = append(stack, m)
		return true
	})
	return n > 0 && all
}

// relaysVerdict reports whether an assignment to a boolean passes on a
// classification: a classifier's result, a constant false (the default:
// no retry), or a constant true set only under an if whose condition or
// init is a classifier's (if r, w := h.ShouldRetry(resp, err); r { retry
// = true }).
func (c *checker) relaysVerdict(as *ast.AssignStmt, rhs ast.Expr, stack []ast.Node) bool {
	if call, ok := ast.Unparen(rhs).(*ast.CallExpr); ok {
		if c.classifies(call) || (len(as.Rhs) == 1 && c.withError(as.Lhs)) {
			return true
		}
		// case TMPFAIL, EBUSY: retry = backOff(i, max, d): a helper
		// that waits and says whether attempts remain, reached only
		// where a classification chose to retry
		f := c.fact(c.callee(call))
		return f != nil && f.Waits && c.underClassifier(as, stack)
	}
	tv, ok := c.info.Types[rhs]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.Bool {
		return false
	}
	if !constant.BoolVal(tv.Value) {
		return true
	}
	return c.underClassifier(as, stack)
}

// underClassifier reports whether as is in the body of an if, among those
// stack holds, whose condition or init inspects an error or a response
// (if isTemp(err) {, if err != nil && isConnError(err) {, if resp, ok :=
// err.(*MCResponse); ok {).
func (c *checker) underClassifier(as *ast.AssignStmt, stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		is, ok := stack[i].(*ast.IfStmt)
		if !ok || as.Pos() < is.Body.Pos() || as.End() > is.Body.End() {
			continue
		}
		if c.inspectsError(is.Cond) {
			return true
		}
		if init, ok := is.Init.(*ast.AssignStmt); ok && len(init.Rhs) == 1 && c.inspectsError(init.Rhs[0]) {
			return true
		}
	}
	return false
}

// withError reports whether an assignment's left side takes an error
// too: retry, err := attempt() — the attempt says whether to retry.
func (c *checker) withError(lhs []ast.Expr) bool {
	for _, l := range lhs {
		if isError(c.info.TypeOf(l)) {
			return true
		}
	}
	return false
}

// ownAnswerMethod reports whether fn is a method of a type of pkg that
// holds an HTTP status in a field (statusCode, StatusCode) and answers a
// bool first: a verdict on the answer the type holds.
func ownAnswerMethod(fn *types.Func, pkg *types.Package) bool {
	if fn == nil {
		return false
	}
	r := recvNamed(fn)
	if r == nil || r.Obj().Pkg() != pkg {
		return false
	}
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() == 0 || !isBool(sig.Results().At(0).Type()) {
		return false
	}
	return statusField(r) != nil
}

// statusField returns the integer field of a struct type, named
// statusCode or StatusCode, that holds an HTTP status; nil if none.
func statusField(t types.Type) *types.Var {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	for i := range st.NumFields() {
		f := st.Field(i)
		b, isBasic := f.Type().Underlying().(*types.Basic)
		if isBasic && b.Info()&types.IsInteger != 0 && strings.EqualFold(f.Name(), "statusCode") {
			return f
		}
	}
	return nil
}
