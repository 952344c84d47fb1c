package retryloop

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
)

// StatusFact marks a package's error variable that the package returns
// for one HTTP status and no other (errTooManyRequests, returned where
// resp.StatusCode == http.StatusTooManyRequests): a loop that goes round
// when errors.Is(err, errTooManyRequests) retries that status.
type StatusFact struct {
	Status int
}

// AFact marks StatusFact as an analysis fact.
func (*StatusFact) AFact() {}

func (f *StatusFact) String() string { return fmt.Sprintf("status=%d", f.Status) }

// findStatusSentinels maps each errors.New sentinel of the package that
// its functions return under a test of a response's status against one
// constant (if resp.StatusCode == 429 { return errTooManyRequests }, or a
// switch case) to that status, and exports the exported ones' facts. A
// sentinel returned for two statuses, or also where no status was tested
// for it, stands for none.
func (c *checker) findStatusSentinels() {
	seen := map[*types.Var]int{} // -1: returned where no one status says so
	for _, d := range c.decls {
		c.sentinelReturns(d.Body, 0, seen)
	}
	for v, st := range seen {
		if st <= 0 {
			continue
		}
		c.sentinels[v] = st
		if v.Exported() {
			c.exportFact(v, &StatusFact{Status: st})
		}
	}
}

// sentinelReturns records, for each sentinel a return in n names, the
// status the enclosing status test holds it to (0 for none).
func (c *checker) sentinelReturns(n ast.Node, status int, seen map[*types.Var]int) {
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			if m.Init != nil {
				c.sentinelReturns(m.Init, status, seen)
			}
			inner := status
			if k, ok := c.statusEquals(m.Cond); ok {
				inner = k
			}
			c.sentinelReturns(m.Body, inner, seen)
			if m.Else != nil {
				c.sentinelReturns(m.Else, status, seen)
			}
			return false
		case *ast.SwitchStmt:
			if m.Init != nil {
				c.sentinelReturns(m.Init, status, seen)
			}
			for _, st := range m.Body.List {
				cc := st.(*ast.CaseClause)
				inner := status
				if k, ok := c.statusCase(m, cc); ok {
					inner = k
				}
				for _, s := range cc.Body {
					c.sentinelReturns(s, inner, seen)
				}
			}
			return false
		case *ast.ReturnStmt:
			for _, r := range m.Results {
				if v := c.returnedSentinel(r); v != nil {
					if prev, ok := seen[v]; ok && prev != status {
						seen[v] = -1
					} else {
						seen[v] = status
					}
				}
			}
		}
		return true
	})
}

// returnedSentinel returns the sentinel a returned expression is, or
// wraps (fmt.Errorf("…: %w", errX), errors.Wrap(errX, …)).
func (c *checker) returnedSentinel(e ast.Expr) *types.Var {
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		for _, a := range call.Args {
			if c.isSentinel(a) {
				e = a
				break
			}
		}
	}
	if !c.isSentinel(e) {
		return nil
	}
	v, _ := c.info.Uses[calleeIdent(e)].(*types.Var)
	return v
}

// statusEquals reports the constant a condition holds a status to: resp.StatusCode
// == http.StatusTooManyRequests.
func (c *checker) statusEquals(e ast.Expr) (int, bool) {
	be, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok || be.Op != token.EQL {
		return 0, false
	}
	for _, p := range [][2]ast.Expr{{be.X, be.Y}, {be.Y, be.X}} {
		if c.isStatus(ast.Unparen(p[0])) {
			return c.constStatus(p[1])
		}
	}
	return 0, false
}

// statusCase reports the status a case of a switch holds the status to:
// switch resp.StatusCode { case http.StatusTooManyRequests: … }, or a
// tagless switch's case resp.StatusCode == 429.
func (c *checker) statusCase(sw *ast.SwitchStmt, cc *ast.CaseClause) (int, bool) {
	if len(cc.List) != 1 {
		return 0, false
	}
	if sw.Tag == nil {
		return c.statusEquals(cc.List[0])
	}
	if !c.isStatus(ast.Unparen(sw.Tag)) {
		return 0, false
	}
	return c.constStatus(cc.List[0])
}

// constStatus returns an HTTP status constant's value.
func (c *checker) constStatus(e ast.Expr) (int, bool) {
	tv, ok := c.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.Int {
		return 0, false
	}
	v, exact := constant.Int64Val(tv.Value)
	if !exact || v < 100 || v > 599 {
		return 0, false
	}
	return int(v), true
}

// sentinelStatus returns the status a sentinel named by e stands for: one
// of this package's, or another's by its fact; 0 if none.
func (c *checker) sentinelStatus(e ast.Expr) int {
	v, ok := c.info.Uses[calleeIdent(e)].(*types.Var)
	if !ok || !isPkgVar(v) {
		return 0
	}
	if v.Pkg() == c.pass.Pkg {
		return c.sentinels[v]
	}
	var f StatusFact
	if v.Pkg() != nil && c.pass.ImportObjectFact(v, &f) {
		return f.Status
	}
	return 0
}

// sentinelTest evaluates errors.Is(err, errTooManyRequests), or err ==
// errTooManyRequests, on an HTTP outcome, for a sentinel that stands for
// one status: true on that status only. ok is false for anything else.
func (ev *evaluator) sentinelTest(x, y ast.Expr, o outcome) (tri, bool) {
	if ev.k != remoteHTTP || !o.hasStatus {
		return triF, false // a failed connection: whatever the helper made of it
	}
	c := ev.w.c
	for _, p := range [][2]ast.Expr{{x, y}, {y, x}} {
		if !isError(c.info.TypeOf(p[0])) {
			continue
		}
		if st := c.sentinelStatus(p[1]); st != 0 {
			if o.status == st && slices.Contains(permanent, st) {
				// errNotFound waited out: maybe a poll for something
				// to appear, maybe a retry of what will not change
				return triU, true
			}
			return boolTri(o.status == st), true
		}
	}
	return triF, false
}

// testsSentinelFor reports whether the loop tests the error variable v
// against a sentinel that stands for status (errors.Is(err,
// errTooManyRequests), err == sentinel.ErrRateLimited): the attempt that
// assigns v makes that error of that status, so on it v is not nil.
func (w *loopWalker) testsSentinelFor(v *types.Var, status int) bool {
	if slices.Contains(permanent, status) {
		return false // see sentinelTest
	}
	c := w.c
	found := false
	ast.Inspect(w.body, func(n ast.Node) bool {
		var x, y ast.Expr
		switch n := n.(type) {
		case *ast.CallExpr:
			if isErrorsIs(c.callee(n)) && len(n.Args) == 2 {
				x, y = n.Args[0], n.Args[1]
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				x, y = n.X, n.Y
			}
		}
		if x == nil {
			return !found
		}
		for _, p := range [][2]ast.Expr{{x, y}, {y, x}} {
			if id := identOf(p[0]); id != nil && c.info.Uses[id] == v && c.sentinelStatus(p[1]) == status {
				found = true
			}
		}
		return !found
	})
	return found
}

// isErrorsIs reports whether fn is errors.Is, or the same function of
// github.com/pkg/errors or golang.org/x/xerrors.
func isErrorsIs(fn *types.Func) bool {
	return isFunc(fn, "errors", "Is") || isFunc(fn, "github.com/pkg/errors", "Is") || isFunc(fn, "golang.org/x/xerrors", "Is")
}
