package retryloop

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// A loop is judged by walking its body's paths. Each path that goes round
// again (a continue, or the end of the body) carries the conditions that
// led there; evaluating them against the outcomes of the call in the loop
// (a transport error, each HTTP status, success) says on which outcomes the
// loop retries. A loop that goes round on failure but never on success is a
// retry loop; one that goes round on success is polling, pagination or a
// reconnect loop, and is left alone.

// cond is one condition on a path: a boolean expression, a switch case, or
// an opaque choice (a type switch case, a select case).
type cond struct {
	expr   ast.Expr
	tag    ast.Expr   // switch case: tag compared with values
	values []ast.Expr // switch case values, or a tagless case's expressions
	isCase bool
	opaque int // opaqueNone, opaqueClassify, opaqueCtx, opaqueOther
	key    string
	neg    bool
}

const (
	opaqueNone = iota
	opaqueClassify
	opaqueCtx
	opaqueOther
)

// where an error variable's value came from
const (
	srcOutcome = iota // the call the loop is about (the default)
	srcBound          // a wait or the context: it ends the loop, it is not an outcome
)

type state struct {
	conds []cond
	srcs  map[types.Object]int
}

func (s state) with(c cond) state {
	conds := make([]cond, len(s.conds), len(s.conds)+1)
	copy(conds, s.conds)
	return state{conds: append(conds, c), srcs: s.srcs}
}

func (s state) setSrc(o types.Object, src int) state {
	m := make(map[types.Object]int, len(s.srcs)+1)
	for k, v := range s.srcs {
		m[k] = v
	}
	m[o] = src
	return state{conds: s.conds, srcs: m}
}

type loopWalker struct {
	c        *checker
	label    *ast.Ident
	body     *ast.BlockStmt // the enclosing function's body, for assignments
	fn       *types.Func
	gorounds []state
	exits    []state
}

func merge(base state, outs []state) state {
	if len(outs) == 1 {
		return outs[0]
	}
	// the conditions all paths share
	n := len(base.conds)
	for _, o := range outs {
		if len(o.conds) < n {
			n = len(o.conds)
		}
	}
	conds := base.conds[:n:n]
	srcs := outs[0].srcs
	for _, o := range outs[1:] {
		if fmt.Sprint(o.srcs) != fmt.Sprint(srcs) {
			srcs = base.srcs
		}
	}
	return state{conds: conds, srcs: srcs}
}

func (w *loopWalker) stmts(list []ast.Stmt, st state, breakIsLoop, contIsLoop bool) (state, bool) {
	for _, s := range list {
		var falls bool
		st, falls = w.stmt(s, st, breakIsLoop, contIsLoop)
		if !falls {
			return st, false
		}
	}
	return st, true
}

func (w *loopWalker) isLoopLabel(l *ast.Ident) bool {
	return l != nil && w.label != nil && l.Name == w.label.Name
}

