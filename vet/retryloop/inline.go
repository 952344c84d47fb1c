package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A classifier of this package (shouldRetry(resp, err), r.Retry(code,
// err)) is read through rather than trusted: its body is evaluated with
// its parameters bound to the outcome the loop's call had, and its verdict
// on that outcome is what the loop does. Conditions that do not depend on
// the outcome (an attempt counter, a configuration field) may go either
// way, as in a loop; what depends on the outcome and cannot be evaluated
// (errors.Is on a real error) is a classification, unknown.

// vset is a set of possible tri values, one bit each: an outcome-free
// condition is {F, T}, an unknowable one {U}.
type vset uint8

func one(t tri) vset { return 1 << t }

var vFree = one(triF) | one(triT)

func (s vset) has(t tri) bool { return s&one(t) != 0 }

func (s vset) dead() bool { return s&^one(triF) == 0 }

// lift applies a binary tri function to every pair of two sets.
func lift(a, b vset, f func(tri, tri) tri) vset {
	var r vset
	for x := triF; x <= triT; x++ {
		for y := triF; y <= triT; y++ {
			if a.has(x) && b.has(y) {
				r |= one(f(x, y))
			}
		}
	}
	return r
}

func (s vset) not() vset {
	var r vset
	for x := triF; x <= triT; x++ {
		if s.has(x) {
			r |= one(x.not())
		}
	}
	return r
}

func (s vset) max() tri {
	for x := triT; x > triF; x-- {
		if s.has(x) {
			return x
		}
	}
	return triF
}

// what a classifier's parameter holds
const (
	bFree = iota // not the outcome: a counter, a context, a field
	bErr         // the outcome's error; val 0 nil, 1 not nil, 2 either
	bResp        // the outcome's *http.Response
	bInt         // a known integer (a status code)
	bU           // the outcome, in a form that cannot be evaluated
)

type binding struct {
	kind int
	val  int64
}

type inliner struct {
	c     *checker
	o     outcome
	k     int
	env   map[*types.Var]binding
	body  *ast.BlockStmt
	depth int
	// errResult evaluates a status check (see statusCheck): its result
	// is an error, read as whether it is not nil.
	errResult bool
	// made is where the callee makes the HTTP call bound to the outcome,
	// if it does; a return before it, outside any loop, is on a path that
	// never made the call (a request that could not be built or dumped)
	// and says nothing of the outcome. loops counts the loops walked.
	made  token.Pos
	loops int
	// rets is every value a return reached on a live path gives,
	// whatever the path: a classifier whose every return says true
	// (retryableError's "make all errors retryable") answers true on
	// paths its tests cannot tell apart.
	rets vset
}

// inline evaluates the idx-th result (a bool) of a call of a classifier of
// this package on outcome o. ok is false if the callee is out of sight.
func (ev *evaluator) inline(call *ast.CallExpr, idx int, o outcome) (tri, bool) {
	env, d, ok := ev.w.c.bindCall(call, idx, func(a ast.Expr) binding { return ev.argBinding(a, o) })
	if !ok {
		return triU, false
	}
	if sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr); isSel && ev.k != remoteNone && ev.fromAttempt(sel.X) {
		// resp.needsRetry(n), resp the attempt's own answer: the
		// receiver holds the outcome
		if fn := ev.w.c.callee(call); ownAnswerMethod(fn, ev.w.c.pass.Pkg) {
			if r := fn.Type().(*types.Signature).Recv(); r != nil {
				env[r] = binding{kind: bResp}
			}
		}
	}
	in := &inliner{c: ev.w.c, o: o, k: ev.k, env: env, body: d.Body}
	return in.run(idx), true
}

// bindCall binds the parameters of the classifier call calls to what its
// arguments hold.
func (c *checker) bindCall(call *ast.CallExpr, idx int, bind func(ast.Expr) binding) (map[*types.Var]binding, *ast.FuncDecl, bool) {
	return c.bindCallOf(call, idx, isBool, bind)
}

// bindCallOf is bindCall for a result at idx of the type want accepts.
func (c *checker) bindCallOf(call *ast.CallExpr, idx int, want func(types.Type) bool, bind func(ast.Expr) binding) (map[*types.Var]binding, *ast.FuncDecl, bool) {
	fn := c.callee(call)
	d := c.decls[fn]
	if d == nil || call.Ellipsis.IsValid() {
		return nil, nil, false
	}
	sig := fn.Type().(*types.Signature)
	if idx >= sig.Results().Len() || !want(sig.Results().At(idx).Type()) || sig.Variadic() || sig.Params().Len() != len(call.Args) {
		return nil, nil, false
	}
	env := map[*types.Var]binding{}
	for i, a := range call.Args {
		env[sig.Params().At(i)] = bind(a)
	}
	return env, d, true
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// argBinding says what an argument of the loop's classifier call holds
// on outcome o.
func (ev *evaluator) argBinding(a ast.Expr, o outcome) binding {
	c := ev.w.c
	t := c.info.TypeOf(a)
	switch {
	case isError(t):
		if src := ev.srcOf(a); src >= srcCheck {
			// a status check's error: nil where the check passed
			return binding{kind: bErr, val: [...]int64{0, 2, 1}[ev.checkFails(src, o)]}
		}
		if ev.srcOf(a) != srcOutcome {
			return binding{}
		}
		return binding{kind: bErr, val: int64(boolInt(o.err))}
	case isNamed(t, "net/http", "Response") && ev.k == remoteHTTP:
		return binding{kind: bResp}
	case ev.k != remoteNone && t != nil && !isError(t) && hasStatusMember(t) && ev.fromAttempt(a):
		// the client's own response type, as its call returned it
		return binding{kind: bResp}
	case c.hasStatus(a) || c.statusVar(a, ev.w.body):
		if !o.hasStatus || (o.err && ev.k == remoteHTTP) {
			return binding{kind: bU}
		}
		if v, ok := c.evalInt(a, o, ev.w.body, 0); ok {
			return binding{kind: bInt, val: v}
		}
		if c.statusVar(a, ev.w.body) {
			// code := 0; if resp != nil { code = resp.StatusCode }: where
			// a response came, the variable assigned its status holds it.
			return binding{kind: bInt, val: int64(o.status)}
		}
		return binding{kind: bU}
	}
	if tv, ok := c.info.Types[a]; ok && tv.Value != nil {
		if v, ok := c.evalInt(a, o, ev.w.body, 0); ok {
			return binding{kind: bInt, val: v}
		}
	}
	return binding{}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// statusVar reports whether a is a variable some assignment in body gives
// a status code.
func (c *checker) statusVar(a ast.Expr, body *ast.BlockStmt) bool {
	id, ok := ast.Unparen(a).(*ast.Ident)
	if !ok {
		return false
	}
	for _, x := range c.assignsOf(body)[c.info.Uses[id]] {
		if x != unknownExpr && c.hasStatus(x) {
			return true
		}
	}
	return false
}

// run walks the callee's body and returns its verdict.
func (in *inliner) run(idx int) tri {
	var got vset
	in.stmts(in.body.List, one(triT), idx, &got)
	switch {
	case got == 0:
		return triU
	case in.rets == one(triT) || in.rets == one(triF):
		return in.rets.max()
	}
	return got.max()
}

// stmts walks a statement list on a path whose condition is path; it
// returns the path's condition where the list falls through, and whether
// it does.
func (in *inliner) stmts(list []ast.Stmt, path vset, idx int, got *vset) (vset, bool) {
	for _, s := range list {
		var falls bool
		path, falls = in.stmt(s, path, idx, got)
		if !falls || path.dead() {
			return path, false
		}
	}
	return path, true
}

func (in *inliner) stmt(s ast.Stmt, path vset, idx int, got *vset) (vset, bool) {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		if in.made.IsValid() && in.loops == 0 && s.End() <= in.made {
			return path, false // before the call: not its outcome
		}
		r := one(triU)
		switch {
		case in.errResult && idx < len(s.Results):
			r = in.errCond(s.Results[idx])
		case idx < len(s.Results) && len(s.Results) > 1 || idx == 0 && len(s.Results) == 1:
			r = in.cond(s.Results[idx])
		}
		*got |= lift(path, r, and3)
		if !path.dead() {
			in.rets |= r
		}
		return path, false
	case *ast.BlockStmt:
		return in.stmts(s.List, path, idx, got)
	case *ast.LabeledStmt:
		return in.stmt(s.Stmt, path, idx, got)
	case *ast.IfStmt:
		return in.ifStmt(s, path, idx, got)
	case *ast.SwitchStmt:
		return in.switchStmt(s, path, idx, got)
	case *ast.TypeSwitchStmt:
		k := vFree
		if in.mentionsOutcome(s.Assign) {
			k = one(triU)
		}
		for _, cl := range s.Body.List {
			in.stmts(cl.(*ast.CaseClause).Body, lift(path, k, and3), idx, got)
		}
		return path, true
	case *ast.ForStmt:
		in.loops++
		in.stmt(s.Body, lift(path, vFree, and3), idx, got)
		in.loops--
	case *ast.RangeStmt:
		in.loops++
		in.stmt(s.Body, lift(path, vFree, and3), idx, got)
		in.loops--
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok && in.c.noReturn(call) {
			return path, false
		}
	}
	return path, true
}

func (in *inliner) ifStmt(s *ast.IfStmt, path vset, idx int, got *vset) (vset, bool) {
	c := in.cond(s.Cond)
	yes, no := lift(path, c, and3), lift(path, c.not(), and3)
	t, tf := yes, false
	if !yes.dead() {
		t, tf = in.stmt(s.Body, yes, idx, got)
	}
	e, ef := no, !no.dead()
	if s.Else != nil && ef {
		e, ef = in.stmt(s.Else, no, idx, got)
	}
	switch {
	case tf && ef:
		return t | e, true
	case tf:
		return t, true
	case ef:
		return e, true
	}
	return path, false
}

func (in *inliner) switchStmt(s *ast.SwitchStmt, path vset, idx int, got *vset) (vset, bool) {
	none := path
	var out vset
	falls := false
	for _, cl := range s.Body.List {
		cc := cl.(*ast.CaseClause)
		if cc.List == nil {
			continue
		}
		m := one(triF)
		for _, v := range cc.List {
			if s.Tag == nil {
				m = lift(m, in.cond(v), or3)
			} else {
				m = lift(m, in.compare(token.EQL, s.Tag, v), or3)
			}
		}
		if p := lift(path, m, and3); !p.dead() {
			if e, f := in.stmts(cc.Body, p, idx, got); f {
				out, falls = out|e, true
			}
		}
		none = lift(none, m.not(), and3)
	}
	hasDefault := false
	for _, cl := range s.Body.List {
		if cc := cl.(*ast.CaseClause); cc.List == nil {
			hasDefault = true
			if e, f := in.stmts(cc.Body, none, idx, got); f && !none.dead() {
				out, falls = out|e, true
			}
		}
	}
	if !hasDefault && !none.dead() {
		out, falls = out|none, true
	}
	return out, falls
}

// cond evaluates a boolean expression on the outcome.
func (in *inliner) cond(e ast.Expr) vset {
	switch e := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return in.cond(e.X).not()
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			return lift(in.cond(e.X), in.cond(e.Y), and3)
		case token.LOR:
			return lift(in.cond(e.X), in.cond(e.Y), or3)
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return in.compare(e.Op, e.X, e.Y)
		}
	case *ast.Ident:
		return in.identCond(e)
	case *ast.CallExpr:
		return in.callCond(e)
	case *ast.IndexExpr:
		if r, ok := in.lookupCond(e); ok {
			return r
		}
	}
	if tv, ok := in.c.info.Types[e]; ok && tv.Value != nil {
		return boolSet(tv.Value.ExactString() == "true")
	}
	return in.opaque(e)
}

