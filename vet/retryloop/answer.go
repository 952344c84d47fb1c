package retryloop

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// answerError reads resp.Error != "" (or resp.ErrorCode != 0), an answer's
// own field saying it failed, as part of the outcome: a success is an
// answer that reports no error, so the test is false on it; on a failure
// it is unknown.
func (ev *evaluator) answerError(op token.Token, x, y ast.Expr, o outcome) (tri, bool) {
	if op != token.EQL && op != token.NEQ {
		return triU, false
	}
	if ev.isZero(x) {
		x, y = y, x
	}
	sel, ok := ast.Unparen(x).(*ast.SelectorExpr)
	if !ok || !ev.isZero(y) || !answerErrorNames[sel.Sel.Name] {
		return triU, false
	}
	if v, ok := ev.w.c.info.Uses[sel.Sel].(*types.Var); !ok || !v.IsField() {
		return triU, false
	}
	if !o.success() {
		return triU, true
	}
	return boolTri(op == token.EQL), true
}

// answerErrorNames are the fields an answer reports its failure in.
var answerErrorNames = map[string]bool{"Error": true, "Err": true, "ErrorCode": true, "ErrCode": true, "ErrorMessage": true, "ErrMsg": true, "ErrorMsg": true}

// isZero reports whether e is the constant "" or 0.
func (ev *evaluator) isZero(e ast.Expr) bool {
	tv := ev.w.c.info.Types[e]
	if tv.Value == nil {
		return false
	}
	switch tv.Value.Kind() {
	case constant.String:
		return constant.StringVal(tv.Value) == ""
	case constant.Int:
		return constant.Sign(tv.Value) == 0
	}
	return false
}

// sentinelOnSuccess reads err == ErrAgain, err an error of the outcome
// (the attempt's, or a step's on its answer: err = parseError(msg)), on a
// success: the error is nil then, so it equals no sentinel.
func (ev *evaluator) sentinelOnSuccess(op token.Token, x, y ast.Expr, o outcome) (tri, bool) {
	if !o.success() || (op != token.EQL && op != token.NEQ) {
		return triU, false
	}
	c := ev.w.c
	if _, ok := ast.Unparen(y).(*ast.Ident); ok && isError(c.info.TypeOf(y)) && ev.srcOf(y) == srcOutcome && !errVar(c.info, y) {
		x, y = y, x
	}
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok || !isError(c.info.TypeOf(id)) || ev.srcOf(id) != srcOutcome || errVar(c.info, id) || !errVar(c.info, y) {
		return triU, false
	}
	return boolTri(op == token.NEQ), true
}

// errVar reports whether e names a package-level error variable (io.EOF,
// ErrAgain).
func errVar(info *types.Info, e ast.Expr) bool {
	v, ok := info.Uses[calleeIdent(e)].(*types.Var)
	return ok && isPkgVar(v) && isError(v.Type())
}
