package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// consumes reports whether the loop's attempt takes, as an argument, a
// value the loop received from a channel in the same round (case msg, ok
// := <-in:, then needsRetry(msg)): each round handles the next element,
// so one handled after a failure is not the failed one again.
func (c *checker) consumes(attempt *ast.CallExpr, loop ast.Stmt) bool {
	if attempt == nil {
		return false
	}
	received := map[types.Object]bool{}
	ast.Inspect(loop, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		if u, ok := ast.Unparen(as.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			if id, ok := as.Lhs[0].(*ast.Ident); ok {
				if o := c.objOf(id); o != nil {
					received[o] = true
				}
			}
		}
		return true
	})
	for _, a := range attempt.Args {
		if id, ok := ast.Unparen(a).(*ast.Ident); ok && received[c.info.Uses[id]] {
			return true
		}
	}
	return false
}

// leavesAfter reports whether the statement holding call is followed, in
// its own block, by a return or a goto: the path that waited there leaves
// the loop instead of going round, so the wait is no retry's pause (a
// failed batch handed back before the function gives up). A goto to
// label, the loop's own in a goto loop (see gotoLoops), goes round.
func leavesAfter(call *ast.CallExpr, body *ast.BlockStmt, label *ast.Ident) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		list, ok := stmtList(n)
		if !ok {
			return true
		}
		for i, s := range list {
			if s.Pos() > call.Pos() || call.End() > s.End() {
				continue
			}
			switch s := s.(type) {
			case *ast.ExprStmt, *ast.AssignStmt, *ast.DeclStmt:
			case *ast.IfStmt:
				if !inIfHead(s, call) {
					continue // in a branch: that block decides
				}
			default:
				continue // deeper, in a block or clause that decides
			}
			for _, after := range list[i+1:] {
				switch a := after.(type) {
				case *ast.ReturnStmt:
					found = true
				case *ast.BranchStmt:
					found = found || a.Tok == token.GOTO && (label == nil || a.Label == nil || a.Label.Name != label.Name)
				}
			}
		}
		return true
	})
	return found
}

// inIfHead reports whether call is in an if statement's init or condition.
func inIfHead(s *ast.IfStmt, call *ast.CallExpr) bool {
	in := func(n ast.Node) bool {
		return n != nil && n.Pos() <= call.Pos() && call.End() <= n.End()
	}
	return in(s.Init) || in(s.Cond)
}

// overElements reports whether s ranges over a channel, slice, array, map
// or string: each round takes the next element, so a round after a
// failure is not the failed one again.
func (c *checker) overElements(s ast.Stmt) bool {
	t := c.rangedType(s)
	if t == nil {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem() // a pointer to an array
	}
	switch u := t.Underlying().(type) {
	case *types.Chan:
		return !c.clockRange(s) // for range timer.C: a clock's ticks, not elements
	case *types.Slice, *types.Array, *types.Map:
		return true
	case *types.Basic:
		return u.Info()&types.IsString != 0
	}
	return false
}

// memoryRead reports whether fn is a function of this package that only
// reads memory under a lock (a cache lookup between RLock and RUnlock):
// it calls sync or sync/atomic and otherwise only the standard library's
// pure packages — none of its own package's functions — and sends or
// receives on no channel and starts no goroutine, so nothing it does can
// reach another process (a request handed to a connection's goroutine
// would).
func (c *checker) memoryRead(fn *types.Func) bool {
	d := c.decls[fn]
	if d == nil {
		return false
	}
	locked, ok := false, true
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt, *ast.SendStmt, *ast.SelectStmt, *ast.FuncLit:
			ok = false
		case *ast.UnaryExpr:
			ok = ok && n.Op != token.ARROW
		case *ast.CallExpr:
			if tv, isType := c.info.Types[n.Fun]; isType && tv.IsType() {
				return true
			}
			if _, builtin := c.info.Uses[calleeIdent(n.Fun)].(*types.Builtin); builtin {
				return true
			}
			path := funcPath(c.callee(n))
			switch {
			case path == "sync" || path == "sync/atomic":
				locked = true
			case c.callee(n) == nil || c.callee(n).Pkg() == c.pass.Pkg || !pureStdPkg(path):
				ok = false
			}
		}
		return ok
	})
	return ok && locked
}