func (w *loopWalker) stmt(s ast.Stmt, st state, breakIsLoop, contIsLoop bool) (state, bool) {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		w.exits = append(w.exits, st)
		return st, false
	case *ast.BranchStmt:
		switch s.Tok {
		case token.CONTINUE:
			if (s.Label == nil && contIsLoop) || w.isLoopLabel(s.Label) {
				w.gorounds = append(w.gorounds, st)
			} else if s.Label != nil {
				// continue of an outer loop: this loop is left
				w.exits = append(w.exits, st)
			}
			return st, false
		case token.BREAK:
			if (s.Label == nil && breakIsLoop) || w.isLoopLabel(s.Label) {
				w.exits = append(w.exits, st)
				return st, false
			}
			if s.Label != nil {
				w.exits = append(w.exits, st)
			}
			return st, false
		case token.FALLTHROUGH:
			return st, true
		}
		return st, false
	case *ast.BlockStmt:
		return w.stmts(s.List, st, breakIsLoop, contIsLoop)
	case *ast.LabeledStmt:
		return w.stmt(s.Stmt, st, breakIsLoop, contIsLoop)
	case *ast.IfStmt:
		if s.Init != nil {
			st = w.simple(s.Init, st)
		}
		t, tf := w.stmt(s.Body, st.with(cond{expr: s.Cond}), breakIsLoop, contIsLoop)
		e, ef := st.with(cond{expr: s.Cond, neg: true}), true
		if s.Else != nil {
			e, ef = w.stmt(s.Else, e, breakIsLoop, contIsLoop)
		}
		switch {
		case tf && ef:
			return merge(st, []state{t, e}), true
		case tf:
			return t, true
		case ef:
			return e, true
		}
		return st, false
	case *ast.SwitchStmt:
		if s.Init != nil {
			st = w.simple(s.Init, st)
		}
		var outs []state
		var all []cond
		hasDefault := false
		for _, cl := range s.Body.List {
			cc := cl.(*ast.CaseClause)
			if cc.List == nil {
				hasDefault = true
				continue
			}
			all = append(all, cond{isCase: true, tag: s.Tag, values: cc.List})
		}
		for _, cl := range s.Body.List {
			cc := cl.(*ast.CaseClause)
			cs := st
			if cc.List == nil {
				for _, a := range all {
					a.neg = true
					cs = cs.with(a)
				}
			} else {
				cs = cs.with(cond{isCase: true, tag: s.Tag, values: cc.List})
			}
			if o, f := w.stmts(cc.Body, cs, false, contIsLoop); f {
				outs = append(outs, o)
			}
		}
		if !hasDefault {
			cs := st
			for _, a := range all {
				a.neg = true
				cs = cs.with(a)
			}
			outs = append(outs, cs)
		}
		if len(outs) == 0 {
			return st, false
		}
		return merge(st, outs), true
	case *ast.TypeSwitchStmt:
		if s.Init != nil {
			st = w.simple(s.Init, st)
		}
		kind := opaqueOther
		if as, ok := s.Assign.(*ast.AssignStmt); ok && len(as.Rhs) == 1 {
			if ta, ok := as.Rhs[0].(*ast.TypeAssertExpr); ok && isError(w.c.info.TypeOf(ta.X)) {
				kind = opaqueClassify
			}
		} else if es, ok := s.Assign.(*ast.ExprStmt); ok {
			if ta, ok := es.X.(*ast.TypeAssertExpr); ok && isError(w.c.info.TypeOf(ta.X)) {
				kind = opaqueClassify
			}
		}
		return w.clauses(s.Body.List, st, kind, contIsLoop)
	case *ast.SelectStmt:
		return w.clauses(s.Body.List, st, opaqueOther, contIsLoop)
	case *ast.ForStmt:
		w.stmt(s.Body, st, false, false)
		return st, true
	case *ast.RangeStmt:
		w.stmt(s.Body, st, false, false)
		return st, true
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok && w.c.noReturn(call) {
			w.exits = append(w.exits, st)
			return st, false
		}
		return st, true
	case *ast.AssignStmt, *ast.DeclStmt:
		return w.simple(s, st), true
	}
	return st, true
}

// clauses walks the clauses of a type switch or a select, each an opaque
// choice; a select case receiving from a context's Done is a bound.
func (w *loopWalker) clauses(list []ast.Stmt, st state, kind int, contIsLoop bool) (state, bool) {
	var outs []state
	for _, cl := range list {
		var body []ast.Stmt
		k := kind
		switch cl := cl.(type) {
		case *ast.CaseClause:
			body = cl.Body
		case *ast.CommClause:
			body = cl.Body
			if cl.Comm != nil && w.c.mentionsContext(cl.Comm) {
				k = opaqueCtx
			}
		}
		cs := st.with(cond{opaque: k, key: fmt.Sprintf("clause@%d", cl.Pos())})
		if o, f := w.stmts(body, cs, false, contIsLoop); f {
			outs = append(outs, o)
		}
	}
	if len(outs) == 0 {
		return st, false
	}
	return merge(st, outs), true
}

// noReturn reports whether a call never returns (panic, os.Exit,
// log.Fatal and friends).
func (c *checker) noReturn(call *ast.CallExpr) bool {
	if b, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); ok && b.Name() == "panic" {
		return true
	}
	fn := c.callee(call)
	return isFunc(fn, "os", "Exit") || (funcPath(fn) == "log" && (strings.HasPrefix(fn.Name(), "Fatal") || strings.HasPrefix(fn.Name(), "Panic")))
}

