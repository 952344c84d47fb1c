package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"
)

// sethgrid/pester's Client re-sends a request on a transport error or any
// 5xx (and a 429 when RetryOnHTTP429 is set), up to MaxRetries attempts
// (three by default), after Backoff(i): DefaultBackoff's constant second
// unless the code picks another; only ExponentialJitterBackoff and
// LinearJitterBackoff are randomised. It never reads Retry-After. The
// package's own Do, Get, Head, Post and PostForm send through its
// DefaultClient, with the defaults.
const pesterPath = "github.com/sethgrid/pester"

// pesterClient reports a pester Client the function makes (New,
// NewExtendedClient) and configures in sight, or a send through the
// package's DefaultClient: nojitter when its Backoff is one of the
// package's unrandomised ones, retryafter since it re-sends a 503 (a 429
// too when told) on its own schedule; nothing when it makes one attempt.
func (c *checker) pesterClient(call *ast.CallExpr, decl *ast.BlockStmt) {
	f := c.callee(call)
	if f == nil || funcPath(f) != pesterPath || recvNamed(f) != nil {
		return
	}
	sched, told429 := schedPure, false
	switch f.Name() {
	case "Do", "Get", "Head", "Post", "PostForm":
	case "New", "NewExtendedClient":
		v := c.assignedTo(call, decl)
		if v == nil {
			return // handed on: configured elsewhere
		}
		var ok bool
		if sched, told429, ok = c.pesterConfig(v, decl); !ok {
			return
		}
	default:
		return
	}
	name := c.callName(call)
	if sched == schedPure {
		c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s re-sends a failed request on a schedule with no jitter (pester's DefaultBackoff, ExponentialBackoff or LinearBackoff): clients that failed together retry together; set Backoff to pester.ExponentialJitterBackoff, or use recoil", name)})
	}
	which := []string{"503"}
	if told429 {
		which = []string{"429", "503"}
	}
	c.add(finding{check: CheckRetryAfter, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s re-sends %s without reading Retry-After: the server said when to come back; use recoilhttp.Transport, which waits what it says", name, strings.Join(which, " and "))})
}

// pesterConfig reads what the function sets on the Client v: the
// schedule of its Backoff (pure unless one of the jittered strategies,
// unknown when it is not one of the package's), whether a 429 goes round,
// and ok false when MaxRetries allows a single attempt.
func (c *checker) pesterConfig(v *types.Var, decl *ast.BlockStmt) (sched int, told429, ok bool) {
	sched = schedPure
	if e, set := c.lastFieldSet(v, decl, "Backoff"); set {
		bf := c.funcObj(e)
		switch {
		case bf == nil || funcPath(bf) != pesterPath:
			sched = schedUnknown
		case strings.Contains(bf.Name(), "Jitter"):
			sched = schedJitter
		}
	}
	if e, set := c.lastFieldSet(v, decl, "MaxRetries"); set {
		if n, known := c.constIntOf(e); known && n <= 1 {
			return 0, false, false
		}
	}
	if e, set := c.lastFieldSet(v, decl, "RetryOnHTTP429"); set {
		told429, _ = c.constBool(e)
	}
	ast.Inspect(decl, func(n ast.Node) bool {
		if m, ok := n.(*ast.CallExpr); ok && len(m.Args) == 1 {
			if sel, ok := ast.Unparen(m.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "SetRetryOnHTTP429" && c.varOf(sel.X) == v {
				told429, _ = c.constBool(m.Args[0])
			}
		}
		return true
	})
	return sched, told429, true
}

// funcObj is the function a function value names (pester.DefaultBackoff),
// or nil.
func (c *checker) funcObj(e ast.Expr) *types.Func {
	f, _ := c.info.Uses[calleeIdent(e)].(*types.Func)
	return f
}

// assignedTo is the local variable call's value is given to (c :=
// pester.New()), or nil.
func (c *checker) assignedTo(call *ast.CallExpr, decl *ast.BlockStmt) *types.Var {
	var out *types.Var
	ast.Inspect(decl, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || ast.Unparen(as.Rhs[0]) != ast.Expr(call) {
			return out == nil
		}
		out = c.varOf(as.Lhs[0])
		return false
	})
	return out
}