func boolSet(b bool) vset { return one(boolTri(b)) }

// opaque is what an expression the inliner cannot evaluate is: unknown if
// it depends on the outcome, either way if not.
func (in *inliner) opaque(e ast.Node) vset {
	if in.mentionsOutcome(e) {
		return one(triU)
	}
	return vFree
}

func (in *inliner) identCond(id *ast.Ident) vset {
	if tv, ok := in.c.info.Types[id]; ok && tv.Value != nil {
		return boolSet(tv.Value.ExactString() == "true")
	}
	v, ok := in.c.info.Uses[id].(*types.Var)
	if !ok || in.depth > 6 {
		return in.opaque(id)
	}
	if as, i := in.soleAssign(v); as != nil {
		if len(as.Lhs) == len(as.Rhs) {
			in.depth++
			defer func() { in.depth-- }()
			return in.cond(as.Rhs[i])
		}
		if r, ok := in.lookupCond(as.Rhs[0]); ok && i == 1 {
			return r // _, ok := retryOn[status]
		}
		if ta, ok := ast.Unparen(as.Rhs[0]).(*ast.TypeAssertExpr); ok && i == 1 {
			// _, ok := err.(T): no nil error is of any type
			if b, bound := in.bindingOf(ta.X); bound && b.kind == bErr && b.val == 0 {
				return one(triF)
			}
		}
		if call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); ok && isBool(v.Type()) {
			if r, ok := in.nested(call, i); ok {
				return r
			}
		}
	}
	return in.opaque(id)
}