// simple records where error variables assigned by s came from.
func (w *loopWalker) simple(s ast.Stmt, st state) state {
	as, ok := s.(*ast.AssignStmt)
	if !ok {
		return st
	}
	for i, l := range as.Lhs {
		id, ok := l.(*ast.Ident)
		if !ok {
			continue
		}
		o := w.c.info.Defs[id]
		if o == nil {
			o = w.c.info.Uses[id]
		}
		if o == nil || !isError(o.Type()) {
			continue
		}
		var rhs ast.Expr
		if len(as.Rhs) == len(as.Lhs) {
			rhs = as.Rhs[i]
		} else if len(as.Rhs) == 1 {
			rhs = as.Rhs[0]
		}
		st = st.setSrc(o, w.errSrc(rhs, st))
	}
	return st
}

func (w *loopWalker) errSrc(e ast.Expr, st state) int {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		if o := w.c.info.Uses[e]; o != nil {
			return st.srcs[o]
		}
	case *ast.CallExpr:
		if _, ok := w.c.wait(e, w.body, w.fn); ok {
			return srcBound
		}
		if w.c.mentionsContext(e.Fun) {
			return srcBound // ctx.Err(), context.Cause(ctx)
		}
		if fn := w.c.callee(e); isFunc(fn, "fmt", "Errorf") || isFunc(fn, "context", "Cause") {
			if fn.Name() == "Cause" {
				return srcBound
			}
			for _, a := range e.Args {
				if isError(w.c.info.TypeOf(a)) {
					return w.errSrc(a, st)
				}
			}
		}
	}
	return srcOutcome
}

// mentionsContext reports whether e involves a context.Context value.
func (c *checker) mentionsContext(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok && isContext(c.info.TypeOf(x)) {
			found = true
		}
		return !found
	})
	return found
}

// --- evaluation against outcomes

type tri int

const (
	triF tri = iota
	triU     // depends on a classification the analyzer cannot see
	triT
)

func (a tri) not() tri  { return 2 - a }
func and3(a, b tri) tri { return min(a, b) }
func or3(a, b tri) tri  { return max(a, b) }

type outcome struct {
	err       bool // the call returned an error
	hasStatus bool
	status    int
}

// permanent are the statuses that will not change on a retry.
var permanent = []int{400, 401, 403, 404, 413, 422}

var probeStatuses = []int{200, 201, 202, 204, 301, 304, 400, 401, 403, 404, 408, 409, 413, 422, 425, 429, 499, 500, 501, 502, 503, 504, 599}

// outcomes lists what a remote call of kind k can return: for net/http a
// status comes with a nil error; for a model SDK a non-2xx status is an
// error (errors.As finds it); for gRPC and other calls, an error or not.
func outcomes(k int) []outcome {
	os := []outcome{{err: true}}
	switch k {
	case remoteHTTP:
		for _, s := range probeStatuses {
			os = append(os, outcome{hasStatus: true, status: s})
		}
	case remoteSDK:
		for _, s := range probeStatuses {
			os = append(os, outcome{err: s >= 300, hasStatus: true, status: s})
		}
	default:
		os = append(os, outcome{})
	}
	return os
}

// success reports whether o is a success: no error, and a 2xx status if
// any. A loop is a retry loop if it leaves on some success (an API that
// answers 202 Accepted may go round on a 200) and goes round on some
// failure; one that goes round on every success is polling.
func (o outcome) success() bool { return !o.err && (!o.hasStatus || o.status < 300) }

func (o outcome) failure() bool { return o.err || (o.hasStatus && o.status >= 300) }

type evaluator struct {
	w      *loopWalker
	k      int
	st     state
	assign map[string]bool
	free   map[string]bool
}

func (ev *evaluator) irrelevant(key string) tri {
	ev.free[key] = true
	if ev.assign[key] {
		return triT
	}
	return triF
}

func (ev *evaluator) cond(c cond, o outcome) tri {
	var r tri
	switch {
	case c.opaque == opaqueClassify:
		r = triU
	case c.opaque != opaqueNone:
		r = ev.irrelevant(c.key)
	case c.isCase:
		r = triF
		for _, v := range c.values {
			var x tri
			if c.tag == nil {
				x = ev.expr(v, o, 0)
			} else {
				x = ev.compare(token.EQL, c.tag, v, o)
			}
			r = or3(r, x)
		}
	default:
		r = ev.expr(c.expr, o, 0)
	}
	if c.neg {
		r = r.not()
	}
	return r
}

