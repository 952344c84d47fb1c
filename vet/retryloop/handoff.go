package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
)

// sleepHandedOn reports time.Sleep handed to another function as a value
// (retry(sleeperFunc(time.Sleep), 3, d, max, dial)) while a context is in
// scope: whatever waits with it cannot hear the context (deafwait).
func (c *checker) sleepHandedOn(call *ast.CallExpr) {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		return // the conversion itself: the call it goes to is judged
	}
	for _, a := range call.Args {
		e := ast.Unparen(a)
		if conv, ok := e.(*ast.CallExpr); ok && len(conv.Args) == 1 {
			if tv, ok := c.info.Types[conv.Fun]; ok && tv.IsType() {
				e = ast.Unparen(conv.Args[0]) // sleeperFunc(time.Sleep)
			}
		}
		id := calleeIdent(e)
		if id == nil {
			continue
		}
		fn, ok := c.info.Uses[id].(*types.Func)
		if !ok || !isFunc(fn, "time", "Sleep") {
			continue
		}
		if ctx := c.ctxName(call.Pos()); ctx != "" {
			c.add(finding{check: CheckDeafWait, pos: a.Pos(), end: a.End(),
				msg: fmt.Sprintf("time.Sleep handed to %s cannot hear %s: the caller's cancellation and deadline go unheard; hand it a wait that selects on %s.Done()", c.callName(call), ctx, ctx)})
		}
	}
}
