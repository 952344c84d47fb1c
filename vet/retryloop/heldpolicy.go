package retryloop

import (
	"go/ast"
	"go/types"
	"strconv"
	"strings"
)

// A retry type may keep the policy its constructor is handed
// (NewRetry(max, b Backoff) returning &retry{policy: b}) and wait, in its
// methods, what that policy says (r.policy.Next()). Inside its package
// that wait is the constructor's caller's to choose (pField). At a call of
// such a method elsewhere (retry.WaitNext(ctx), retry.Do(ctx, op)), the
// receiver is traced to the constructor call that made it, and the policy
// handed there is judged: one of a concrete type by its methods'
// summaries, one a function returns (backoff.NewConstant(d)) by that
// function's Builds.

// andField combines two durations one of which is a held policy's: the
// same field, or a field and constants, are still that field's; anything
// else is unknown.
func (p purity) andField(q purity) purity {
	if p.kind != pField {
		p, q = q, p
	}
	switch {
	case q.kind == pPure, q.kind == pField && q.field == p.field:
		p.byDefault = p.byDefault || q.byDefault
		return p
	}
	return purity{}
}

// policyField names (Type.field) the field of fn's receiver, of an
// interface type, that a call of m, an interface method returning a
// time.Duration, is made on (r.policy.Next()), when every value the
// package gives that field is a function's parameter: a constructor's
// caller chooses it.
func (c *checker) policyField(call *ast.CallExpr, m *types.Func, fn *types.Func) (string, bool) {
	if fn == nil || !returnsDuration(m) {
		return "", false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	inner, ok := ast.Unparen(sel.X).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	field, ok := c.info.Uses[inner.Sel].(*types.Var)
	recv := fn.Type().(*types.Signature).Recv()
	if !ok || !field.IsField() || !types.IsInterface(field.Type()) || recv == nil || c.info.Uses[identOf(inner.X)] != recv {
		return "", false
	}
	vals := c.fieldValues[field]
	for _, fv := range vals {
		v, ok := c.info.Uses[identOf(fv.expr)].(*types.Var)
		if !ok || !c.params[v] {
			return "", false
		}
	}
	named := recvNamed(fn)
	if len(vals) == 0 || named == nil {
		return "", false
	}
	return named.Obj().Name() + "." + field.Name(), true
}

// summarizeHeld records in s the policy fields a constructor sets from its
// parameters (FieldParams), and, for a function returning a policy, what
// the policies it returns answer (Builds).
func (c *checker) summarizeHeld(fn *types.Func, d *ast.FuncDecl, s *FuncFact) {
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() == 0 {
		return
	}
	s.FieldParams = c.fieldParams(fn, d)
	iface, ok := sig.Results().At(0).Type().Underlying().(*types.Interface)
	if !ok || !isPolicy(iface) {
		return
	}
	sched := schedUnknown
	ok = ownReturns(d.Body, func(r *ast.ReturnStmt) bool {
		if len(r.Results) == 0 {
			return false
		}
		vals, ok := c.concreteValues(r.Results[0], d.Body, 1)
		for _, v := range vals {
			t := c.typeSched(c.info.TypeOf(v), iface)
			if t == schedUnknown || (sched != schedUnknown && t != sched) {
				return false
			}
			sched = t
		}
		return ok && len(vals) > 0
	})
	switch {
	case !ok:
	case sched == schedPure:
		s.Builds = jitterNone
	case sched == schedJitter:
		s.Builds = jitterYes
	}
}

// fieldParams lists, as Type.field=index pairs, the policy fields (see
// isPolicy) that every struct literal fn returns sets to one of its
// parameters.
func (c *checker) fieldParams(fn *types.Func, d *ast.FuncDecl) string {
	var pairs []string
	ownReturns(d.Body, func(r *ast.ReturnStmt) bool {
		if len(r.Results) == 0 {
			return false
		}
		x := ast.Unparen(r.Results[0])
		if u, ok := x.(*ast.UnaryExpr); ok {
			x = ast.Unparen(u.X)
		}
		lit, ok := x.(*ast.CompositeLit)
		named, isNamed := derefNamed(c.info.TypeOf(lit))
		if !ok || !isNamed {
			return false
		}
		var got []string
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			f, isField := c.info.Uses[identOf(kv.Key)].(*types.Var)
			v, isVar := c.info.Uses[identOf(kv.Value)].(*types.Var)
			if !isField || !isVar || !f.IsField() || !isPolicy(f.Type()) {
				continue
			}
			if i, ok := paramIndex(fn, v); ok {
				got = append(got, named.Obj().Name()+"."+f.Name()+"="+strconv.Itoa(i))
			}
		}
		if pairs != nil && strings.Join(pairs, ",") != strings.Join(got, ",") {
			pairs = nil
			return false // returns that disagree: which one is made is not in sight
		}
		pairs = got
		return true
	})
	return strings.Join(pairs, ",")
}

