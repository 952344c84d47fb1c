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
