package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// isCtxErrTest reports whether a call tests an error for the caller's
// cancellation: errors.Is(err, context.Canceled) or
// errors.Is(err, context.DeadlineExceeded).
func (c *checker) isCtxErrTest(call *ast.CallExpr) bool {
	if !isFunc(c.callee(call), "errors", "Is") || len(call.Args) != 2 {
		return false
	}
	return c.isCtxErr(call.Args[1])
}

// isCtxErr reports whether e is context.Canceled or
// context.DeadlineExceeded.
func (c *checker) isCtxErr(e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	v, ok := c.info.Uses[sel.Sel].(*types.Var)
	return ok && v.Pkg() != nil && v.Pkg().Path() == "context" && (v.Name() == "Canceled" || v.Name() == "DeadlineExceeded")
}

// isCanceled reports whether e is context.Canceled.
func (c *checker) isCanceled(e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	return ok && c.isCtxErr(e) && sel.Sel.Name == "Canceled"
}

// pahoPath is the Eclipse Paho MQTT client's module.
const pahoPath = "github.com/eclipse/paho.mqtt.golang"

// tokenWait reports whether fn is Paho's Token.Wait: it blocks until the
// operation is done and then says true, whatever came of it (the outcome
// is the token's Error()), so `token.Wait() && token.Error() == nil`
// tests the error alone. WaitTimeout, false on a timeout, is not it.
func tokenWait(fn *types.Func) bool {
	return fn != nil && fn.Name() == "Wait" && funcPath(fn) == pahoPath && fn.Type().(*types.Signature).Params().Len() == 0
}

// callerCancel reports whether e is an error only the caller's giving up
// hands back: context.Canceled, or context.DeadlineExceeded unless the
// loop's attempt runs on a context the function made itself
// (ownDeadline).
func (ev *evaluator) callerCancel(e ast.Expr) bool {
	c := ev.w.c
	return c.isCanceled(e) || c.isCtxErr(e) && !ev.w.ownDeadline()
}

// ownDeadline reports whether the loop's attempt runs on a context made
// from context.Background() or TODO — none at all, or its own timeout: a
// DeadlineExceeded from it is the call's own failure (a JetStream request
// that timed out, retried after a pause), no caller's cancellation.
func (w *loopWalker) ownDeadline() bool {
	call := w.attemptCall
	if call == nil {
		call = w.remoteCall
	}
	if call == nil {
		return false
	}
	for _, a := range call.Args {
		if !isNamed(w.c.info.TypeOf(a), "context", "Context") {
			continue
		}
		if w.c.fromBackground(a, nil, 0) {
			return true
		}
		if v := w.c.varOf(a); v != nil && w.c.detachedAt(v, call.Pos()) {
			return true
		}
	}
	return false
}

// inlineAttempt reads the verdict an attempt helper returns beside its
// error (again, err := post(c, req)) through its body, when the helper
// itself makes the HTTP call: the call's response and error inside it are
// bound to the outcome (a status comes with a nil error there, as from
// net/http), its parameters are free. ok is false if the helper is out of
// sight or makes no such call where the inliner can bind it.
func (ev *evaluator) inlineAttempt(call *ast.CallExpr, idx int, o outcome) (tri, bool) {
	c := ev.w.c
	if call != ev.w.remoteCall && call != ev.w.attemptCall {
		return triU, false
	}
	env, d, ok := c.bindCall(call, idx, func(ast.Expr) binding { return binding{} })
	if !ok {
		return triU, false
	}
	inner := outcome{hasStatus: o.hasStatus, status: o.status, err: !o.hasStatus}
	made := c.bindInnerCall(d.Body, env, inner)
	if !made.IsValid() {
		return triU, false
	}
	in := &inliner{c: c, o: inner, k: remoteHTTP, env: env, body: d.Body, made: made}
	return in.run(idx), true
}

// bindInnerCall binds, in env, the response and error variables of the
// one HTTP call in body (resp, err := c.Do(req)) to the inner outcome, and
// returns where that call is made; NoPos if it bound nothing.
func (c *checker) bindInnerCall(body *ast.BlockStmt, env map[*types.Var]binding, o outcome) token.Pos {
	var found *ast.AssignStmt
	n := 0
	ast.Inspect(body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.AssignStmt:
			if len(m.Rhs) == 1 {
				if call, ok := ast.Unparen(m.Rhs[0]).(*ast.CallExpr); ok && c.remoteKind(call) == remoteHTTP && returnsResponse(c.callee(call)) {
					found = m
					n++
				}
			}
		}
		return true
	})
	if n != 1 {
		return token.NoPos
	}
	bound := false
	for _, l := range found.Lhs {
		id, ok := l.(*ast.Ident)
		if !ok {
			continue
		}
		v, _ := c.info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = c.info.Uses[id].(*types.Var)
		}
		switch {
		case v == nil:
		case isError(v.Type()):
			env[v] = binding{kind: bErr, val: int64(boolInt(o.err))}
			bound = true
		case isNamed(v.Type(), "net/http", "Response"):
			env[v] = binding{kind: bResp}
			bound = true
		}
	}
	if !bound {
		return token.NoPos
	}
	return found.Pos()
}

