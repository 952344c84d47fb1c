package retryloop

import (
	"go/ast"
	"go/token"
)

// A retry loop is sometimes written with a label and a goto back to it:
//
//	retry:
//		resp, err := call()
//		if err != nil && attempts > 0 {
//			time.Sleep(d)
//			attempts--
//			goto retry
//		}
//		return resp, err
//
// gotoLoops finds these in a block and reads each as the for loop it is:
// the statements from the label to the block's end as the body, a goto to
// the label as a continue, and the end of the block as a break.

// gotoLoop is one loop written with a label and a backward goto.
type gotoLoop struct {
	loop  *ast.ForStmt
	label *ast.Ident
}

// gotoLoops returns the goto loops of a statement list: a block's, or a
// case clause's, whose end leaves the switch as a block's end leaves it.
func gotoLoops(list []ast.Stmt) []gotoLoop {
	var out []gotoLoop
	for i, s := range list {
		ls, ok := s.(*ast.LabeledStmt)
		if !ok || !jumpsBack(list[i:], ls.Label.Name) {
			continue
		}
		switch ls.Stmt.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			continue // a labelled loop: a goto to it starts it anew
		}
		body := append([]ast.Stmt{ls.Stmt}, list[i+1:]...)
		end := list[len(list)-1].End()
		body = append(body, &ast.BranchStmt{TokPos: end, Tok: token.BREAK})
		fs := &ast.ForStmt{For: ls.Pos(), Body: &ast.BlockStmt{Lbrace: ls.Pos(), List: body, Rbrace: end}}
		out = append(out, gotoLoop{loop: fs, label: ls.Label})
	}
	return out
}

// jumpsBack reports whether a goto to label appears in list, outside
// function literals.
func jumpsBack(list []ast.Stmt, label string) bool {
	found := false
	for _, s := range list {
		ast.Inspect(s, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.BranchStmt:
				found = found || (n.Tok == token.GOTO && n.Label != nil && n.Label.Name == label)
			}
			return !found
		})
	}
	return found
}

// A round may jump forward to a label of its own (goto reconnect, where
// the wait before the next dial is): the paths that jump there join the
// one that falls into it, and the walk goes on from the label with them.

// stmts walks a statement list. A path that ends (a return, a goto ahead)
// leaves the rest unwalked up to a label that gotos jumped to, where the
// walk picks up with the paths that jumped.
func (w *loopWalker) stmts(list []ast.Stmt, st state, breakIsLoop, contIsLoop bool) (state, bool) {
	live := true
	for _, s := range list {
		if ls, ok := s.(*ast.LabeledStmt); ok && len(w.ahead[ls.Label.Name]) > 0 {
			paths := w.ahead[ls.Label.Name]
			delete(w.ahead, ls.Label.Name)
			if live {
				paths = append([]state{st}, paths...)
			}
			st, live = w.merge(w.start, paths), true
		}
		if !live {
			continue
		}
		st, live = w.stmt(s, st, breakIsLoop, contIsLoop)
	}
	return st, live
}

// forward keeps the state of a goto to a label later in the round's own
// body, for stmts to join where the label is; a goto anywhere else ends
// the path.
func (w *loopWalker) forward(g *ast.BranchStmt, st state) {
	if g.Label == nil || !w.aheadIn(g) {
		return
	}
	if w.ahead == nil {
		w.ahead = map[string][]state{}
	}
	w.ahead[g.Label.Name] = append(w.ahead[g.Label.Name], st)
}

// aheadIn reports whether g's label labels a statement of the round's
// body itself, after g.
func (w *loopWalker) aheadIn(g *ast.BranchStmt) bool {
	var body *ast.BlockStmt
	switch l := w.loop.(type) {
	case *ast.ForStmt:
		body = l.Body
	case *ast.RangeStmt:
		body = l.Body
	}
	if body == nil {
		return false
	}
	for _, s := range body.List {
		if ls, ok := s.(*ast.LabeledStmt); ok && ls.Label.Name == g.Label.Name {
			return ls.Pos() > g.Pos()
		}
	}
	return false
}