func (ev *evaluator) expr(e ast.Expr, o outcome, depth int) tri {
	if depth > 8 {
		return ev.irrelevant(types.ExprString(e))
	}
	c := ev.w.c
	switch e := e.(type) {
	case *ast.ParenExpr:
		return ev.expr(e.X, o, depth+1)
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return ev.expr(e.X, o, depth+1).not()
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			return and3(ev.expr(e.X, o, depth+1), ev.expr(e.Y, o, depth+1))
		case token.LOR:
			return or3(ev.expr(e.X, o, depth+1), ev.expr(e.Y, o, depth+1))
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return ev.compare(e.Op, e.X, e.Y, o)
		}
	case *ast.Ident:
		if v, ok := c.info.Uses[e].(*types.Var); ok {
			if xs := c.assignsOf(ev.w.body)[v]; len(xs) == 1 && xs[0] != unknownExpr {
				return ev.expr(xs[0], o, depth+1)
			}
		}
	case *ast.CallExpr:
		fn := c.callee(e)
		if isFunc(fn, "errors", "As") && ev.k == remoteSDK {
			if o.err && o.hasStatus {
				return triT
			}
			return triF
		}
		if c.classifies(e) {
			return triU
		}
	}
	return ev.irrelevant(types.ExprString(e))
}

// classifies reports whether a call inspects an error or a response: it
// is passed one, or is a method of one.
func (c *checker) classifies(call *ast.CallExpr) bool {
	if c.mentionsContext(call) {
		return false
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if t := c.info.TypeOf(sel.X); t != nil && (isError(t) || types.Implements(t, errorIface)) {
			if _, isPkg := c.info.Uses[identOf(sel.X)].(*types.PkgName); !isPkg {
				return true
			}
		}
	}
	for _, a := range call.Args {
		t := c.info.TypeOf(a)
		if isError(t) || isNamed(t, "net/http", "Response") || c.hasStatus(a) {
			return true
		}
	}
	return false
}

// inspectsError reports whether e calls something that classifies an
// error or a response (status.Code(err), a type assertion on an error).
func (c *checker) inspectsError(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if c.classifies(n) {
				found = true
			}
		case *ast.TypeAssertExpr:
			if isError(c.info.TypeOf(n.X)) {
				found = true
			}
		}
		return !found
	})
	return found
}

var errorIface = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)

func identOf(e ast.Expr) *ast.Ident {
	id, _ := ast.Unparen(e).(*ast.Ident)
	return id
}

func (ev *evaluator) compare(op token.Token, x, y ast.Expr, o outcome) tri {
	c := ev.w.c
	if isNil(c.info, y) {
		x, y = y, x
	}
	if isNil(c.info, x) {
		t := c.info.TypeOf(y)
		switch {
		case isError(t):
			if ev.srcOf(y) == srcBound {
				return ev.irrelevant(types.ExprString(y) + "!=nil")
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
		}
		return ev.irrelevant(types.ExprString(x) + op.String() + types.ExprString(y))
	}
	if c.hasStatus(x) || c.hasStatus(y) {
		if !o.hasStatus || (o.err && ev.k == remoteHTTP) {
			return triF
		}
		a, ok1 := c.evalInt(x, o, ev.w.body, 0)
		b, ok2 := c.evalInt(y, o, ev.w.body, 0)
		if !ok1 || !ok2 {
			return triU
		}
		var r bool
		switch op {
		case token.EQL:
			r = a == b
		case token.NEQ:
			r = a != b
		case token.LSS:
			r = a < b
		case token.LEQ:
			r = a <= b
		case token.GTR:
			r = a > b
		case token.GEQ:
			r = a >= b
		}
		return boolTri(r)
	}
	if isError(c.info.TypeOf(x)) || isError(c.info.TypeOf(y)) || c.inspectsError(x) || c.inspectsError(y) {
		return triU // err == ErrSomething, status.Code(err) != codes.Unavailable: a classification
	}
	return ev.irrelevant(types.ExprString(x) + op.String() + types.ExprString(y))
}

func (ev *evaluator) srcOf(e ast.Expr) int {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if o := ev.w.c.info.Uses[id]; o != nil {
			return ev.st.srcs[o]
		}
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		return ev.w.errSrc(call, ev.st)
	}
	return srcOutcome
}

func boolTri(b bool) tri {
	if b {
		return triT
	}
	return triF
}

