package retryloop

import (
	"go/ast"
	"go/types"
	"strings"
)

// startsProcess reports whether fn is os/exec's Cmd.Start, which forks a
// process and leaves it running (a daemon the caller then dials), or a
// function of this package that calls it and takes none of the child's
// pipes: a process that talks over its stdin and stdout (ssh, docker
// exec) is a transport to somewhere else, not a server of this machine.
func (c *checker) startsProcess(fn *types.Func) bool {
	if fn == nil {
		return false
	}
	if isCmdMethod(fn) && fn.Name() == "Start" {
		return true
	}
	d := c.decls[fn]
	if d == nil || d.Body == nil {
		return false
	}
	starts, pipes := false, false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if m := c.callee(call); isCmdMethod(m) {
				starts = starts || m.Name() == "Start"
				pipes = pipes || strings.HasSuffix(m.Name(), "Pipe")
			}
		}
		return true
	})
	return starts && !pipes
}

// isCmdMethod reports whether fn is a method of os/exec's Cmd.
func isCmdMethod(fn *types.Func) bool {
	return fn != nil && funcPath(fn) == "os/exec" && recvNamed(fn) != nil && recvNamed(fn).Obj().Name() == "Cmd"
}
