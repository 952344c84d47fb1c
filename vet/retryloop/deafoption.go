package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
)

// A retry helper may take its pause as an option it calls before each
// attempt: retry.Do(op, retry.Limit(10), retry.FibBackoff(time.Second)),
// FibBackoff returning a func that sleeps. The sleep is in the option's
// literal, made in another function and called in a third; the call that
// hands the option on is where the caller waits, deaf to its context.

// returnsSleeper reports whether fn's only result is a func and one of its
// returns is a literal whose body calls time.Sleep (nested literals and
// goroutines aside).
func (c *checker) returnsSleeper(fn *types.Func, d *ast.FuncDecl) bool {
	if fn == nil || d.Body == nil {
		return false
	}
	res := fn.Type().(*types.Signature).Results()
	if res.Len() != 1 {
		return false
	}
	if _, ok := res.At(0).Type().Underlying().(*types.Signature); !ok {
		return false
	}
	found := false
	returnsUnderIfs(d.Body, func(r *ast.ReturnStmt, _ []*ast.IfStmt) bool {
		if len(r.Results) == 1 {
			if lit, ok := ast.Unparen(r.Results[0]).(*ast.FuncLit); ok && c.sleepsIn(lit.Body) {
				found = true
			}
		}
		return !found
	})
	return found
}

// sleepsIn reports whether body calls time.Sleep outside nested literals
// and goroutines.
func (c *checker) sleepsIn(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.CallExpr:
			if fn := c.callee(n); fn != nil && recvNamed(fn) == nil && isFunc(fn, "time", "Sleep") {
				found = true
			}
		}
		return !found
	})
	return found
}

// deafOption returns the argument of call that is a call of a function
// returning a sleeping option (see returnsSleeper), and its name.
func (c *checker) deafOption(call *ast.CallExpr) (string, bool) {
	for _, a := range call.Args {
		inner, ok := ast.Unparen(a).(*ast.CallExpr)
		if !ok {
			continue
		}
		if f := c.fact(c.callee(inner)); f != nil && f.DeafOption {
			return c.callName(inner), true
		}
	}
	return "", false
}

// isRican7Retry reports a call of Rican7/retry's Retry, whose sleeping
// strategies libraryRetry judges.
func (c *checker) isRican7Retry(call *ast.CallExpr) bool {
	fn := c.callee(call)
	return fn != nil && funcPath(fn) == rican7Path && fn.Name() == "Retry"
}

// deafOptionMsg is deafwait's message for a call handed a sleeping option.
func (c *checker) deafOptionMsg(call *ast.CallExpr, opt, ctx string) string {
	return fmt.Sprintf("%s waits with time.Sleep in its option %s and cannot hear %s: the caller's cancellation and deadline go unheard; give it an option that selects on %s.Done(), or use recoil", c.callName(call), opt, ctx, ctx)
}
