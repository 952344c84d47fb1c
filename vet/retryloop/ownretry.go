package retryloop

import (
	"go/ast"
	"go/types"
	"strings"
)

// ownRetryWaits returns the waits of body that sit in a loop of the
// function's own which also makes an attempt: a call, other than a wait,
// whose last result is an error, or a bool from outside the standard
// library (a connect that answers ok). Such a wait paces the function's
// own retry, and is judged there, in that loop; to a caller's loop the
// function is an attempt that may block (a pool handing back a channel
// after reconnecting it), not a pause of the caller's, so neither its
// jitter nor its deafness is the caller's to report. A loop of sleeps
// alone (a wait taken in steps that watch a flag) is still a wait.
func (c *checker) ownRetryWaits(body *ast.BlockStmt, waits []*ast.CallExpr) map[*ast.CallExpr]bool {
	if len(waits) == 0 {
		return nil
	}
	isWait := map[*ast.CallExpr]bool{}
	for _, w := range waits {
		isWait[w] = true
	}
	out := map[*ast.CallExpr]bool{}
	var loops []ast.Node
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.ForStmt, *ast.RangeStmt:
			loops = append(loops, n)
			ast.Inspect(loopBody(n), visit)
			loops = loops[:len(loops)-1]
			return false
		case *ast.CallExpr:
			if isWait[n] && len(loops) > 0 && c.attemptsIn(loops[len(loops)-1], isWait) {
				out[n] = true
			}
		}
		return true
	}
	ast.Inspect(body, visit)
	return out
}

// loopBody is a for or range statement's body.
func loopBody(n ast.Node) *ast.BlockStmt {
	switch n := n.(type) {
	case *ast.ForStmt:
		return n.Body
	case *ast.RangeStmt:
		return n.Body
	}
	return nil
}

// attemptsIn reports whether loop's body makes a call that can fail and
// is no wait (see ownRetryWaits).
func (c *checker) attemptsIn(loop ast.Node, isWait map[*ast.CallExpr]bool) bool {
	found := false
	ast.Inspect(loopBody(loop), func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.CallExpr:
			if isWait[n] {
				return false // every wait of the body is in isWait already
			}
			callee := c.callee(n)
			if callee == nil || c.mentionsContext(n.Fun) {
				return true // ctx.Err(): the caller's, not an attempt
			}
			switch funcPath(callee) {
			case "errors", "fmt", "context":
				return true // an error made, not a call that failed
			}
			if lastResultIsError(callee) || (lastResultIsBool(callee) && !stdPath(funcPath(callee))) {
				found = true
			}
		}
		return !found
	})
	return found
}

// lastResultIsBool reports whether fn's last result is a bool.
func lastResultIsBool(fn *types.Func) bool {
	res := fn.Signature().Results()
	return res.Len() > 0 && isBool(res.At(res.Len()-1).Type())
}

// stdPath reports whether a package path is the standard library's (no
// dot in its first element).
func stdPath(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
