package retryloop

import (
	"go/ast"
	"go/types"
	"strings"
)

// servesConn reports whether a loop's attempt reads or writes a connection
// a server was handed: the call passes a net.Conn (or is a method of one)
// that is a parameter of a method of a type named …Handler or …Server
// (nsqlookupd's TCPHandler reading a client's commands). Going round
// after a temporary error asks the same socket again, on this side of a
// connection the peer opened: no dependency behind it to spread out for,
// as in a server's accept loop.
func (c *checker) servesConn(call *ast.CallExpr, fc funcCtx) bool {
	fn := fc.fn
	if fn == nil {
		fn = fc.outer
	}
	if call == nil || fn == nil || !serverType(fn) {
		return false
	}
	params := fn.Signature().Params()
	isParamConn := func(e ast.Expr) bool {
		v := c.varOf(e)
		if v == nil || !isConn(v.Type()) {
			return false
		}
		for i := range params.Len() {
			if params.At(i) == v {
				return true
			}
		}
		return false
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && isParamConn(sel.X) {
		return true
	}
	for _, a := range call.Args {
		if isParamConn(a) {
			return true
		}
	}
	return false
}

// serverType reports whether fn is a method of a type whose name ends in
// Handler or Server.
func serverType(fn *types.Func) bool {
	named := recvNamed(fn)
	if named == nil {
		return false
	}
	name := named.Obj().Name()
	return strings.HasSuffix(name, "Handler") || strings.HasSuffix(name, "Server")
}

// isConn reports whether t is net.Conn or one of net's connection types.
func isConn(t types.Type) bool {
	for _, name := range []string{"Conn", "TCPConn", "UnixConn"} {
		if isNamed(t, "net", name) {
			return true
		}
	}
	return false
}
