package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A counted loop bounds only the rounds that count:
//
//	for try < 3 {
//		resp, err = hc.Do(req)
//		if err != nil {
//			try++
//			time.Sleep(100 * time.Millisecond)
//			continue
//		}
//		if resp.StatusCode != http.StatusOK {
//			time.Sleep(100 * time.Millisecond)
//			continue // never counted: a 400 is sent for ever
//		}
//		break
//	}
//
// A way round that a failure takes and that passes no step of the
// condition's counter leaves that failure unbounded by it.

// uncountedRound reports whether the for loop fs, whose condition tests
// local counters its post statement does not step, has a way round that
// a failure of the attempt takes and that passes no step of them.
func (c *checker) uncountedRound(fs *ast.ForStmt, w *loopWalker, k int) bool {
	counters := c.condCounters(fs.Cond)
	if len(counters) == 0 || fs.Post != nil && len(c.counterSteps(fs.Post, counters)) > 0 {
		return false
	}
	steps := c.counterSteps(fs.Body, counters)
	for i, g := range w.gorounds {
		at := w.goPos[i]
		if w.attempt == token.NoPos || at < w.attempt || c.countedOnWay(fs.Body, steps, at) {
			continue
		}
		for _, o := range outcomes(k) {
			if o.failure() && w.reaches([]state{g}, k, o) == triT {
				return true
			}
		}
	}
	return false
}

// condCounters returns the local integer variables a loop condition
// compares (try in try < 3).
func (c *checker) condCounters(cond ast.Expr) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	ast.Inspect(cond, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok {
			return true
		}
		switch b.Op {
		case token.LSS, token.LEQ, token.GTR, token.GEQ:
			for _, x := range []ast.Expr{b.X, b.Y} {
				id, ok := ast.Unparen(x).(*ast.Ident)
				if !ok {
					continue
				}
				if v, ok := c.info.Uses[id].(*types.Var); ok && !v.IsField() && !isPkgVar(v) && isIntegerNotDuration(v.Type()) {
					out[v] = true
				}
			}
		}
		return true
	})
	return out
}

// counterSteps returns the statements of n that change one of vars (v++,
// v--, v += d, v = …), outside function literals.
func (c *checker) counterSteps(n ast.Node, vars map[*types.Var]bool) []ast.Stmt {
	var out []ast.Stmt
	is := func(e ast.Expr) bool { return vars[c.varOf(e)] }
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IncDecStmt:
			if is(m.X) {
				out = append(out, m)
			}
		case *ast.AssignStmt:
			for _, l := range m.Lhs {
				if is(l) {
					out = append(out, m)
					break
				}
			}
		}
		return true
	})
	return out
}

// countedOnWay reports whether one of steps may lie on the way from the
// round's start to at: before it, and in no block that at is not in and
// that ends by leaving (continue, return, break, goto) before reaching
// it. A step in a branch that falls through is taken to be on the way.
func (c *checker) countedOnWay(body *ast.BlockStmt, steps []ast.Stmt, at token.Pos) bool {
	for _, st := range steps {
		if st.Pos() >= at {
			continue
		}
		if !leftBefore(body, st, at) {
			return true
		}
	}
	return false
}

// leftBefore reports whether a block of body that holds st but not at
// ends by leaving: the way through st never reaches at.
func leftBefore(body *ast.BlockStmt, st ast.Stmt, at token.Pos) bool {
	left := false
	ast.Inspect(body, func(n ast.Node) bool {
		b, ok := n.(*ast.BlockStmt)
		if !ok || left {
			return !left
		}
		if b.Pos() <= st.Pos() && st.End() <= b.End() && !(b.Pos() <= at && at < b.End()) && len(b.List) > 0 {
			if br, ok := b.List[len(b.List)-1].(*ast.BranchStmt); ok && br.Tok != token.FALLTHROUGH {
				left = true
			}
			if _, ok := b.List[len(b.List)-1].(*ast.ReturnStmt); ok {
				left = true
			}
		}
		return true
	})
	return left
}
