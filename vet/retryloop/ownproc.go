package retryloop

import (
	"go/ast"
	"go/types"
)

// startsProcess reports whether fn is os/exec's Cmd.Start, which forks a
// process and leaves it running (a daemon the caller then dials), or a
// function of this package that calls it, directly or through one more
// such function.
func (c *checker) startsProcess(fn *types.Func, depth int) bool {
	if fn == nil {
		return false
	}
	if funcPath(fn) == "os/exec" && recvNamed(fn) != nil && fn.Name() == "Start" {
		return true
	}
	d := c.decls[fn]
	if d == nil || d.Body == nil || depth >= 2 {
		return false
	}
	found := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			found = c.startsProcess(c.callee(call), depth+1)
		}
		return !found
	})
	return found
}
