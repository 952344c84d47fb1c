package retryloop

import (
	"go/ast"
	"go/types"
	"slices"
)

// neverFails reports whether fn, declared in this package, returns a
// literal nil as its last result, an error, from every return statement,
// beside a value that is not nil: a constructor that only builds a value
// in memory (NewListener(url) (*listener, error)). A loop that goes round
// when it fails goes round on a path never taken. A function that returns
// nothing but nils (return nil, nil) is a placeholder for a call not
// written yet, not one known never to fail.
func (c *checker) neverFails(fn *types.Func) bool {
	if fn == nil {
		return false
	}
	if v, ok := c.nilErr[fn]; ok {
		return v
	}
	d := c.decls[fn]
	res := fn.Signature().Results()
	never := d != nil && d.Body != nil && res.Len() > 1 && isError(res.At(res.Len()-1).Type())
	returns := 0
	if never {
		ast.Inspect(d.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				returns++
				if len(n.Results) != res.Len() || !isNil(c.info, n.Results[len(n.Results)-1]) {
					never = false // a bare return of named results, a call's tuple, an error
				} else if !slices.ContainsFunc(n.Results[:len(n.Results)-1], func(e ast.Expr) bool { return !isNil(c.info, e) }) {
					never = false // return nil, nil
				}
			}
			return never
		})
	}
	never = never && returns > 0
	c.nilErr[fn] = never
	return never
}

// refusalErr reports whether fn, declared in this package, is a retry
// decider whose last result, an error, is its refusal: it answers a bool
// first and an error last, returns a literal nil error wherever it
// answers a constant true (return true, wait, nil) and, somewhere, false
// beside an error that is not nil (return false, 0, err). A loop that
// leaves on that error leaves when the decider says no, not whenever the
// attempt failed. A function that makes a remote call itself is no
// decider: its error is that call's.
func (c *checker) refusalErr(fn *types.Func) bool {
	d := c.decls[fn]
	if fn == nil || d == nil || d.Body == nil || c.funcRemote(fn) != remoteNone {
		return false // healthy, err := c.ping(): its own call's outcome, not a verdict on another's
	}
	res := fn.Signature().Results()
	if res.Len() < 2 || !isBool(res.At(0).Type()) || !isError(res.At(res.Len()-1).Type()) {
		return false
	}
	ok, refuses := true, false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) != res.Len() {
				ok = false
				return false
			}
			b, known := c.constBool(n.Results[0])
			last := n.Results[len(n.Results)-1]
			switch {
			case !known:
				ok = false
			case b && !isNil(c.info, last):
				ok = false
			case !b && !isNil(c.info, last):
				refuses = true
			}
		}
		return ok
	})
	return ok && refuses
}
