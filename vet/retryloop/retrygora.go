package retryloop

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// avast/retry-go retries what its RetryIf option lets go round (every
// error but an Unrecoverable one when there is none), after what its
// DelayType says: the server's Retry-After is read only by a DelayType
// written to read it.

// retryGoRetryAfter reports an avast/retry-go Do (DoWithData) whose work,
// a function literal, makes a call whose failed answers come back as an
// error carrying the status (a model SDK's method, or a helper that
// returns &HTTPError{StatusCode: code}), whose RetryIf lets a 429 or a 503
// go round — a literal answering true under a test of that status, or
// none at all — and where neither the work nor a DelayType of its own
// reads Retry-After. With no RetryIf, a work that hands every such error
// back untouched is unclassified too, as with cenkalti/backoff. A work
// that makes an HTTP call itself and turns statuses into errors by its
// own tests is, with no RetryIf, judged as cenkalti's operations are.
func (c *checker) retryGoRetryAfter(call *ast.CallExpr, decl *ast.BlockStmt) {
	fn := c.callee(call)
	if fn != nil {
		if made := c.retryGoMade(call, fn, decl); made != nil {
			call = made // retry.New(opts...).Do(work): retry.Do(work, opts...)
		} else if recvNamed(fn) != nil {
			return
		}
	}
	if fn == nil || !isModule(funcPath(fn), retryGoPath) || (fn.Name() != "Do" && fn.Name() != "DoWithData") || call.Ellipsis.IsValid() {
		return
	}
	lit := c.operationLit(call, decl)
	if lit == nil || c.litReadsRetryAfter(lit) {
		return
	}
	r := c.remoteIn(lit.Body)
	if r == nil || (!c.statusInError(r) && r.kind != remoteHTTP) {
		return
	}
	var retryIf ast.Expr
	for _, a := range call.Args[1:] {
		oc, ok := ast.Unparen(a).(*ast.CallExpr)
		if !ok {
			return // an option made elsewhere: it might be either
		}
		f := c.callee(oc)
		if f == nil || !isModule(funcPath(f), retryGoPath) || len(oc.Args) > 1 {
			return
		}
		switch f.Name() {
		case "RetryIf":
			retryIf = oc.Args[0]
		case "DelayType":
			if !c.retryGoOwnDelay(oc.Args[0]) {
				return // a delay of the caller's: it may read the header
			}
		}
	}
	if !c.statusInError(r) {
		// an HTTP call in the work, whose statuses its own tests turn
		// into errors: judged as cenkalti's operations are, when no
		// RetryIf picks among them
		if retryIf == nil {
			c.judgeOperation(call, lit, "retry.Unrecoverable", "give it a DelayType that waits what the answer's Retry-After says")
		}
		return
	}
	if retryIf == nil {
		c.backoffEveryError(call, lit, r, "retry.Unrecoverable (or give Do a RetryIf)")
	}
	var which []string
	for _, st := range []int{429, 503} {
		if c.retryGoAdmits(retryIf, lit, st) {
			which = append(which, fmt.Sprint(st))
		}
	}
	if len(which) == 0 {
		return
	}
	c.add(finding{check: CheckRetryAfter, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s retries %s without reading Retry-After: the server said when to come back; give it a DelayType that waits what the answer's Retry-After says, or use recoilhttp.Transport", c.callName(call), strings.Join(which, " and "))})
}

// statusInError reports whether a remote call's failed answers come back
// as its error: a model SDK's method, or a helper whose fact says it
// returns nothing but an error carrying the status.
func (c *checker) statusInError(r *remoteAt) bool {
	if r.kind == remoteSDK {
		return true
	}
	f := c.fact(c.callee(r.call))
	return r.kind == remoteHTTP && f != nil && f.StatusError
}

// retryGoOwnDelay reports whether a DelayType argument is made of
// retry-go's own delays (BackOffDelay, FixedDelay, RandomDelay and
// CombineDelay of them), none of which reads the answer.
func (c *checker) retryGoOwnDelay(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		f := c.callee(x)
		if f == nil || !isModule(funcPath(f), retryGoPath) || f.Name() != "CombineDelay" {
			return false
		}
		for _, a := range x.Args {
			if !c.retryGoOwnDelay(a) {
				return false
			}
		}
		return true
	case *ast.SelectorExpr:
		f, _ := c.info.Uses[x.Sel].(*types.Func)
		return f != nil && isModule(funcPath(f), retryGoPath)
	}
	return false
}

// retryGoAdmits reports whether status st goes round: with no RetryIf,
// when the work never marks an error Unrecoverable; with a RetryIf
// literal, when it answers true under a test that the status is st (or
// unconditionally), or answers a comparison with st.
func (c *checker) retryGoAdmits(retryIf ast.Expr, work *ast.FuncLit, st int) bool {
	if retryIf == nil {
		return !c.callsNamed(work.Body, retryGoPath, "Unrecoverable")
	}
	fl, ok := ast.Unparen(retryIf).(*ast.FuncLit)
	if !ok {
		return false
	}
	return c.answersTrueOn(fl.Body.List, statusFree, st)
}

// What the tests on the way to a return say of the status.
const (
	statusFree  = iota // none tested
	statusNamed        // tested to be st
	statusOther        // tested against other statuses only
)

// answersTrueOn reports whether list returns true on status st: a
// constant true reached under a test that the status is st, or under no
// status test at all (when list tests none either), or a return of an
// expression comparing with st.
func (c *checker) answersTrueOn(list []ast.Stmt, state, st int) bool {
	under := func(cond ast.Node) int {
		switch {
		case state == statusNamed || comparesWith(c, cond, st):
			return statusNamed
		case state == statusOther || c.testsAnyStatus(cond):
			return statusOther
		}
		return statusFree
	}
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ReturnStmt:
			if len(s.Results) != 1 {
				continue
			}
			tv := c.info.Types[s.Results[0]]
			if tv.Value != nil && tv.Value.Kind() == constant.Bool {
				free := state == statusFree && !slices.ContainsFunc(list, func(s ast.Stmt) bool { return c.testsAnyStatus(s) })
				if constant.BoolVal(tv.Value) && (state == statusNamed || free) {
					return true
				}
				continue
			}
			if comparesWith(c, s.Results[0], st) {
				return true
			}
		case *ast.IfStmt:
			if c.answersTrueOn(s.Body.List, under(s.Cond), st) {
				return true
			}
			if s.Else != nil && c.answersTrueOn([]ast.Stmt{s.Else}, state, st) {
				return true
			}
		case *ast.SwitchStmt:
			for _, cc := range s.Body.List {
				cc := cc.(*ast.CaseClause)
				in := state
				for _, e := range cc.List {
					switch {
					case c.statusIs(e, st):
						in = statusNamed
					case in == statusFree && c.hasStatusConst(e):
						in = statusOther
					}
				}
				if c.answersTrueOn(cc.Body, in, st) {
					return true
				}
			}
		case *ast.BlockStmt:
			if c.answersTrueOn(s.List, state, st) {
				return true
			}
		}
	}
	return false
}

// testsAnyStatus reports whether n holds an equality with a status
// constant (4xx or 5xx).
func (c *checker) testsAnyStatus(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.EQL {
			found = found || c.hasStatusConst(b.X) || c.hasStatusConst(b.Y)
		}
		return !found
	})
	return found
}

// comparesWith reports whether n holds an equality with the constant st.
func comparesWith(c *checker, n ast.Node, st int) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.EQL {
			found = found || c.statusIs(b.X, st) || c.statusIs(b.Y, st)
		}
		return !found
	})
	return found
}

// callsNamed reports whether body calls the function name of the
// package at path (any major version).
func (c *checker) callsNamed(body *ast.BlockStmt, path, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if f := c.callee(call); f != nil && f.Name() == name && isModule(funcPath(f), path) {
				found = true
			}
		}
		return !found
	})
	return found
}

// statusIs reports whether e is the status constant st (constStatus).
func (c *checker) statusIs(e ast.Expr, st int) bool {
	v, ok := c.constStatus(e)
	return ok && v == st
}

// hasStatusConst reports whether e is a 4xx or 5xx status constant.
func (c *checker) hasStatusConst(e ast.Expr) bool {
	v, ok := c.constStatus(e)
	return ok && v >= 400
}
