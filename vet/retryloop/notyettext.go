package retryloop

import (
	"go/ast"
	"go/constant"
	"go/token"
)

// A loop may wait for a state through an error's text: its helper reads
// a cache or a store, finds the thing not ready yet, and says so with an
// error made of a constant message (return nil, fmt.Errorf("%s",
// lbNotReady)) after its own call succeeded; the loop waits and goes
// round while err.Error() == lbNotReady. That error is "not yet", not a
// failure: a success may carry it, as notYetSentinel's sentinel.

// textCompare returns the constant string e compares an error's text with,
// and the error: err.Error() == K or K == err.Error().
func (c *checker) textCompare(x, y ast.Expr) (ast.Expr, string, bool) {
	for _, p := range [][2]ast.Expr{{x, y}, {y, x}} {
		call, ok := ast.Unparen(p[0]).(*ast.CallExpr)
		if !ok || len(call.Args) != 0 {
			continue
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Error" || !isError(c.info.TypeOf(sel.X)) {
			continue
		}
		if tv, ok := c.info.Types[p[1]]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
			return sel.X, constant.StringVal(tv.Value), true
		}
	}
	return nil, "", false
}

// notYetTextLoop reports whether the walked loop compares its attempt's
// error's text with a message its attempt's helper returns after its
// call succeeded.
func (w *loopWalker) notYetTextLoop() bool {
	if w.notYetText == 0 {
		w.notYetText = 2
		ast.Inspect(w.loop, func(n ast.Node) bool {
			b, ok := n.(*ast.BinaryExpr)
			if !ok || b.Op != token.EQL && b.Op != token.NEQ {
				return w.notYetText == 2
			}
			if _, k, ok := w.c.textCompare(b.X, b.Y); ok && w.c.returnsNotYetText(w.attemptCall, k) {
				w.notYetText = 1
			}
			return w.notYetText == 2
		})
	}
	return w.notYetText == 1
}

// returnsNotYetText reports whether call is of a function of this package
// that reads no HTTP status and returns an error whose message is the
// constant k, made there (errors.New(k), fmt.Errorf(k), fmt.Errorf("%s",
// k)), outside every test of an error and after its first checked call.
func (c *checker) returnsNotYetText(call *ast.CallExpr, k string) bool {
	if call == nil {
		return false
	}
	return c.returnsAfterCheck(c.decls[c.callee(call)], func(x ast.Expr) bool { return c.madeOfText(x, k) })
}

// madeOfText reports whether e makes an error whose message is k.
func (c *checker) madeOfText(e ast.Expr, k string) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	fn := c.callee(call)
	isNew := isFunc(fn, "errors", "New") || isFunc(fn, "github.com/pkg/errors", "New")
	isf := isFunc(fn, "fmt", "Errorf") || isFunc(fn, "github.com/pkg/errors", "Errorf")
	str := func(e ast.Expr) (string, bool) {
		tv, ok := c.info.Types[e]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
			return "", false
		}
		return constant.StringVal(tv.Value), true
	}
	switch {
	case (isNew || isf) && len(call.Args) == 1:
		s, ok := str(call.Args[0])
		return ok && s == k
	case isf && len(call.Args) == 2:
		f, ok1 := str(call.Args[0])
		s, ok2 := str(call.Args[1])
		return ok1 && ok2 && (f == "%s" || f == "%v") && s == k
	}
	return false
}
