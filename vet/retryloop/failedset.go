package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A batch is retried by its failures: each round tries every item of a
// work set, keeps the ones that failed, leaves when none did, and makes
// the failures the next round's work set:
//
//	for i := 0; ; i++ {
//		failed := map[string]op{}
//		for k, op := range batch {
//			if err := apply(op); err != nil {
//				failed[k] = op
//			}
//		}
//		if len(failed) == 0 {
//			break
//		}
//		batch = failed
//		time.Sleep(delays[i])
//	}
//
// No single call's outcome decides the round, so the walk sees a loop
// that goes round whatever its attempt answers; but the wait after the
// empty-set test is reached only when some item failed, and paces the
// items' retries like any retry's wait.

// failedSetWaits returns the waits of a loop of that shape that come
// after its empty-set test; or, when the loop's own condition asks that
// the work set hold something (for len(errIdx) > 0 && round < 10), every
// wait of its body outside the range that tries the items.
func (c *checker) failedSetWaits(s ast.Stmt, sc loopScan) []loopCall {
	body := sc.body
	if body == nil {
		return nil
	}
	var work, failed types.Object
	var rng *ast.RangeStmt
	var test *ast.IfStmt
	reset := map[types.Object]bool{} // errIdxNext = nil before the range
	for _, st := range body.List {
		switch st := st.(type) {
		case *ast.RangeStmt:
			if work == nil {
				work, failed = c.collectsFailures(st, body, reset)
				rng = st
			}
		case *ast.IfStmt:
			if failed != nil && test == nil && c.emptyTest(st, failed) {
				test = st
			}
		case *ast.AssignStmt:
			if work == nil {
				for _, o := range c.emptied(st) {
					reset[o] = true
				}
			}
			if work == nil || !c.assignsObj(st, work, failed) {
				continue
			}
			if test != nil {
				return waitsAfter(sc.waits, test.End(), body.End())
			}
			if fs, ok := s.(*ast.ForStmt); ok && c.testsNonEmpty(fs.Cond, work) {
				// for len(errIdx) > 0 && round < 10 { sleep; …; errIdx = next }:
				// every round but the work itself retries what failed
				return append(waitsAfter(sc.waits, body.Pos(), rng.Pos()), waitsAfter(sc.waits, rng.End(), body.End())...)
			}
		}
	}
	return nil
}

// emptied returns the variables st sets to an empty set: s = nil, s =
// s[:0], s = []T{}, s = map[K]V{}, s = make(…).
func (c *checker) emptied(st *ast.AssignStmt) []types.Object {
	var out []types.Object
	if len(st.Lhs) != len(st.Rhs) {
		return nil
	}
	for i, l := range st.Lhs {
		id, ok := ast.Unparen(l).(*ast.Ident)
		if !ok {
			continue
		}
		empty := false
		switch r := ast.Unparen(st.Rhs[i]).(type) {
		case *ast.Ident:
			empty = isNil(c.info, r)
		case *ast.CompositeLit:
			empty = len(r.Elts) == 0
		case *ast.SliceExpr:
			lit, ok := r.High.(*ast.BasicLit)
			empty = ok && lit.Value == "0"
		case *ast.CallExpr:
			b, ok := c.info.Uses[calleeIdent(r.Fun)].(*types.Builtin)
			empty = ok && b.Name() == "make"
		}
		if o := c.objOf(id); empty && o != nil {
			out = append(out, o)
		}
	}
	return out
}

// testsNonEmpty reports whether cond asks that set hold something:
// len(set) > 0 or len(set) != 0, alone or in a conjunction.
func (c *checker) testsNonEmpty(cond ast.Expr, set types.Object) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if b.Op == token.LAND {
		return c.testsNonEmpty(b.X, set) || c.testsNonEmpty(b.Y, set)
	}
	return (b.Op == token.GTR || b.Op == token.NEQ) && c.lenAgainstZero(b, set)
}

