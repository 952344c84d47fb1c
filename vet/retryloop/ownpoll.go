package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
)

// An SDK often keeps a poll helper of its own, apimachinery's Poll in
// small: WaitFor(timeout, predicate) sleeps a constant second, asks the
// predicate, returns its error, ends on true and goes round on (false,
// nil). A caller's predicate that answers (false, nil) on a failure it
// tested (a 400 while the resource is still in use, an error swallowed
// and logged) makes the call a retry loop on the helper's constant
// schedule, as a wait.Poll condition does.

// ownPollCond returns one more than the index of fn's parameter of type
// func(…) (bool, error) that a loop in fn's body asks each round (called
// there, or in a goroutine or literal inside the loop), when that loop
// waits a constant or purely exponential time each round; or 0.
func (c *checker) ownPollCond(fn *types.Func, d *ast.FuncDecl) int {
	sig := fn.Type().(*types.Signature)
	param := -1
	for i := range sig.Params().Len() {
		if condSig(sig.Params().At(i).Type()) {
			if param >= 0 {
				return 0 // two conditions: not a poll helper's shape
			}
			param = i
		}
	}
	if param < 0 {
		return 0
	}
	p := sig.Params().At(param)
	found := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch l := n.(type) {
		case *ast.ForStmt:
			body = l.Body
		case *ast.RangeStmt:
			body = l.Body
		default:
			return !found
		}
		if c.mentionsVar(body, p) && c.pureWaitIn(body, d.Body, fn) {
			found = true
		}
		return !found
	})
	if !found {
		return 0
	}
	return param + 1
}

// condSig reports whether t is a func type answering (bool, error).
func condSig(t types.Type) bool {
	sig, ok := t.Underlying().(*types.Signature)
	if !ok || sig.Results().Len() != 2 || !isError(sig.Results().At(1).Type()) {
		return false
	}
	b, ok := sig.Results().At(0).Type().Underlying().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// pureWaitIn reports whether body, outside literals and goroutines,
// waits a constant or purely exponential time.
func (c *checker) pureWaitIn(body, decl *ast.BlockStmt, fn *types.Func) bool {
	for _, lw := range c.waitsIn(body, decl, fn) {
		if lw.w.dur.kind == pPure {
			return true
		}
	}
	return false
}

// ownPollRetry reports a call of a poll helper of the package's own (by
// its PollCond fact) whose condition goes round on a failure: nojitter,
// the helper's constant schedule being the retry's.
func (c *checker) ownPollRetry(call *ast.CallExpr, decl *ast.BlockStmt) {
	callee := c.callee(call)
	if callee == nil || funcPath(callee) == kWaitPath {
		return
	}
	f := c.fact(callee)
	if f == nil || f.PollCond == 0 || f.PollCond > len(call.Args) {
		return
	}
	why, ok := c.failureRound(call.Args[f.PollCond-1], decl)
	if !ok {
		return
	}
	c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s goes round on a failure (%s) at the constant interval it polls at: clients that failed together retry together; retry the failure with a jittered backoff, or use recoil", c.callName(call), why)})
}
