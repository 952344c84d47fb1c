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
	if c.notYetSentinel(ev.w.attemptCall, y) {
		// The helper answers errNoReadyEndpoints itself after its call
		// succeeded: "not yet", which a success may say or not.
		return ev.irrelevant("sentinel " + types.ExprString(y)), true
	}
	return boolTri(op == token.NEQ), true
}

// grpcCodeOnSuccess answers `status.Code(err) == codes.Unavailable` (or
// `code == …` after `code := status.Code(err)`) on a success: the attempt's
// error is nil there, and grpc's status.Code of nil is codes.OK, so a
// comparison with any other code is false (and != is true). A retry of a
// func value's gRPC call (`if err = rpc(client); status.Code(err) ==
// codes.Unavailable { wait; continue }`) then leaves on success.
func (ev *evaluator) grpcCodeOnSuccess(op token.Token, x, y ast.Expr, o outcome) (tri, bool) {
	if !o.success() || (op != token.EQL && op != token.NEQ) {
		return triU, false
	}
	c := ev.w.c
	code := func(e ast.Expr) (ast.Expr, bool) { // status.Code(err) of the outcome's err
		call, ok := ast.Unparen(ev.once(e)).(*ast.CallExpr)
		if !ok || len(call.Args) != 1 || !isFunc(c.callee(call), "google.golang.org/grpc/status", "Code") {
			return nil, false
		}
		return call.Args[0], true
	}
	arg, ok := code(x)
	other := y
	if !ok {
		arg, ok = code(y)
		other = x
	}
	if !ok || ev.srcOf(arg) != srcOutcome {
		return triU, false
	}
	tv, ok := c.info.Types[other]
	if !ok || tv.Value == nil {
		return triU, false
	}
	if v, exact := constant.Uint64Val(tv.Value); !exact || v == 0 {
		return triU, false // codes.OK: a test for success itself
	}
	return boolTri(op == token.NEQ), true
}

// notYetSentinel reports whether call is of a function of this package
// that reads no HTTP status and itself returns an error variable (the one
// v names, or any if v is nil) on a path where no error was seen: outside
// every `if err != nil` (a readiness check's final return
// errNoReadyEndpoints after its list call succeeded). Its error then says
// "not yet" as well as "failed", and a success may carry it.
//
// The walk reads the helper once per error variable asked about; the
// loop's walk asks on every outcome.
func (c *checker) notYetSentinel(call *ast.CallExpr, v ast.Expr) bool {
	if call == nil {
		return false
	}
	fn := c.callee(call)
	var want types.Object
	if v != nil {
		want = c.info.Uses[calleeIdent(v)]
	}
	key := notYetKey{fn, want}
	r, done := c.notYet[key]
	if !done {
		r = c.returnsNotYet(c.decls[fn], want)
		c.notYet[key] = r
	}
	return r
}

// notYetKey is a helper and the error variable asked about (nil: any).
type notYetKey struct {
	fn   *types.Func
	want types.Object
}

// returnsNotYet is notYetSentinel's reading of the helper's body.
func (c *checker) returnsNotYet(d *ast.FuncDecl, want types.Object) bool {
	return c.returnsAfterCheck(d, func(x ast.Expr) bool {
		return c.isSentinel(x) && (want == nil || c.info.Uses[calleeIdent(x)] == want)
	})
}

// returnsAfterCheck reports whether d returns a result for which is
// holds, after its first checked call and outside every test of an error
// or of an HTTP status: an error it says on a path where none was seen
// (a tunnel not running yet, after the listing's 200 was read).
func (c *checker) returnsAfterCheck(d *ast.FuncDecl, is func(ast.Expr) bool) bool {
	if d == nil || d.Body == nil {
		return false
	}
	after := c.checkedCallEnd(d.Body)
	if after == token.NoPos {
		return false
	}
	tested := c.statusBranches(d.Body)
	found := false
	returnsUnderIfs(d.Body, func(r *ast.ReturnStmt, ifs []*ast.IfStmt) bool {
		for _, x := range r.Results {
			if r.Pos() > after && is(x) && !c.underErrTest(ifs) && !inRanges(tested, r.Pos()) {
				found = true
			}
		}
		return !found
	})
	return found
}

// statusBranches are the branches of body's ifs and switches that test an
// HTTP status: what is returned there answers a status, not "not yet".
func (c *checker) statusBranches(body *ast.BlockStmt) [][2]token.Pos {
	var out [][2]token.Pos
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			if c.readsStatus(n.Cond) {
				out = append(out, [2]token.Pos{n.Body.Pos(), n.End()})
			}
		case *ast.SwitchStmt:
			if (n.Tag != nil && c.hasStatus(n.Tag)) || c.readsStatus(n.Body) {
				out = append(out, [2]token.Pos{n.Body.Pos(), n.End()})
			}
		}
		return true
	})
	return out
}

// returnsUnderIfs calls f on each return statement in body (function
// literals aside), with the ifs whose then-branch holds it, innermost
// last, until f returns false.
func returnsUnderIfs(body ast.Node, f func(*ast.ReturnStmt, []*ast.IfStmt) bool) {
	more := true
	var ifs []*ast.IfStmt
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		if !more {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			if n.Init != nil {
				ast.Inspect(n.Init, visit)
			}
			ifs = append(ifs, n)
			ast.Inspect(n.Body, visit)
			ifs = ifs[:len(ifs)-1]
			if n.Else != nil {
				ast.Inspect(n.Else, visit)
			}
			return false
		case *ast.ReturnStmt:
			more = f(n, ifs)
		}
		return more
	}
	ast.Inspect(body, visit)
}

// checkedCallEnd is the end of a body's first call whose error is tested
// at once (eps, err := list(ctx); if err != nil { return err }), or NoPos.
func (c *checker) checkedCallEnd(body *ast.BlockStmt) token.Pos {
	for i, st := range body.List {
		is, ok := st.(*ast.IfStmt)
		if !ok || !c.underErrTest([]*ast.IfStmt{is}) {
			continue
		}
		prev := is.Init
		if prev == nil && i > 0 {
			prev = body.List[i-1]
		}
		if as, ok := prev.(*ast.AssignStmt); ok && len(as.Rhs) == 1 {
			if _, isCall := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); isCall {
				return is.End()
			}
		}
	}
	return token.NoPos
}

// underErrTest reports whether one of ifs tests an error for non-nil
// (if err != nil, if err != nil && retryable(err)).
func (c *checker) underErrTest(ifs []*ast.IfStmt) bool {
	for _, is := range ifs {
		found := false
		ast.Inspect(is.Cond, func(n ast.Node) bool {
			if be, ok := n.(*ast.BinaryExpr); ok && be.Op == token.NEQ && isNil(c.info, be.Y) && isError(c.info.TypeOf(be.X)) {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// errVar reports whether e names a package-level error variable (io.EOF,
// ErrAgain).
func errVar(info *types.Info, e ast.Expr) bool {
	v, ok := info.Uses[calleeIdent(e)].(*types.Var)
	return ok && isPkgVar(v) && isError(v.Type())
}
