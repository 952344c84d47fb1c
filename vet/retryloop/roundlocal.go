package retryloop

import (
	"go/ast"
	"go/types"
)

// A count or a clock bounds a retry loop only if it carries over from one
// round to the next: an attempt counter, a deadline fixed before the loop,
// the time the loop started. A comparison of values the round has just
// read from the dependency carries nothing over:
//
//	retry:
//		rec, err := store.Get(key)
//		…
//		if time.Now().After(rec.Expiry) { // the old lease ran out
//			if err := store.Put(key, lease); isConflict(err) {
//				time.Sleep(time.Second)
//				goto retry
//			}
//		}
//
// Each round reads a new record, so the test neither counts nor runs out:
// it chooses a branch, and conflicts go round for ever.

// roundLocal reports whether e, a comparison or a clock call on a way out
// of the loop, is made only of values the round makes afresh: it mentions
// a variable declared inside the loop's body, and nothing that carries a
// count or a clock over from round to round, directly or through what the
// round's variables are assigned from.
func (w *loopWalker) roundLocal(e ast.Expr) bool {
	if w == nil || w.body == nil || w.loopBlock() == nil {
		return false
	}
	local, anchored := w.roundVars(e, 0)
	return local && !anchored
}

// roundVars reports whether e mentions a variable declared in the loop's
// body, and whether it is anchored to something that outlives the round:
// a variable from outside the body that carries a count or a clock over
// (see carriesOver), a field of a count, clock or flag type reached from
// outside it (c.deadline, opts.MaxRetries), or a round variable assigned
// from one (or assigned in a way the walk cannot follow, taken as
// anchored).
func (w *loopWalker) roundVars(e ast.Expr, depth int) (local, anchored bool) {
	c := w.c
	ast.Inspect(e, func(n ast.Node) bool {
		if anchored {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			anchored = true // what a closure reads is out of sight
			return false
		case *ast.SelectorExpr:
			root, ok := c.info.Uses[rootIdent(n)].(*types.Var)
			if ok && !w.inBody(root) && carriesBound(c.info.TypeOf(n)) {
				anchored = true // c.deadline, opts.MaxRetries
				return false
			}
		case *ast.Ident:
			v, ok := c.info.Uses[n].(*types.Var)
			if !ok || v.IsField() {
				return true
			}
			if !w.inBody(v) {
				anchored = anchored || w.carriesOver(v)
				return true
			}
			local = true
			if depth >= 3 {
				anchored = true
				return false
			}
			for _, x := range c.assignsOf(w.body)[v] {
				if x == unknownExpr {
					anchored = true
					break
				}
				if _, a := w.roundVars(x, depth+1); a {
					anchored = true
					break
				}
			}
		}
		return !anchored
	})
	return local, anchored
}

// carriesOver reports whether v, declared outside the loop's body, can
// carry a count or a clock from round to round: a time (the moment the
// loop began, a deadline), or a number, duration or flag the body changes
// (a counter). One the body never changes is a threshold: comparing a
// round's fresh value with it counts nothing.
func (w *loopWalker) carriesOver(v *types.Var) bool {
	t := v.Type()
	if isNamed(t, "time", "Time") {
		return true
	}
	if !carriesBound(t) {
		return false
	}
	if len(w.c.assignsOf(w.loopBlock())[v]) > 0 {
		return true
	}
	changed := false
	ast.Inspect(w.loopBlock(), func(n ast.Node) bool {
		if s, ok := n.(*ast.IncDecStmt); ok {
			if id, ok := ast.Unparen(s.X).(*ast.Ident); ok && w.c.info.Uses[id] == v {
				changed = true
			}
		}
		return !changed
	})
	return changed
}

// inBody reports whether o is declared inside the loop's body.
func (w *loopWalker) inBody(o types.Object) bool {
	b := w.loopBlock()
	return o != nil && o.Pos() > b.Lbrace && o.Pos() < b.Rbrace
}

// loopBlock is the body of the loop walked; nil if it is not a for or
// range statement.
func (w *loopWalker) loopBlock() *ast.BlockStmt {
	switch s := w.loop.(type) {
	case *ast.ForStmt:
		return s.Body
	case *ast.RangeStmt:
		return s.Body
	}
	return nil
}

// carriesBound reports whether a value of type t can count or time a
// run of rounds: a number, a time, a duration or a flag.
func carriesBound(t types.Type) bool {
	if t == nil {
		return false
	}
	return isIntegerish(t) || isBool(t) || isNamed(t, "time", "Time") || isNamed(t, "time", "Duration")
}

// rootIdent is the identifier a selector chain starts from, through
// derefs and indexes (c in c.opts.Timeout, in *c.opts.Left, opts in
// opts.Tries[i]); nil when it starts from a call or anything else.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		default:
			return nil
		}
	}
}