func isNil(info *types.Info, e ast.Expr) bool {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if _, ok := info.Uses[id].(*types.Nil); ok {
			return true
		}
	}
	tv, ok := info.Types[e]
	return ok && tv.IsNil()
}

// hasStatus reports whether e is, or is computed from, an HTTP status code
// (a StatusCode field, or a variable assigned one).
func (c *checker) hasStatus(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "StatusCode" {
			if t := c.info.TypeOf(sel); t != nil {
				if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsInteger != 0 {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

func (c *checker) evalInt(e ast.Expr, o outcome, body *ast.BlockStmt, depth int) (int64, bool) {
	if depth > 6 {
		return 0, false
	}
	if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
		var v int64
		_, err := fmt.Sscan(tv.Value.ExactString(), &v)
		return v, err == nil
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.evalInt(e.X, o, body, depth+1)
	case *ast.SelectorExpr:
		if e.Sel.Name == "StatusCode" {
			return int64(o.status), true
		}
	case *ast.Ident:
		if v, ok := c.info.Uses[e].(*types.Var); ok {
			if xs := c.assignsOf(body)[v]; len(xs) == 1 {
				return c.evalInt(xs[0], o, body, depth+1)
			}
		}
	case *ast.BinaryExpr:
		a, ok1 := c.evalInt(e.X, o, body, depth+1)
		b, ok2 := c.evalInt(e.Y, o, body, depth+1)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Op {
		case token.ADD:
			return a + b, true
		case token.SUB:
			return a - b, true
		case token.MUL:
			return a * b, true
		case token.QUO:
			if b != 0 {
				return a / b, true
			}
		case token.REM:
			if b != 0 {
				return a % b, true
			}
		}
	}
	return 0, false
}

// retries evaluates every go-round path against outcome o: triT if some
// path retries it whatever the counters and flags say, triU if that
// depends on a classification, triF if none does.
func (w *loopWalker) retries(k int, o outcome) tri {
	best := triF
	for _, g := range w.gorounds {
		ev := &evaluator{w: w, k: k, st: g, assign: map[string]bool{}, free: map[string]bool{}}
		eval := func() tri {
			r := triT
			for _, c := range g.conds {
				r = and3(r, ev.cond(c, o))
			}
			return r
		}
		eval()
		keys := make([]string, 0, len(ev.free))
		for k := range ev.free {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 10 {
			keys = keys[:10]
		}
		for mask := 0; mask < 1<<len(keys); mask++ {
			for i, k := range keys {
				ev.assign[k] = mask&(1<<i) != 0
			}
			best = max(best, eval())
			if best == triT {
				return best
			}
		}
	}
	return best
}

// isBound reports whether a condition bounds the loop: it counts, reads
// the clock, or hears the context.
func (w *loopWalker) isBound(c cond, st state) bool {
	if c.opaque == opaqueCtx {
		return true
	}
	var exprs []ast.Expr
	if c.expr != nil {
		exprs = append(exprs, c.expr)
	}
	if c.tag != nil {
		exprs = append(exprs, c.tag)
	} else {
		exprs = append(exprs, c.values...)
	}
	for _, e := range exprs {
		if w.c.boundExpr(e, w, st) {
			return true
		}
	}
	return false
}

func (c *checker) boundExpr(e ast.Expr, w *loopWalker, st state) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
				tx, ty := c.info.TypeOf(n.X), c.info.TypeOf(n.Y)
				if c.hasStatus(n.X) || c.hasStatus(n.Y) {
					return true
				}
				if (tx != nil && isIntegerish(tx)) || (ty != nil && isIntegerish(ty)) ||
					isNamed(tx, "time", "Duration") || isNamed(tx, "time", "Time") {
					if !isNil(c.info, n.X) && !isNil(c.info, n.Y) {
						found = true
					}
				}
				if isError(tx) && isNil(c.info, n.Y) {
					ev := &evaluator{w: w, st: st}
					if ev.srcOf(n.X) == srcBound {
						found = true
					}
				}
			}
		case *ast.CallExpr:
			fn := c.callee(n)
			if isFunc(fn, "time", "Since", "Until", "Now", "After", "Before") {
				found = true
			}
		case ast.Expr:
			if isContext(c.info.TypeOf(n)) {
				found = true
			}
		}
		return true
	})
	return found
}

func isIntegerish(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&(types.IsInteger|types.IsFloat) != 0
}
