package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// rhsOf returns what the callee's body assigns to v: the right side, or
// the whole right side of a tuple assignment.
func (in *inliner) rhsOf(v *types.Var) []ast.Expr {
	var out []ast.Expr
	ast.Inspect(in.body, func(m ast.Node) bool {
		switch as := m.(type) {
		case *ast.AssignStmt:
			for i, l := range as.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok || (in.c.info.Defs[id] != v && in.c.info.Uses[id] != v) {
					continue
				}
				if len(as.Lhs) == len(as.Rhs) {
					out = append(out, as.Rhs[i])
				} else {
					out = append(out, as.Rhs...)
				}
			}
		case *ast.RangeStmt:
			for _, l := range []ast.Expr{as.Key, as.Value} {
				if id, ok := l.(*ast.Ident); ok && in.c.info.Defs[id] == v {
					out = append(out, as.X)
				}
			}
		}
		return true
	})
	return out
}

// compare evaluates x op y on the outcome.
func (in *inliner) compare(op token.Token, x, y ast.Expr) vset {
	info := in.c.info
	if isNil(info, y) {
		x, y = y, x
	}
	if isNil(info, x) {
		b, ok := in.bindingOf(y)
		var r vset
		switch {
		case ok && b.kind == bErr && b.val < 2:
			r = boolSet(b.val == 0)
		case ok && b.kind == bResp && in.k == remoteHTTP:
			r = boolSet(in.o.err)
		case ok && b.kind == bResp:
			r = boolSet(!in.o.hasStatus) // a client's own response comes with its status
		default:
			if nr, ok := in.nestedErr(y); ok {
				r = nr // err := checkResponse(resp); err != nil
				break
			}
			return in.opaque(y)
		}
		if op == token.NEQ {
			r = r.not()
		}
		return r
	}
	if isError(info.TypeOf(x)) || isError(info.TypeOf(y)) {
		if in.cancelTest(x, y) {
			// err == context.Canceled: the caller gave up, which a
			// dependency's failure never is
			return boolSet(op == token.NEQ)
		}
		for _, pair := range [][2]ast.Expr{{x, y}, {y, x}} {
			if b, ok := in.bindingOf(pair[0]); ok && b.kind == bErr && b.val == 0 && !in.mentionsOutcome(pair[1]) {
				return boolSet(op == token.NEQ) // a nil error is none of the package's errors
			}
			if b, ok := in.bindingOf(pair[0]); ok && b.kind == bErr && b.val != 0 && in.o.hasStatus && in.c.isSentinel(pair[1]) {
				return boolSet(op == token.NEQ) // a status's error is no errors.New sentinel
			}
		}
	}
	a, ok1 := in.intOf(x)
	b, ok2 := in.intOf(y)
	if ok1 && ok2 {
		return boolSet(compareInts(op, a, b))
	}
	if in.mentionsOutcome(x) || in.mentionsOutcome(y) {
		return one(triU)
	}
	return vFree
}

// cancelTest reports whether x and y, on a failed outcome, compare the
// outcome's error with context.Canceled.
func (in *inliner) cancelTest(x, y ast.Expr) bool {
	if !in.o.failure() {
		return false
	}
	c := in.c
	return c.isCanceled(x) && in.mentionsOutcome(y) || c.isCanceled(y) && in.mentionsOutcome(x)
}

func compareInts(op token.Token, a, b int64) bool {
	switch op {
	case token.EQL:
		return a == b
	case token.NEQ:
		return a != b
	case token.LSS:
		return a < b
	case token.LEQ:
		return a <= b
	case token.GTR:
		return a > b
	case token.GEQ:
		return a >= b
	}
	return false
}

// intOf evaluates an integer expression on the outcome.
func (in *inliner) intOf(e ast.Expr) (int64, bool) {
	if tv, ok := in.c.info.Types[e]; ok && tv.Value != nil {
		v, exact := constInt(tv.Value.ExactString())
		return v, exact
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		if b, ok := in.bindingOf(e); ok {
			return b.val, b.kind == bInt
		}
		if v, ok := in.c.info.Uses[e].(*types.Var); ok && in.depth < 6 {
			if as, i := in.soleAssign(v); as != nil && len(as.Lhs) == len(as.Rhs) {
				in.depth++
				defer func() { in.depth-- }()
				return in.intOf(as.Rhs[i])
			}
		}
	case *ast.SelectorExpr, *ast.CallExpr:
		if v, ok := in.statusOf(e); ok {
			return v, true
		}
	case *ast.BinaryExpr:
		a, ok1 := in.intOf(e.X)
		b, ok2 := in.intOf(e.Y)
		if ok1 && ok2 {
			return arith(e.Op, a, b)
		}
	}
	return 0, false
}

func constInt(s string) (int64, bool) {
	var v int64
	for i, r := range s {
		if r == '-' && i == 0 {
			continue
		}
		if r < '0' || r > '9' {
			return 0, false
		}
		v = v*10 + int64(r-'0')
	}
	if len(s) > 0 && s[0] == '-' {
		v = -v
	}
	return v, len(s) > 0
}

