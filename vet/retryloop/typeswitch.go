package retryloop

import (
	"go/ast"
	"go/types"
)

// typeSwitch walks a type switch: on an error's type, each case with its
// types as a condition on the outcome (see errorTypeCase); on anything
// else, its cases as opaque choices.
func (w *loopWalker) typeSwitch(s *ast.TypeSwitchStmt, st state, contIsLoop bool) (state, bool) {
	if s.Init != nil {
		st = w.simple(s.Init, st)
	}
	var x ast.Expr
	switch a := s.Assign.(type) {
	case *ast.AssignStmt:
		if len(a.Rhs) == 1 {
			x = a.Rhs[0]
		}
	case *ast.ExprStmt:
		x = a.X
	}
	if ta, ok := x.(*ast.TypeAssertExpr); ok && isError(w.c.info.TypeOf(ta.X)) {
		return w.cases(s.Body, st, func(values []ast.Expr) cond {
			return cond{isCase: true, typeCase: true, tag: ta.X, values: values}
		}, contIsLoop)
	}
	return w.clauses(s.Body.List, st, opaqueOther, contIsLoop)
}

// errorTypeCase evaluates, on outcome o, a type switch case on the error
// x: whether x is of one of the case's types. It is known only for the
// attempt's own error: nil on a success (only `case nil` holds), one
// carrying the answer's status when a model SDK's call, or a helper that
// folds the status into its error, failed with a status (a case of a
// status-bearing type holds, one of a concrete type that carries none does
// not), and none of a status-bearing type on a transport error. Anything
// else — an interface case, another kind's error — may be either.
func (ev *evaluator) errorTypeCase(x ast.Expr, values []ast.Expr, o outcome) tri {
	c := ev.w.c
	if !ev.fromAttempt(x) {
		return triU
	}
	r := triF
	for _, v := range values {
		if c.info.Types[v].IsNil() {
			r = or3(r, boolTri(!o.err))
			continue
		}
		r = or3(r, ev.errorOfType(c.info.TypeOf(v), o))
	}
	return r
}

// errorOfType says whether the attempt's error, on outcome o, is of type t.
func (ev *evaluator) errorOfType(t types.Type, o outcome) tri {
	switch {
	case !o.err:
		return triF // nil is of no type
	case t == nil || types.IsInterface(t):
		return triU
	case ev.k != remoteHTTP && ev.k != remoteSDK:
		return triU
	case o.hasStatus:
		return boolTri(statusBearing(t))
	case statusBearing(t):
		return triF // a transport error carries no answer's status
	}
	return triU
}
