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
// for it, stands for none. An error type whose values are made in place
// where they are returned (return TooManyRequestsError{}) is mapped the
// same way to the statuses its tests allow (status == 429 || status ==
// 412), for this package's own tests of it.
func (c *checker) findStatusSentinels() {
	seen := map[types.Object]*retStatus{}
	for _, d := range c.decls {
		c.sentinelReturns(d.Body, nil, seen)
	}
	for o, rs := range seen {
		if rs.untested {
			continue
		}
		switch o := o.(type) {
		case *types.Var:
			if len(rs.set) != 1 {
				continue
			}
			c.sentinels[o] = rs.set[0]
			if o.Exported() {
				c.exportFact(o, &StatusFact{Status: rs.set[0]})
			}
		case *types.TypeName:
			c.kinds[o] = rs.set
		}
	}
}

// retStatus gathers the statuses under whose tests an error is returned;
// untested once it is returned where no status was tested.
type retStatus struct {
	set      []int
	untested bool
}

// sentinelReturns records, for each sentinel or error kind a return in n
// names, the statuses the enclosing status test holds it to (nil: none).
func (c *checker) sentinelReturns(n ast.Node, status []int, seen map[types.Object]*retStatus) {
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			if m.Init != nil {
				c.sentinelReturns(m.Init, status, seen)
			}
			inner := status
			if k := c.statusSet(m.Cond); k != nil {
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
				if k := c.statusCase(m, cc); k != nil {
					inner = k
				}
				for _, s := range cc.Body {
					c.sentinelReturns(s, inner, seen)
				}
			}
			return false
		case *ast.ReturnStmt:
			for _, r := range m.Results {
				o := c.returnedKind(r)
				if o == nil {
					continue
				}
				rs := seen[o]
				if rs == nil {
					rs = &retStatus{}
					seen[o] = rs
				}
				rs.untested = rs.untested || status == nil
				for _, st := range status {
					if !slices.Contains(rs.set, st) {
						rs.set = append(rs.set, st)
					}
				}
			}
		}
		return true
	})
}

// returnedKind is the sentinel (returnedSentinel), or the error type of a
// value made in place (TooManyRequestsError{}, &APIError{…}), that a
// returned expression is or wraps; nil for any other.
func (c *checker) returnedKind(e ast.Expr) types.Object {
	if v := c.returnedSentinel(e); v != nil {
		return v
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		for _, a := range call.Args {
			if tn := c.madeKind(a); tn != nil {
				return tn
			}
		}
	}
	if tn := c.madeKind(e); tn != nil {
		return tn
	}
	return nil
}