// soleAssign returns the one assignment of v in the callee's body, and
// v's place on its left.
func (in *inliner) soleAssign(v *types.Var) (*ast.AssignStmt, int) {
	var found *ast.AssignStmt
	at, n := 0, 0
	ast.Inspect(in.body, func(m ast.Node) bool {
		as, ok := m.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			if id, ok := l.(*ast.Ident); ok && (in.c.info.Defs[id] == v || in.c.info.Uses[id] == v) {
				found, at = as, i
				n++
			}
		}
		return true
	})
	if n != 1 {
		return nil, 0
	}
	return found, at
}

func (in *inliner) callCond(call *ast.CallExpr) vset {
	if r, ok := in.lookupCond(call); ok {
		return r
	}
	if r, ok := in.memberCond(call); ok {
		return r
	}
	if r, ok := in.nested(call, 0); ok {
		return r
	}
	fn := in.c.callee(call)
	if isFunc(fn, "errors", "Is", "As") && len(call.Args) > 0 {
		if b, ok := in.bindingOf(call.Args[0]); ok && b.kind == bErr && b.val == 0 {
			return one(triF)
		}
		if isFunc(fn, "errors", "Is") && len(call.Args) == 2 && in.cancelTest(call.Args[0], call.Args[1]) {
			return one(triF)
		}
	}
	if !in.mentionsOutcome(call) {
		return vFree
	}
	// Handed the outcome: a nil error alone is never retried.
	for _, a := range append([]ast.Expr{call.Fun}, call.Args...) {
		if !in.mentionsOutcome(a) {
			continue
		}
		if b, ok := in.bindingOf(a); !ok || b.kind != bErr || b.val != 0 {
			if sel, ok := ast.Unparen(a).(*ast.SelectorExpr); ok {
				if b, ok := in.bindingOf(sel.X); ok && b.kind == bErr && b.val == 0 {
					continue // nilErr.Method(): not reached on a nil error
				}
			}
			return one(triU)
		}
	}
	return one(triF)
}

