package retryloop

import (
	"go/ast"
	"go/types"
)

// retry-go's fifth version has no Do of its own: retry.New(opts...) makes
// a Retrier, whose Do (DoWithData on NewWithData's) runs the work with
// those options. Such a call is read as the package-level Do of earlier
// versions would be, handed the same work and options.

// retryGoMade returns, for a Do or DoWithData of a retry-go Retrier made
// in sight (retry.New(opts...).Do(work), or r := retry.New(opts...) made
// once in the function), a call shaped as retry.Do(work, opts...) with
// the original's position; nil for any other call.
func (c *checker) retryGoMade(call *ast.CallExpr, callee *types.Func, decl *ast.BlockStmt) *ast.CallExpr {
	r := recvNamed(callee)
	if r == nil || !isModule(funcPath(callee), retryGoPath) || (callee.Name() != "Do" && callee.Name() != "DoWithData") || len(call.Args) != 1 {
		return nil
	}
	if n := r.Obj().Name(); n != "Retrier" && n != "RetrierWithData" {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	maker, ok := ast.Unparen(sel.X).(*ast.CallExpr)
	if !ok {
		v := c.varOf(sel.X)
		if v == nil || decl == nil {
			return nil
		}
		as := c.assignsOf(decl)[v]
		if len(as) != 1 {
			return nil
		}
		if maker, ok = ast.Unparen(as[0]).(*ast.CallExpr); !ok {
			return nil
		}
	}
	mf := c.callee(maker)
	if mf == nil || !isModule(funcPath(mf), retryGoPath) || (mf.Name() != "New" && mf.Name() != "NewWithData") {
		return nil
	}
	return &ast.CallExpr{Fun: call.Fun, Lparen: call.Lparen, Args: append([]ast.Expr{call.Args[0]}, maker.Args...),
		Ellipsis: maker.Ellipsis, Rparen: call.Rparen}
}
