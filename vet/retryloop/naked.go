package retryloop

import (
	"go/ast"
	"go/types"
)

// A condition handed to a poll may end in naked returns of named results
// (func(ctx) (done bool, _ error) { if err := probe(ctx); err != nil {
// return }; done = true; return }): each such return gives the values
// the results hold there, their zero values when nothing set them before.

// zeroFalse and zeroNil stand for a named bool's and a named error's zero
// values at a naked return: constBool knows zeroFalse, and isNil zeroNil.
var (
	zeroFalse ast.Expr = &ast.Ident{Name: "false"}
	zeroNil   ast.Expr = &ast.Ident{Name: "nil"}
)

// resultsOf returns the result list of the function whose body is body.
func (c *checker) resultsOf(body *ast.BlockStmt) *ast.FieldList {
	if c.bodyResults == nil {
		c.bodyResults = map[*ast.BlockStmt]*ast.FieldList{}
		for _, f := range c.pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if n.Body != nil {
						c.bodyResults[n.Body] = n.Type.Results
					}
				case *ast.FuncLit:
					c.bodyResults[n.Body] = n.Type.Results
				}
				return true
			})
		}
	}
	return c.bodyResults[body]
}

// nakedResults returns what a naked return r in body gives, result by
// result: the value of the named result's last assignment before r when
// that assignment's block holds r (done = true; return) — the variable
// itself when the body's own list takes it from a call's tuple (done, err
// = sync(ctx); return) — its zero value when nothing before r assigns it
// (an assignment in a select case on ctx.Done() that does not hold r
// aside: the caller is gone there, which is no answer of the function's
// own), or unknownExpr. ok is false when r is not naked or the results
// are not all named bools and errors.
func (c *checker) nakedResults(body *ast.BlockStmt, r *ast.ReturnStmt) ([]ast.Expr, bool) {
	res := c.resultsOf(body)
	if len(r.Results) != 0 || res == nil || res.NumFields() == 0 {
		return nil, false
	}
	var out []ast.Expr
	for _, f := range res.List {
		if len(f.Names) == 0 {
			return nil, false
		}
		t := c.info.TypeOf(f.Type)
		zero := zeroNil
		switch {
		case t != nil && isBool(t):
			zero = zeroFalse
		case t == nil || !isError(t):
			return nil, false
		}
		for _, name := range f.Names {
			v, _ := c.info.Defs[name].(*types.Var)
			if v == nil || name.Name == "_" {
				out = append(out, zero) // a blank result is never set
				continue
			}
			out = append(out, c.valueAt(body, v, r, zero))
		}
	}
	return out, true
}

// valueAt is what v holds at r, as nakedResults reads it.
func (c *checker) valueAt(body *ast.BlockStmt, v *types.Var, r *ast.ReturnStmt, zero ast.Expr) ast.Expr {
	var last *ast.AssignStmt
	var lastBlock ast.Node
	var blocks []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			blocks = blocks[:len(blocks)-1]
			return true
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if cc, ok := n.(*ast.CommClause); ok && c.receivesDone(cc.Comm) && !within([]ast.Node{cc}, r) {
			return false // set only when the caller is gone: no answer of its own
		}
		blocks = append(blocks, n)
		if as, ok := n.(*ast.AssignStmt); ok && as.End() <= r.Pos() {
			for _, l := range as.Lhs {
				if c.varOf(l) == v {
					last, lastBlock = as, blocks[max(len(blocks)-2, 0)]
				}
			}
		}
		return true
	})
	switch {
	case last == nil:
		return zero
	case !within([]ast.Node{lastBlock}, r):
		return unknownExpr
	}
	for i, l := range last.Lhs {
		switch {
		case c.varOf(l) != v:
		case len(last.Lhs) == len(last.Rhs):
			return last.Rhs[i]
		case len(last.Rhs) == 1 && lastBlock == body:
			return l // a part of a call's tuple, which okPairPart reads
		}
	}
	return unknownExpr
}
