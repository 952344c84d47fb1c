package retryloop

import (
	"go/ast"
	"go/token"
)

// gatesAttempt reports whether the if s, a statement of the loop's own
// body with no else, holds the loop's attempt (first made in its body:
// before was the attempt before it was walked), and only waits follow it
// in the loop's body: `if time.Since(last) > d { if err := connect(); err
// == nil { return } }; time.Sleep(d)`. Its way past makes no attempt.
func (w *loopWalker) gatesAttempt(s *ast.IfStmt, before token.Pos) bool {
	fs, ok := w.loop.(*ast.ForStmt)
	if !ok || s.Else != nil || before != token.NoPos || w.depth > 0 {
		return false
	}
	if w.attempt == token.NoPos || w.attempt < s.Body.Pos() || w.attempt >= s.Body.End() {
		return false
	}
	list := fs.Body.List
	for i, st := range list {
		if st != s {
			continue
		}
		for _, after := range list[i+1:] {
			if !w.isWaitStmt(after) {
				return false
			}
		}
		return true
	}
	return false
}

// isWaitStmt reports whether st only waits: time.Sleep(d), or a select
// whose every case only receives, its value dropped (<-time.After(d),
// <-ctx.Done()).
func (w *loopWalker) isWaitStmt(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.ExprStmt:
		call, ok := st.X.(*ast.CallExpr)
		return ok && isFunc(w.c.callee(call), "time", "Sleep")
	case *ast.SelectStmt:
		for _, cl := range st.Body.List {
			cc := cl.(*ast.CommClause)
			if cc.Comm == nil {
				return false
			}
			if _, recv := cc.Comm.(*ast.ExprStmt); !recv {
				return false
			}
		}
		return true
	}
	return false
}