// nested inlines a call of another classifier of this package.
func (in *inliner) nested(call *ast.CallExpr, idx int) (vset, bool) {
	if in.depth > 4 {
		return 0, false
	}
	env, d, ok := in.c.bindCall(call, idx, in.argBinding)
	if !ok {
		return 0, false
	}
	sub := &inliner{c: in.c, o: in.o, k: in.k, env: env, body: d.Body, depth: in.depth + 1}
	var got vset
	sub.stmts(d.Body.List, one(triT), idx, &got)
	if got == 0 {
		return one(triU), true
	}
	return got, true
}

// argBinding says what an argument of a nested classifier call holds.
func (in *inliner) argBinding(a ast.Expr) binding {
	if b, ok := in.bindingOf(a); ok {
		return b
	}
	if !in.mentionsOutcome(a) {
		return binding{}
	}
	if isError(in.c.info.TypeOf(a)) {
		if in.o.err {
			return binding{kind: bErr, val: 2}
		}
		return binding{kind: bErr, val: 0} // derived from a nil error: err.Unwrap() is not reached
	}
	if v, ok := in.intOf(a); ok {
		return binding{kind: bInt, val: v}
	}
	return binding{kind: bU}
}

// bindingOf returns the binding of a parameter, or of a variable of the
// callee assigned one.
func (in *inliner) bindingOf(e ast.Expr) (binding, bool) {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return binding{}, false
	}
	v, ok := in.c.info.Uses[id].(*types.Var)
	if !ok {
		return binding{}, false
	}
	b, ok := in.env[v]
	return b, ok && b.kind != bFree
}