// sendsInSight reports whether fn is a function of this package that makes
// one HTTP call whose answer and error the evaluator binds to an outcome.
func (c *checker) sendsInSight(fn *types.Func) bool {
	d := c.decls[fn]
	return d != nil && d.Body != nil && c.bindInnerCall(d.Body, map[*types.Var]binding{}, outcome{}).IsValid()
}

// pickedFuncs returns the named functions a call of a function of this
// package returns when it picks a func value: each return is a named
// function (the package's default), or a func parameter returned only
// under a test that it is set (if d != nil { return d }), the caller's
// setting over that default, which by default is unset. ok is false if
// any return is something else, or no default is named.
func (c *checker) pickedFuncs(call *ast.CallExpr) ([]*types.Func, bool) {
	fn := c.callee(call)
	d := c.decls[fn]
	if d == nil {
		return nil, false
	}
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() != 1 {
		return nil, false
	}
	if _, isFunc := sig.Results().At(0).Type().Underlying().(*types.Signature); !isFunc {
		return nil, false
	}
	guarded := c.nonNilGuarded(d.Body)
	var out []*types.Func
	ok := ownReturns(d.Body, func(r *ast.ReturnStmt) bool {
		if len(r.Results) != 1 {
			return false
		}
		var obj types.Object
		switch x := ast.Unparen(r.Results[0]).(type) {
		case *ast.Ident:
			obj = c.info.Uses[x]
		case *ast.SelectorExpr:
			obj = c.info.Uses[x.Sel]
		}
		switch o := obj.(type) {
		case *types.Func:
			out = append(out, o)
			return true
		case *types.Var:
			return c.params[o] && guarded[r] == o
		}
		return false
	})
	return out, ok && len(out) > 0
}

// nonNilGuarded maps each return statement that is the whole body of an
// `if v != nil { return … }` to v.
func (c *checker) nonNilGuarded(body *ast.BlockStmt) map[*ast.ReturnStmt]*types.Var {
	m := map[*ast.ReturnStmt]*types.Var{}
	ast.Inspect(body, func(n ast.Node) bool {
		is, ok := n.(*ast.IfStmt)
		if !ok || len(is.Body.List) != 1 {
			return true
		}
		r, ok := is.Body.List[0].(*ast.ReturnStmt)
		be, isBin := ast.Unparen(is.Cond).(*ast.BinaryExpr)
		if !ok || !isBin || be.Op != token.NEQ || !isNil(c.info, be.Y) {
			return true
		}
		if id, ok := ast.Unparen(be.X).(*ast.Ident); ok {
			if v, ok := c.info.Uses[id].(*types.Var); ok {
				m[r] = v
			}
		}
		return true
	})
	return m
}

// What a classifier parameter holds, in FuncFact.VerdictArgs.
const (
	vaNone = iota
	vaResp
	vaStatus
	vaErr
)

// verdictArgs says what each parameter of fn holds, if fn is a
// classifier another package's loop may call: a bool first result, and
// parameters that are all the response, a status code or the error, at
// least one of them a response or a status.
func verdictArgs(fn *types.Func) (uint64, bool) {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Results().Len() == 0 || !isBool(sig.Results().At(0).Type()) || sig.Params().Len() == 0 || sig.Params().Len() > 3 || sig.Variadic() {
		return 0, false
	}
	var args uint64
	status := false
	for i := range sig.Params().Len() {
		p := sig.Params().At(i)
		var k uint64
		switch {
		case isNamed(p.Type(), "net/http", "Response"):
			k, status = vaResp, true
		case isError(p.Type()):
			k = vaErr
		case isInteger(p.Type()) && statusName(p.Name()):
			k, status = vaStatus, true
		default:
			return 0, false
		}
		args |= k << (2 * i)
	}
	return args, status
}

