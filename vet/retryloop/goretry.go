package retryloop

import (
	"go/ast"
	"go/types"
)

// sethvargo/go-retry's call sites: the schedule its Backoff is built
// with, and whether anything but success ends the retry.

// goRetryCall is the schedule of a sethvargo/go-retry call: Constant,
// Exponential and Fibonacci have none of their own jitter; Do and DoValue
// wait what their Backoff argument says.
func (c *checker) goRetryCall(callee *types.Func, call *ast.CallExpr, decl *ast.BlockStmt, fn *types.Func) int {
	switch callee.Name() {
	case "Constant", "Exponential", "Fibonacci":
		return schedPure
	case "Do", "DoValue":
		if len(call.Args) == 3 {
			return c.goRetryBackoff(call.Args[1], decl, fn, 0)
		}
	}
	return schedUnknown
}

// goRetryForever reports a go-retry call with nothing to end it but
// success: its context is context.Background() or TODO() (in place, or
// in a variable given only that), and its backoff, made where the
// analyzer can see, is wrapped by no WithMaxRetries or WithMaxDuration
// (Constant, Exponential and Fibonacci take none).
func (c *checker) goRetryForever(callee *types.Func, call *ast.CallExpr, decl *ast.BlockStmt) bool {
	if len(call.Args) != 3 || !c.backgroundCtx(call.Args[0], decl) {
		return false
	}
	switch callee.Name() {
	case "Constant", "Exponential", "Fibonacci":
		return true
	case "Do", "DoValue":
		return c.goRetryUncapped(call.Args[1], decl, 0)
	}
	return false
}

// backgroundCtx reports whether e is context.Background() or
// context.TODO(), or a variable body gives only those.
func (c *checker) backgroundCtx(e ast.Expr, body *ast.BlockStmt) bool {
	srcs := c.sources(e, body, 0)
	for _, s := range srcs {
		call, ok := s.e.(*ast.CallExpr)
		if !ok || !isFunc(c.callee(call), "context", "Background", "TODO") {
			return false
		}
	}
	return len(srcs) > 0
}

// goRetryUncapped reports whether every way e's backoff is made is a
// go-retry constructor with no WithMaxRetries or WithMaxDuration around
// it; a backoff made out of sight may be capped, so it is not.
func (c *checker) goRetryUncapped(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	srcs := c.sources(e, body, depth)
	if len(srcs) == 0 || depth > 8 {
		return false
	}
	for _, s := range srcs {
		call, ok := s.e.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return false
		}
		f := c.callee(call)
		if f == nil || !isModule(funcPath(f), goRetryPath) {
			return false
		}
		switch f.Name() {
		case "NewConstant", "NewExponential", "NewFibonacci":
		case "WithJitter", "WithJitterPercent", "WithCappedDuration":
			if !c.goRetryUncapped(call.Args[len(call.Args)-1], s.body, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// goRetryBackoff is the schedule of a go-retry Backoff: jittered if a
// WithJitter or WithJitterPercent wraps it; pure if it is made by
// NewConstant, NewExponential or NewFibonacci, or is a BackoffFunc whose
// durations are constant, and the other wrappers (WithMaxRetries,
// WithCappedDuration, WithMaxDuration) add no randomness.
func (c *checker) goRetryBackoff(e ast.Expr, body *ast.BlockStmt, fn *types.Func, depth int) int {
	srcs := c.sources(e, body, depth)
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		// b = retry.WithMaxRetries(5, b), go-retry's own idiom: the
		// wrapper keeps what b already was, its other values.
		if v, ok := c.info.Uses[id].(*types.Var); ok {
			kept := srcs[:0:0]
			for _, s := range srcs {
				if !c.goRetryRewraps(s.e, v) {
					kept = append(kept, s)
				}
			}
			srcs = kept
		}
	}
	if len(srcs) == 0 || depth > 8 {
		return schedUnknown
	}
	return joinSources(srcs, func(s source) int { return c.goRetryMade(s, fn, depth) })
}

// goRetryRewraps reports whether e wraps v itself in go-retry's wrappers
// that add no wait of their own (WithMaxRetries, WithCappedDuration,
// WithMaxDuration), one inside another.
func (c *checker) goRetryRewraps(e ast.Expr, v *types.Var) bool {
	for range 8 {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			id, isID := ast.Unparen(e).(*ast.Ident)
			return isID && c.info.Uses[id] == v
		}
		f := c.callee(call)
		if f == nil || !isModule(funcPath(f), goRetryPath) {
			return false
		}
		switch f.Name() {
		case "WithMaxRetries", "WithCappedDuration", "WithMaxDuration":
			e = call.Args[len(call.Args)-1]
		default:
			return false
		}
	}
	return false
}

func (c *checker) goRetryMade(s source, fn *types.Func, depth int) int {
	call, ok := s.e.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return schedUnknown
	}
	if tn := c.typeNameOf(call.Fun); tn != nil {
		// retry.BackoffFunc(func() (time.Duration, bool) { … })
		if tn.Pkg() == nil || !isModule(tn.Pkg().Path(), goRetryPath) || tn.Name() != "BackoffFunc" {
			return schedUnknown
		}
		return c.litSchedule(call.Args[0], s.body, fn)
	}
	callee := c.callee(call)
	if callee == nil || !isModule(funcPath(callee), goRetryPath) {
		return schedUnknown
	}
	switch callee.Name() {
	case "WithJitter", "WithJitterPercent":
		return schedJitter
	case "NewConstant", "NewExponential", "NewFibonacci":
		return schedPure
	case "WithMaxRetries", "WithCappedDuration", "WithMaxDuration":
		return c.goRetryBackoff(call.Args[len(call.Args)-1], s.body, fn, depth+1)
	}
	return schedUnknown
}
