package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"
)

// cloudevents/sdk-go retries a Send on the parameters a context carries:
// ContextWithRetriesConstantBackoff, …LinearBackoff and …ExponentialBackoff
// (aliases of its context package's WithRetries… functions) set a period
// and a count, and its HTTP protocol waits RetryParams.BackoffFor(tries)
// between attempts: the period, the period times the tries, or the period
// times 2^tries, never randomised.
const ceContextPath = "github.com/cloudevents/sdk-go/v2/context"

// cloudEventsRetries reports such a context made with a period and a count
// that are not a constant zero: every event sent under it that fails waits
// the same steps as every other client's.
func (c *checker) cloudEventsRetries(call *ast.CallExpr) {
	name, ok := c.ceRetriesFunc(call)
	if !ok || len(call.Args) != 3 || c.isZero(call.Args[1]) || c.isZero(call.Args[2]) {
		return
	}
	c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s makes cloudevents' sends retry on a schedule with no jitter (RetryParams.BackoffFor): clients that failed together retry together; retry the send yourself with jittered waits, or use recoil", name)})
}

// ceRetriesFunc names the cloudevents function call calls, when it is one
// of the WithRetries… backoffs (or the v2 package's ContextWithRetries…
// alias of one).
func (c *checker) ceRetriesFunc(call *ast.CallExpr) (string, bool) {
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.Ident:
		id = f
	}
	if id == nil {
		return "", false
	}
	obj := c.info.Uses[id]
	if obj == nil || obj.Pkg() == nil {
		return "", false
	}
	path, name := obj.Pkg().Path(), obj.Name()
	switch obj.(type) {
	case *types.Func:
		if path != ceContextPath || !strings.HasPrefix(name, "WithRetries") {
			return "", false
		}
	case *types.Var:
		if path != "github.com/cloudevents/sdk-go/v2" || !strings.HasPrefix(name, "ContextWithRetries") {
			return "", false
		}
	default:
		return "", false
	}
	if !strings.HasSuffix(name, "Backoff") {
		return "", false
	}
	return types.ExprString(call.Fun), true
}