// lenAgainstZero reports whether b compares the builtin len of set with
// the literal 0: len(set) == 0, len(set) > 0.
func (c *checker) lenAgainstZero(b *ast.BinaryExpr, set types.Object) bool {
	call, ok := ast.Unparen(b.X).(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	if fn, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); !ok || fn.Name() != "len" {
		return false
	}
	arg, ok := ast.Unparen(call.Args[0]).(*ast.Ident)
	lit, isLit := ast.Unparen(b.Y).(*ast.BasicLit)
	return ok && c.info.Uses[arg] == set && isLit && lit.Value == "0"
}

// collectsFailures reports, for a range over a variable, the variable and
// the set, declared in the loop's body or emptied there before the range,
// that the range's error branch adds the item to (failed[k] = op, failed =
// append(failed, op)).
func (c *checker) collectsFailures(r *ast.RangeStmt, body *ast.BlockStmt, reset map[types.Object]bool) (work, failed types.Object) {
	x, ok := ast.Unparen(r.X).(*ast.Ident)
	if !ok || c.info.Uses[x] == nil {
		return nil, nil
	}
	ast.Inspect(r.Body, func(n ast.Node) bool {
		is, ok := n.(*ast.IfStmt)
		if !ok || failed != nil || !c.testsErr(is.Cond) {
			return failed == nil
		}
		for _, st := range is.Body.List {
			if o := c.addedTo(st); o != nil && (reset[o] || o.Pos() > body.Lbrace && o.Pos() < body.Rbrace) {
				failed = o
			}
		}
		return failed == nil
	})
	if failed == nil {
		return nil, nil
	}
	return c.info.Uses[x], failed
}

// testsErr reports whether cond is err != nil for an error err.
func (c *checker) testsErr(cond ast.Expr) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	return ok && b.Op == token.NEQ && isError(c.info.TypeOf(b.X)) && isNil(c.info, b.Y)
}

// addedTo is the set a statement adds to: s[k] = v, or s = append(s, v).
func (c *checker) addedTo(st ast.Stmt) types.Object {
	as, ok := st.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || as.Tok != token.ASSIGN {
		return nil
	}
	switch l := ast.Unparen(as.Lhs[0]).(type) {
	case *ast.IndexExpr:
		if id, ok := ast.Unparen(l.X).(*ast.Ident); ok {
			return c.info.Uses[id]
		}
	case *ast.Ident:
		call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return nil
		}
		if _, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); !ok || calleeIdent(call.Fun).Name != "append" {
			return nil
		}
		if first, ok := ast.Unparen(call.Args[0]).(*ast.Ident); ok && c.info.Uses[first] == c.info.Uses[l] {
			return c.info.Uses[l]
		}
	}
	return nil
}

// emptyTest reports whether is leaves the loop when set is empty: if
// len(set) == 0 { break } (or return).
func (c *checker) emptyTest(is *ast.IfStmt, set types.Object) bool {
	b, ok := ast.Unparen(is.Cond).(*ast.BinaryExpr)
	if !ok || b.Op != token.EQL || !c.lenAgainstZero(b, set) {
		return false
	}
	leaves := false
	for _, st := range is.Body.List {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			leaves = true
		case *ast.BranchStmt:
			leaves = leaves || st.Tok == token.BREAK
		}
	}
	return leaves
}

// assignsObj reports whether st is dst = src.
func (c *checker) assignsObj(st *ast.AssignStmt, dst, src types.Object) bool {
	if len(st.Lhs) != 1 || len(st.Rhs) != 1 {
		return false
	}
	l, okL := ast.Unparen(st.Lhs[0]).(*ast.Ident)
	r, okR := ast.Unparen(st.Rhs[0]).(*ast.Ident)
	return okL && okR && c.info.Uses[l] == dst && c.info.Uses[r] == src
}

// waitsAfter returns the waits placed between from and to.
func waitsAfter(waits []loopCall, from, to token.Pos) []loopCall {
	var out []loopCall
	for _, lw := range waits {
		if lw.call.Pos() > from && lw.call.Pos() < to {
			out = append(out, lw)
		}
	}
	return out
}

// mergeWaits appends to a the waits of b it does not hold.
func mergeWaits(a, b []loopCall) []loopCall {
	for _, lw := range b {
		dup := false
		for _, x := range a {
			dup = dup || x.call == lw.call
		}
		if !dup {
			a = append(a, lw)
		}
	}
	return a
}