func isInteger(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

func statusName(n string) bool {
	n = strings.ToLower(n)
	return strings.Contains(n, "status") || strings.Contains(n, "code")
}

// summarizeVerdict reads a classifier's body on every net/http outcome,
// for the loops of other packages that call it.
func (c *checker) summarizeVerdict(fn *types.Func, d *ast.FuncDecl, s *FuncFact) {
	args, ok := verdictArgs(fn)
	if !ok || !fn.Exported() {
		return
	}
	sig := fn.Type().(*types.Signature)
	for i, o := range outcomes(remoteHTTP) {
		if i >= 64 {
			break
		}
		env := map[*types.Var]binding{}
		for j := range sig.Params().Len() {
			switch (args >> (2 * j)) & 3 {
			case vaResp:
				env[sig.Params().At(j)] = binding{kind: bResp}
			case vaErr:
				env[sig.Params().At(j)] = binding{kind: bErr, val: int64(boolInt(o.err))}
			case vaStatus:
				if !o.hasStatus {
					env[sig.Params().At(j)] = binding{kind: bU}
				} else {
					env[sig.Params().At(j)] = binding{kind: bInt, val: int64(o.status)}
				}
			}
		}
		in := &inliner{c: c, o: o, k: remoteHTTP, env: env, body: d.Body}
		switch in.run(0) {
		case triT:
			s.Verdict |= 1 << i
		case triF:
			s.VerdictF |= 1 << i
		}
	}
	if s.Verdict != 0 || s.VerdictF != 0 {
		s.VerdictArgs = args
	}
}

// importedVerdict is what another package's classifier, by its fact,
// answers on outcome o of the loop's net/http call; ok is false if it has
// no verdict, or the call does not hand it this outcome.
func (ev *evaluator) importedVerdict(call *ast.CallExpr, o outcome) (tri, bool) {
	c := ev.w.c
	fn := c.callee(call)
	if fn == nil || c.decls[fn] != nil || ev.k != remoteHTTP || call.Ellipsis.IsValid() {
		return triU, false
	}
	f := c.fact(fn)
	if f == nil || f.VerdictArgs == 0 {
		return triU, false
	}
	for j, a := range call.Args {
		switch (f.VerdictArgs >> (2 * j)) & 3 {
		case vaResp:
			if !isNamed(c.info.TypeOf(a), "net/http", "Response") {
				return triU, false
			}
		case vaErr:
			if ev.srcOf(a) != srcOutcome {
				return triU, false
			}
		case vaStatus:
			if !c.hasStatus(a) && !c.statusVar(a, ev.w.body) {
				return triU, false
			}
		}
	}
	for i, x := range outcomes(remoteHTTP) {
		if x != o || i >= 64 {
			continue
		}
		switch {
		case f.Verdict&(1<<i) != 0:
			return triT, true
		case f.VerdictF&(1<<i) != 0:
			return triF, true
		}
	}
	return triU, true
}

// attemptFails evaluates, on a status outcome, whether the error an
// attempt helper of this package returns beside the answer is not nil
// (resp, err := c.doRequest(ctx, …), where doRequest makes the HTTP call
// and turns some statuses into errors): its body is read with the call's
// response and error bound to the outcome. ok is false if the helper is
// out of sight, makes no such call, or may go either way.
func (ev *evaluator) attemptFails(y ast.Expr, o outcome) (tri, bool) {
	c := ev.w.c
	v, _ := c.info.Uses[identOf(y)].(*types.Var)
	if v == nil || !o.hasStatus || ev.k != remoteHTTP {
		return triU, false
	}
	var call *ast.CallExpr
	idx := -1
	ast.Inspect(ev.w.body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		for i, l := range as.Lhs {
			if id := identOf(l); id != nil && (c.info.Uses[id] == v || c.info.Defs[id] == v) {
				if x, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); ok && (x == ev.w.remoteCall || x == ev.w.attemptCall) {
					call, idx = x, i
				}
			}
		}
		return true
	})
	if call == nil {
		return triU, false
	}
	if ev.w.testsSentinelFor(v, o.status) {
		return triT, true // the loop asks for the error its package makes of this status
	}
	if c.decls[c.callee(call)] == nil {
		return triU, false // net/http's own call: a status comes with a nil error
	}
	env, d, ok := c.bindCallOf(call, idx, isError, func(ast.Expr) binding { return binding{} })
	if !ok {
		return triU, false
	}
	made := c.bindInnerCall(d.Body, env, outcome{hasStatus: true, status: o.status})
	if !made.IsValid() {
		return triU, false
	}
	in := &inliner{c: c, o: o, k: remoteHTTP, env: env, body: d.Body, errResult: true, made: made}
	r := in.run(idx)
	return r, r != triU
}