// isPolicy reports whether t is an interface with a method returning a
// time.Duration (a Backoff's Next).
func isPolicy(t types.Type) bool {
	iface, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	for m := range iface.Methods() {
		if returnsDuration(m) {
			return true
		}
	}
	return false
}

// heldPurity says what a call waits of a method whose wait is the policy
// kept in its receiver's field (DurField): the same field again on the
// method's own receiver (a Retry's Do asking r.WaitNext), else the policy
// handed to the constructor call the receiver comes from.
func (c *checker) heldPurity(call *ast.CallExpr, field string, body *ast.BlockStmt, fn *types.Func) purity {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return purity{}
	}
	if fn != nil {
		if recv := fn.Type().(*types.Signature).Recv(); recv != nil && c.info.Uses[identOf(sel.X)] == recv {
			return purity{kind: pField, field: field}
		}
	}
	ctors, ok := c.ctorCalls(sel.X, body)
	if !ok {
		return purity{}
	}
	p := purity{kind: pNone}
	for _, ctor := range ctors {
		p = p.and(c.handedPolicy(ctor, field, body, 0))
	}
	if p.kind == pNone {
		return purity{}
	}
	return p
}

// heldSched is heldPurity as a retry library's schedule.
func (c *checker) heldSched(call *ast.CallExpr, field string, body *ast.BlockStmt, fn *types.Func) int {
	switch c.heldPurity(call, field, body, fn).kind {
	case pPure:
		return schedPure
	case pRand:
		return schedJitter
	}
	return schedUnknown
}

// ctorCalls returns the calls recv is made by: recv itself, or every value
// a local variable is given, each a call.
func (c *checker) ctorCalls(recv ast.Expr, body *ast.BlockStmt) ([]*ast.CallExpr, bool) {
	if call, ok := ast.Unparen(recv).(*ast.CallExpr); ok {
		return []*ast.CallExpr{call}, true
	}
	v, ok := c.info.Uses[identOf(recv)].(*types.Var)
	if !ok || c.params[v] || v.Parent() == nil || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() {
		return nil, false
	}
	xs := c.assignsOf(body)[v]
	var out []*ast.CallExpr
	for _, x := range xs {
		call, ok := ast.Unparen(x).(*ast.CallExpr)
		if !ok {
			return nil, false
		}
		out = append(out, call)
	}
	return out, len(out) > 0
}

// handedPolicy says what the policy a constructor call hands to field
// answers.
func (c *checker) handedPolicy(ctor *ast.CallExpr, field string, body *ast.BlockStmt, depth int) purity {
	callee := c.callee(ctor)
	f := c.fact(callee)
	if f == nil || ctor.Ellipsis.IsValid() {
		return purity{}
	}
	for pair := range strings.SplitSeq(f.FieldParams, ",") {
		name, idx, _ := strings.Cut(pair, "=")
		i, err := strconv.Atoi(idx)
		if name != field || err != nil || i >= len(ctor.Args) {
			continue
		}
		iface, ok := callee.Type().(*types.Signature).Params().At(i).Type().Underlying().(*types.Interface)
		if !ok {
			return purity{}
		}
		return c.policyValue(ctor.Args[i], iface, body, depth)
	}
	return purity{}
}

// policyValue says what a policy value answers: one of a concrete type by
// its methods, one a call returns by the callee's Builds, a local
// variable by what it is given.
func (c *checker) policyValue(e ast.Expr, iface *types.Interface, body *ast.BlockStmt, depth int) purity {
	if depth > 3 {
		return purity{}
	}
	if t := c.info.TypeOf(e); t != nil && !types.IsInterface(t) {
		return schedPurity(c.typeSched(t, iface))
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		if f := c.fact(c.callee(e)); f != nil {
			return schedPurity(f.Builds)
		}
	case *ast.Ident:
		v, ok := c.info.Uses[e].(*types.Var)
		if !ok || c.params[v] {
			return purity{}
		}
		xs := c.assignsOf(body)[v]
		if len(xs) != 1 || xs[0] == unknownExpr {
			return purity{}
		}
		return c.policyValue(xs[0], iface, body, depth+1)
	}
	return purity{}
}

// schedPurity is a schedule (or a jitter fact, numbered alike) as a
// duration's purity.
func schedPurity(s int) purity {
	switch s {
	case schedPure:
		return purity{kind: pPure}
	case schedJitter:
		return purity{kind: pRand}
	}
	return purity{}
}
