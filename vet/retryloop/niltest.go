package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// nilCompare evaluates x op y on outcome o, where x is nil: an error's
// nil test by where the error came from, a response's by whether the
// call failed.
func (ev *evaluator) nilCompare(op token.Token, x, y ast.Expr, o outcome) tri {
	c := ev.w.c
	t := c.info.TypeOf(y)
	switch {
	case isError(t):
		if ev.srcOf(y) == srcNil {
			return boolTri(op == token.EQL)
		}
		if src := ev.srcOf(y); src >= srcCheck {
			r := ev.checkFails(src, o)
			if op == token.EQL {
				r = r.not()
			}
			return r
		}
		if ev.srcOf(y) != srcOutcome {
			return ev.irrelevant(types.ExprString(y) + "!=nil")
		}
		if !o.err && (c.notYetSentinel(ev.w.attemptCall, nil) || ev.w.notYetTextLoop()) {
			// check answers errNoReadyEndpoints on a success: "not yet"
			return ev.irrelevant("not yet " + types.ExprString(y))
		}
		if r, ok := ev.attemptFails(y, o); ok {
			// a helper that makes the call and turns the status into an error
			if op == token.EQL {
				r = r.not()
			}
			return r
		}
		isNil := !o.err
		if op == token.NEQ {
			isNil = !isNil
		}
		return boolTri(isNil)
	case isNamed(t, "net/http", "Response") && ev.k == remoteHTTP:
		isNil := o.err
		if op == token.NEQ {
			isNil = !isNil
		}
		return boolTri(isNil)
	case !o.err && ev.companionOfOutcome(y):
		return boolTri(op == token.NEQ) // a call that succeeded handed back its value
	case ev.soleResult(y):
		// conn.data = conn.fetchData(), nil when the fetch failed: the
		// value is the outcome
		return boolTri(o.err == (op == token.EQL))
	}
	return ev.irrelevant(types.ExprString(x) + op.String() + types.ExprString(y))
}

// asFolded evaluates errors.As(err, &target) on outcome o of a call that
// folds the status into its error: the error of a failed status is the
// API's error the target stands for — unless the target is a transport's
// error (errors.As(err, &netErr)), which only a failure that got no
// answer is, never a status folded into one.
func (ev *evaluator) asFolded(e *ast.CallExpr, o outcome) tri {
	if len(e.Args) == 2 && transportTarget(ev.w.c.info.TypeOf(e.Args[1])) {
		return boolTri(o.err && !o.hasStatus)
	}
	return boolTri(o.err && o.hasStatus)
}

// transportTarget reports whether t, the type of errors.As's target, points
// to a transport's error: net.Error, *net.OpError, *net.DNSError or
// *url.Error.
func transportTarget(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	return isNamed(p.Elem(), "net", "Error") || isNamed(p.Elem(), "net", "OpError") || isNamed(p.Elem(), "net", "DNSError") || isNamed(p.Elem(), "net/url", "Error")
}
