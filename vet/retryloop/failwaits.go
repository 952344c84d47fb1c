package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// failureWaits are the waits a loop reaches on some failure of its call
// and on no success: the waits of a watch loop's error path.
func (w *loopWalker) failureWaits(sc loopScan) []loopCall {
	var out []loopCall
	w.notCancel = true
	defer func() { w.notCancel = false }()
	paced := map[string]bool{} // the durations a success waits
	for _, lw := range sc.waits {
		states := w.at[lw.call]
		if len(states) == 0 {
			continue
		}
		onFailure, onSuccess := false, false
		for _, o := range outcomes(sc.remote) {
			r := w.reaches(states, sc.remote, o)
			switch {
			case o.success() && r != triF:
				onSuccess = true
			case o.failure() && r != triF:
				onFailure = true
			}
		}
		if onSuccess && len(lw.call.Args) == 1 && topLevel(lw.call, sc.body) {
			paced[types.ExprString(lw.call.Args[0])] = true
		}
		if onFailure && !onSuccess && !leavesAfter(lw.call, sc.body, w.label) {
			out = append(out, lw)
		}
	}
	// A poll that waits its own interval after a failure as after every
	// answer (time.Sleep(r.interval) on both ways, the answer's as a
	// statement of the loop's own body, not one case of it) paces its
	// failures like its successes: no retry schedule of its own.
	kept := out[:0]
	for _, lw := range out {
		if len(lw.call.Args) != 1 || !paced[types.ExprString(lw.call.Args[0])] {
			kept = append(kept, lw)
		}
	}
	return kept
}

// reopenedStreamWaits returns the waits of a loop that re-opens a stream
// each time the last one ends: its body ranges over a channel that a call
// hands back (`rch = client.Watch(ctx, key)`, made in the loop or before it
// and made again in it, or `range sub.Channel()` in place), and waits
// outside that range. A watch's or subscription's channel closes when the
// stream fails (a compacted revision, a lost connection) or is cancelled —
// it has no healthy end — so the wait before the next one paces a retry
// of the stream, and is judged like a failure's.
func (c *checker) reopenedStreamWaits(sc loopScan) []loopCall {
	var inner *ast.RangeStmt
	for _, st := range sc.body.List {
		if r, ok := st.(*ast.RangeStmt); ok && c.streamRange(r, sc.body) {
			inner = r
			break
		}
	}
	if inner == nil {
		return nil
	}
	var out []loopCall
	for _, lw := range sc.waits {
		if lw.call.Pos() >= inner.Body.Pos() && lw.call.End() <= inner.Body.End() {
			continue // a pause between the stream's own events
		}
		out = append(out, lw)
	}
	return out
}

// streamRange reports whether r ranges over a channel a call hands back:
// the call in place, or a variable that body assigns from one.
func (c *checker) streamRange(r *ast.RangeStmt, body *ast.BlockStmt) bool {
	if !isChan(c.info.TypeOf(r.X)) {
		return false
	}
	if call, ok := ast.Unparen(r.X).(*ast.CallExpr); ok {
		return c.streamCall(call)
	}
	v := c.varOf(r.X)
	if v == nil {
		return false
	}
	for _, x := range c.assignsOf(body)[v] {
		if call, ok := ast.Unparen(x).(*ast.CallExpr); ok && c.streamCall(call) {
			return true
		}
	}
	return false
}

// streamCall reports whether call opens a stream: a function or method
// from another package that hands back a channel. time.After and
// time.Tick, signal channels and a context's Done are clocks and signals,
// not streams; make is a channel of the function's own.
func (c *checker) streamCall(call *ast.CallExpr) bool {
	fn := c.callee(call)
	if fn == nil || fn.Pkg() == nil || fn.Pkg() == c.pass.Pkg || fn.Name() == "Done" {
		return false
	}
	switch fn.Pkg().Path() {
	case "time", "os/signal", "context":
		return false
	}
	return isChan(c.info.TypeOf(call))
}

// isChan reports whether t is a channel type (nil, for an expression the
// type checker could not type, is not).
func isChan(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Chan)
	return ok
}

// topLevel reports whether call is a statement of body itself (time.Sleep(d)
// at the end of a poll's round), not one nested in a branch.
func topLevel(call *ast.CallExpr, body *ast.BlockStmt) bool {
	for _, st := range body.List {
		switch st := st.(type) {
		case *ast.ExprStmt:
			if ast.Unparen(st.X) == call {
				return true
			}
		case *ast.SelectStmt:
			if waitsOrLeaves(st, call) || defaultRound(st, call) {
				return true
			}
		case *ast.GoStmt:
			if lit, ok := ast.Unparen(st.Call.Fun).(*ast.FuncLit); ok && len(lit.Body.List) > 0 {
				if es, ok := lit.Body.List[0].(*ast.ExprStmt); ok && ast.Unparen(es.X) == call {
					return true // a sleeper started in the round: the round's wait
				}
			}
		}
	}
	return false
}

// defaultRound reports whether a select's default clause is the round
// (select { case <-ctx.Done(): return …; default: …; time.Sleep(d) }):
// every other case leaves the loop, and call is a statement of the
// default's own body.
func defaultRound(s *ast.SelectStmt, call *ast.CallExpr) bool {
	var def *ast.CommClause
	for _, cl := range s.Body.List {
		cc := cl.(*ast.CommClause)
		switch {
		case cc.Comm == nil:
			def = cc
		case len(cc.Body) == 0 || !leavesLoop(cc.Body[len(cc.Body)-1]):
			return false
		}
	}
	return def != nil && topLevel(call, &ast.BlockStmt{List: def.Body})
}

// waitsOrLeaves reports whether a select receives from call (case
// <-time.After(d):) and every other case of it leaves the loop (case
// <-ctx.Done(): return): at the end of the round it waits call's time or
// stops, as a wait that is a statement of the body does.
func waitsOrLeaves(s *ast.SelectStmt, call *ast.CallExpr) bool {
	found := false
	for _, cl := range s.Body.List {
		cc := cl.(*ast.CommClause)
		if x := received(cc.Comm); x != nil && ast.Unparen(x) == call {
			found = true
			continue
		}
		if len(cc.Body) == 0 || !leavesLoop(cc.Body[len(cc.Body)-1]) {
			return false
		}
	}
	return found
}

// leavesLoop reports whether s, the last statement of a case, leaves the
// loop: a return, a panic, or a break or goto to a label.
func leavesLoop(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Label != nil && (s.Tok == token.BREAK || s.Tok == token.GOTO)
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			id, isIdent := ast.Unparen(call.Fun).(*ast.Ident)
			return isIdent && id.Name == "panic"
		}
	}
	return false
}