// classifierBound reports whether a condition is the verdict of a
// classifier of this package that counts or reads the clock
// (if r.attempts == max { return 0, false }): the loop is bounded there.
func (w *loopWalker) classifierBound(cd cond, st state) bool {
	c := w.c
	var call *ast.CallExpr
	idx := 0
	switch e := ast.Unparen(cd.expr).(type) {
	case *ast.UnaryExpr:
		return e.Op == token.NOT && w.classifierBound(cond{expr: e.X}, st)
	case *ast.CallExpr:
		if !c.classifies(e) {
			return false
		}
		call = e
	case *ast.Ident:
		v, ok := c.info.Uses[e].(*types.Var)
		if !ok || !c.verdictOfClassifier(v, w.body) {
			return false
		}
		if call, idx, ok = c.classifierCall(v, w.body); !ok {
			return false
		}
	}
	if call == nil {
		return false
	}
	ev := &evaluator{w: w, k: remoteNone, st: st}
	o := outcome{err: true}
	env, d, ok := c.bindCall(call, idx, func(a ast.Expr) binding { return ev.argBinding(a, o) })
	if !ok {
		return false
	}
	in := &inliner{c: c, o: o, env: env, body: d.Body}
	found := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
				tx := c.info.TypeOf(n.X)
				if tx != nil && (isIntegerish(tx) || isNamed(tx, "time", "Duration") || isNamed(tx, "time", "Time")) &&
					!in.mentionsOutcome(n) && !c.hasStatus(n) {
					found = true
				}
			}
		case *ast.CallExpr:
			if isFunc(c.callee(n), "time", "Since", "Until", "Now") {
				found = true
			}
		}
		return !found
	})
	return found
}

// statusOf evaluates a status read from a bound response or error
// (resp.StatusCode, apiErr.StatusCode(), e.Status): the outcome's status
// where it has one.
func (in *inliner) statusOf(e ast.Expr) (int64, bool) {
	if !in.c.isStatus(e) || !in.o.hasStatus {
		return 0, false
	}
	var base ast.Expr
	switch x := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		base = x.X
	case *ast.CallExpr:
		base = ast.Unparen(x.Fun).(*ast.SelectorExpr).X
	}
	b, ok := in.bindingOf(base)
	if !ok {
		return 0, false
	}
	switch {
	case b.kind == bResp && (in.k != remoteHTTP || !in.o.err):
		return int64(in.o.status), true
	case b.kind == bErr && b.val != 0 && in.o.err:
		return int64(in.o.status), true
	}
	return 0, false
}

// pkgVarInit returns the package variable e names and the value its
// declaration gives it; ok is false for anything else.
func (c *checker) pkgVarInit(e ast.Expr) (*types.Var, ast.Expr, bool) {
	v, ok := c.info.Uses[calleeIdent(e)].(*types.Var)
	if !ok || !isPkgVar(v) {
		return nil, nil, false
	}
	init, ok := c.pkgVars[v]
	return v, init, ok
}

// isSentinel reports whether e is a package variable made by errors.New
// or fmt.Errorf (or github.com/pkg/errors' or x/xerrors' New and Errorf):
// an error of the package's own, never the one a response's status was
// turned into.
func (c *checker) isSentinel(e ast.Expr) bool {
	_, init, ok := c.pkgVarInit(e)
	if !ok {
		return false
	}
	call, ok := ast.Unparen(init).(*ast.CallExpr)
	if !ok {
		return false
	}
	fn := c.callee(call)
	return isFunc(fn, "errors", "New") || isFunc(fn, "fmt", "Errorf") ||
		isFunc(fn, "github.com/pkg/errors", "New", "Errorf") || isFunc(fn, "golang.org/x/xerrors", "New", "Errorf")
}

// nestedErr evaluates whether an error variable of the callee assigned
// once, from a call of another function of this package handed the
// outcome (err := c.checkResponse(resp)), is not nil, by reading that
// function's returns. ok is false for anything else.
func (in *inliner) nestedErr(e ast.Expr) (vset, bool) {
	id := identOf(e)
	if id == nil || in.depth > 4 || !in.mentionsOutcome(e) {
		return 0, false
	}
	v, ok := in.c.info.Uses[id].(*types.Var)
	if !ok || !isError(v.Type()) {
		return 0, false
	}
	as, i := in.soleAssign(v)
	if as == nil || len(as.Rhs) != 1 {
		return 0, false
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return 0, false
	}
	env, d, ok := in.c.bindCallOf(call, i, isError, in.argBinding)
	if !ok {
		return 0, false
	}
	sub := &inliner{c: in.c, o: in.o, k: in.k, env: env, body: d.Body, depth: in.depth + 1, errResult: true}
	var got vset
	sub.stmts(d.Body.List, one(triT), i, &got)
	if got == 0 || got.has(triU) {
		return 0, false
	}
	return got, true
}
