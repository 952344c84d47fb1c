package retryloop

import (
	"go/ast"
	"go/types"
	"slices"
)

// A response is often turned into an error by a helper of the package:
//
//	resp, err = hc.Do(req)
//	if err == nil {
//		if err = checkResponse(resp); err == nil {
//			return resp, nil
//		}
//	}
//	time.Sleep(d)
//
// The loop goes round on the statuses the helper makes an error of. Such a
// call is read through, as a classifier is: its body is evaluated on each
// outcome, its error holding where it returns one.

// srcCheck and above, as an error variable's source, is the error of the
// walker's checks[src-srcCheck].
const srcCheck = 100

// statusCheck reports whether call, assigned to an error variable by as,
// is a helper of this package handed the response of the loop's remote
// call after it.
func (w *loopWalker) statusCheck(call *ast.CallExpr, as *ast.AssignStmt) bool {
	if w.remoteCall == nil || as.Pos() < w.remoteCall.End() {
		return false
	}
	fn := w.c.callee(call)
	if fn == nil || w.c.decls[fn] == nil {
		return false
	}
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() != 1 || !isError(sig.Results().At(0).Type()) || sig.Variadic() || sig.Params().Len() != len(call.Args) {
		return false
	}
	for _, a := range call.Args {
		id := identOf(a)
		if id == nil {
			continue
		}
		v, ok := w.c.info.Uses[id].(*types.Var)
		if ok && !isError(v.Type()) && slices.Contains(w.c.callsAssigning(v, w.body), w.remoteCall) {
			return true
		}
	}
	return false
}

// checkSrc registers a status check's call and returns the source its
// error variable takes.
func (w *loopWalker) checkSrc(call *ast.CallExpr) int {
	if i := slices.Index(w.checks, call); i >= 0 {
		return srcCheck + i
	}
	w.checks = append(w.checks, call)
	return srcCheck + len(w.checks) - 1
}

// checkFails evaluates a status check's call on outcome o: whether the
// error it returns is not nil.
func (ev *evaluator) checkFails(src int, o outcome) tri {
	c := ev.w.c
	call := ev.w.checks[src-srcCheck]
	fn := c.callee(call)
	sig := fn.Type().(*types.Signature)
	env := map[*types.Var]binding{}
	for i, a := range call.Args {
		env[sig.Params().At(i)] = ev.argBinding(a, o)
	}
	in := &inliner{c: c, o: o, k: ev.k, env: env, body: c.decls[fn].Body, errResult: true}
	return in.run(0)
}

// errCond evaluates a returned error as a condition: whether it is not
// nil. nil is not; a made error (errors.New, fmt.Errorf, a composite
// literal) is; anything else may be either, or depends on the outcome.
func (in *inliner) errCond(e ast.Expr) vset {
	e = ast.Unparen(e)
	if isNil(in.c.info, e) {
		return one(triF)
	}
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	switch x := e.(type) {
	case *ast.CompositeLit:
		return one(triT)
	case *ast.CallExpr:
		if isFunc(in.c.callee(x), "fmt", "Errorf") || isFunc(in.c.callee(x), "errors", "New") {
			return one(triT)
		}
	}
	return in.opaque(e)
}