// madeKind is the named error type of a value e makes in place: T{…} or
// &T{…}; nil for any other.
func (c *checker) madeKind(e ast.Expr) *types.TypeName {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	n, ok := types.Unalias(c.info.TypeOf(lit)).(*types.Named)
	if !ok || !implementsError(n) {
		return nil
	}
	return n.Obj()
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

// statusSet reports the constants a condition holds a status to: one
// (statusEquals), or those of a chain of them joined by || (status ==
// 429 || status == 412); nil for any other condition.
func (c *checker) statusSet(e ast.Expr) []int {
	if be, ok := ast.Unparen(e).(*ast.BinaryExpr); ok && be.Op == token.LOR {
		a, b := c.statusSet(be.X), c.statusSet(be.Y)
		if a == nil || b == nil {
			return nil
		}
		return append(a, b...)
	}
	if k, ok := c.statusEquals(e); ok {
		return []int{k}
	}
	return nil
}

// statusCase reports the statuses a case of a switch holds the status to:
// switch resp.StatusCode { case http.StatusTooManyRequests, 412: … }, or a
// tagless switch's case resp.StatusCode == 429; nil if any is no status.
func (c *checker) statusCase(sw *ast.SwitchStmt, cc *ast.CaseClause) []int {
	if sw.Tag != nil && !c.isStatus(ast.Unparen(sw.Tag)) || len(cc.List) == 0 {
		return nil
	}
	var out []int
	for _, e := range cc.List {
		if sw.Tag == nil {
			k := c.statusSet(e)
			if k == nil {
				return nil
			}
			out = append(out, k...)
			continue
		}
		k, ok := c.constStatus(e)
		if !ok {
			return nil
		}
		out = append(out, k)
	}
	return out
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
//
// On an outcome of a helper that reads the status into its error (an SDK's
// outcome: body, err := get(url)), only a sentinel of this package counts,
// the package's own helper being what turned the status into it, and only
// on its own status: on another the helper may return nil or anything.
func (ev *evaluator) sentinelTest(x, y ast.Expr, o outcome) (tri, bool) {
	if ev.k != remoteHTTP && ev.k != remoteSDK || !o.hasStatus {
		return triF, false // a failed connection: whatever the helper made of it
	}
	c := ev.w.c
	for _, p := range [][2]ast.Expr{{x, y}, {y, x}} {
		if !isError(c.info.TypeOf(p[0])) {
			continue
		}
		if ev.k == remoteSDK && !c.ownSentinel(p[1]) {
			continue
		}
		if st := c.sentinelStatus(p[1]); st != 0 {
			if o.status == st && slices.Contains(permanent, st) {
				// errNotFound waited out: maybe a poll for something
				// to appear, maybe a retry of what will not change
				return triU, true
			}
			if ev.k == remoteSDK && o.err && o.status != st {
				// the helper's error on another status is whatever it
				// made of it: maybe none at all
				return triU, true
			}
			return boolTri(o.status == st), true
		}
	}
	return triF, false
}

// ownSentinel reports whether e names a status sentinel of this package.
func (c *checker) ownSentinel(e ast.Expr) bool {
	v, ok := c.info.Uses[calleeIdent(e)].(*types.Var)
	return ok && v.Pkg() == c.pass.Pkg && c.sentinels[v] != 0
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

// errKindCond reports whether e tests the error fold holds for one kind
// of error — errors.Is(err, target), errors.As(err, &target), err ==
// target, target a sentinel or an error value made in place
// (TooManyRequestsError{}) — and not for nil; is says whether e holds
// when err is of that kind (false under ! or !=), statuses are those the
// kind stands for (a sentinel's status, an error type's statuses), nil
// if none is known.
func (c *checker) errKindCond(e ast.Expr, fold types.Object) (is bool, statuses []int, ok bool) {
	if fold == nil {
		return false, nil, false
	}
	is = true
	e = ast.Unparen(e)
	for {
		u, isNot := e.(*ast.UnaryExpr)
		if !isNot || u.Op != token.NOT {
			break
		}
		is, e = !is, ast.Unparen(u.X)
	}
	isFold := func(x ast.Expr) bool { id := identOf(x); return id != nil && c.info.ObjectOf(id) == fold }
	var target ast.Expr
	switch e := e.(type) {
	case *ast.CallExpr:
		fn := c.callee(e)
		if (isErrorsIs(fn) || isFunc(fn, "errors", "As")) && len(e.Args) == 2 && isFold(e.Args[0]) {
			target = e.Args[1]
		}
	case *ast.BinaryExpr:
		if e.Op != token.EQL && e.Op != token.NEQ {
			break
		}
		for _, p := range [][2]ast.Expr{{e.X, e.Y}, {e.Y, e.X}} {
			if isFold(p[0]) && !isNil(c.info, p[1]) && (isError(c.info.TypeOf(p[1])) || c.madeKind(p[1]) != nil) {
				target = p[1]
			}
		}
		is = is == (e.Op == token.EQL)
	}
	if target == nil {
		return false, nil, false
	}
	if tn := c.targetKind(target); tn != nil && statusBearing(tn.Type()) {
		return false, nil, false // errors.As(err, &apiErr): its status is read beside it
	}
	if st := c.sentinelStatus(target); st != 0 {
		return is, []int{st}, true
	}
	return is, c.kinds[c.targetKind(target)], true
}

// targetKind is the error type a target of errors.Is or errors.As names:
// a value made in place (T{}), or the variable &t points to, of T or *T.
func (c *checker) targetKind(e ast.Expr) *types.TypeName {
	if tn := c.madeKind(e); tn != nil {
		return tn
	}
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
		t := c.info.TypeOf(u.X)
		if p, ok := types.Unalias(t).(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			return n.Obj()
		}
	}
	return nil
}