// mentionsOutcome reports whether n uses a parameter bound to the
// outcome, or a variable of the callee assigned from one.
func (in *inliner) mentionsOutcome(n ast.Node) bool {
	return in.mentions(n, 0)
}

func (in *inliner) mentions(n ast.Node, depth int) bool {
	if n == nil || isNilNode(n) || depth > 4 {
		return false
	}
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		id, ok := m.(*ast.Ident)
		if found || !ok {
			return !found
		}
		v, ok := in.c.info.Uses[id].(*types.Var)
		if !ok {
			return true
		}
		if b, ok := in.env[v]; ok {
			found = b.kind != bFree
			return true
		}
		for _, x := range in.rhsOf(v) {
			if in.mentions(x, depth+1) {
				found = true
			}
		}
		return true
	})
	return found
}

// hasStatusMember reports whether a value of type t has a StatusCode field
// or method (its own or an embedded *http.Response's), or is an SDK's
// response keeping the status as HTTPStatus (see statusWrapper).
func hasStatusMember(t types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "StatusCode")
	return obj != nil || statusWrapper(t)
}

// fromAttempt reports whether a is a variable the loop's remote call (or
// its attempt) assigns.
func (ev *evaluator) fromAttempt(a ast.Expr) bool {
	id := identOf(a)
	if id == nil {
		return false
	}
	v, ok := ev.w.c.info.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	for _, call := range ev.w.c.callsAssigning(v, ev.w.body) {
		if call == ev.w.remoteCall || call == ev.w.attemptCall {
			return true
		}
	}
	return false
}

// lookupCond evaluates a status-set membership (retryOn[code],
// slices.Contains(codes, code)) on the outcome.
func (in *inliner) lookupCond(e ast.Expr) (vset, bool) {
	set, st, ok := in.c.statusLookup(e)
	if !ok || !in.mentionsOutcome(st) {
		return 0, false
	}
	if !in.o.hasStatus {
		return one(triF), true
	}
	v, known := in.intOf(st)
	return one(in.c.evalLookup(set, in.body, in.o, v, known)), true
}

// memberCond evaluates a membership helper's call (retryable(code, cfg),
// isOneOf(code, 429, 503)) on the outcome, as lookupCond does a lookup.
func (in *inliner) memberCond(call *ast.CallExpr) (vset, bool) {
	st, set, ok := in.c.memberCall(call, in.body)
	if !ok || !in.mentionsOutcome(st) {
		return 0, false
	}
	if !in.o.hasStatus {
		return one(triF), true
	}
	v, known := in.intOf(st)
	if b, bound := in.bindingOf(st); bound && b.kind == bResp {
		v, known = int64(in.o.status), true // the response itself, handed on
	}
	if !known {
		return one(triU), true
	}
	return one(boolTri(set[v])), true
}
