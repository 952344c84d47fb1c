package retryloop

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// A loop is judged by walking its body's paths. Each path that goes round
// again (a continue, or the end of the body) carries the conditions that
// led there; evaluating them against the outcomes of the call in the loop
// (a transport error, each HTTP status, success) says on which outcomes the
// loop retries. A loop that goes round on failure but never on success is a
// retry loop; one that goes round on success is polling, pagination or a
// reconnect loop, and is left alone.

type loopWalker struct {
	c        *checker
	label    *ast.Ident
	body     *ast.BlockStmt // the enclosing function's body, for assignments
	fn       *types.Func
	gorounds []state
	// goPos is where each go-round path goes round; attempt is the first
	// statement that takes the outcome of the loop's attempt. A path that
	// goes round before it has made no attempt and says nothing of how
	// the loop treats one.
	goPos         []token.Pos
	attempt       token.Pos
	attemptCall   *ast.CallExpr
	attemptAssign *ast.AssignStmt
	// remoteCall is the loop's remote call, if it has one; focus, a
	// later call whose failure the walk asks about (see refocus).
	remoteCall, focus *ast.CallExpr
	exits             []state
	// waits are the loop's wait calls; at records the path states that
	// reach each.
	waits map[*ast.CallExpr]bool
	at    map[*ast.CallExpr][]state
	// notCancel makes reaches read a failure as the dependency's, never
	// the caller's cancellation (see evaluator.notCancel).
	notCancel bool
	// cond is the for statement's condition, if it has one; loopBody is
	// its body, and depth how many inner loops the walk is in.
	cond     ast.Expr
	loopBody *ast.BlockStmt
	depth    int
	// notYetText caches notYetTextLoop: 0 not asked, 1 yes, 2 no.
	notYetText int
	// loop is the loop statement walked; uncounted is set when its
	// condition's counter bounds only some ways round (uncountedRound).
	loop      ast.Stmt
	uncounted bool
	// innerConts collects the states at the continues of the inner loop
	// being walked.
	innerConts *[]state
	// checks are the status checks whose errors paths hold (see
	// statusCheck).
	checks []*ast.CallExpr
	// soleResults caches soleResult by expression: the evaluator asks it
	// on every outcome, and it walks the function body.
	soleResults map[string]bool
	// start is the state a round starts in; ahead holds the states of
	// the gotos to each label later in the round (see forward).
	start state
	ahead map[string][]state
}

// note records the state at which s is reached, for each of the loop's
// waits s holds (function literals excluded).
func (w *loopWalker) note(s ast.Node, st state) {
	if len(w.waits) == 0 || s == nil {
		return
	}
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if sl, ok := w.c.sleeperGo(n); ok && w.waits[sl.sleep] {
				// a sleeper's wait is the loop's, reached where it starts
				w.at[sl.sleep] = append(w.at[sl.sleep], st)
			}
			return false
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if w.waits[n] {
				w.at[n] = append(w.at[n], st)
			}
		}
		return true
	})
}

func (w *loopWalker) merge(base state, outs []state) state {
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
	// Where the ways that join here differ, keep them as a choice: an if
	// whose one branch returns on success and other falls through on an
	// error still says which outcomes come out of it.
	var alts [][]cond
	for _, o := range outs {
		rest := w.outcomeConds(o.conds[n:])
		if len(rest) == 0 {
			alts = nil // one way adds no condition: the choice says nothing
			break
		}
		alts = append(alts, rest)
	}
	if len(alts) > 1 && len(alts) <= 8 {
		conds = append(conds, cond{alts: alts, joins: complementJoins(alts)})
	}
	srcs := outs[0].srcs
	for _, o := range outs[1:] {
		if fmt.Sprint(o.srcs) != fmt.Sprint(srcs) {
			srcs = base.srcs
		}
	}
	return state{conds: conds, srcs: srcs, flags: commonFlags(outs)}
}

// constBool returns e's value when e is a constant boolean.
func (c *checker) constBool(e ast.Expr) (v, ok bool) {
	if e == nil {
		return false, false
	}
	if e == zeroFalse {
		return false, true // a named bool's zero value at a naked return
	}
	tv := c.info.Types[e]
	if tv.Value == nil || tv.Value.Kind() != constant.Bool {
		return false, false
	}
	return constant.BoolVal(tv.Value), true
}

// commonFlags keeps the flags every joining way set to the same value.
func commonFlags(outs []state) map[types.Object]bool {
	var m map[types.Object]bool
	for o, v := range outs[0].flags {
		same := true
		for _, x := range outs[1:] {
			if xv, ok := x.flags[o]; !ok || xv != v {
				same = false
				break
			}
		}
		if same {
			if m == nil {
				m = map[types.Object]bool{}
			}
			m[o] = v
		}
	}
	return m
}

// goRound records a path that reaches the loop's next round: a path that
// has made the loop's condition false (it set the flag the condition
// tests) leaves instead.
func (w *loopWalker) goRound(st state, at token.Pos) {
	if w.cond != nil && condFalse(w.c.info, w.cond, st.flags) {
		w.exits = append(w.exits, st)
		return
	}
	w.gorounds = append(w.gorounds, st)
	w.goPos = append(w.goPos, at)
}

// leaves reports whether a way out of an if statement ending at end has
// made the loop's condition false (else { ok = true } under for !ok),
// with nothing later in the body to set it again: that way leaves the
// loop at the next test, and is recorded as an exit. An if inside an
// inner loop is not judged: the inner loop may go round first.
func (w *loopWalker) leaves(st state, end token.Pos) bool {
	if w.depth > 0 || w.cond == nil || !condFalse(w.c.info, w.cond, st.flags) {
		return false
	}
	later := false
	ast.Inspect(w.loopBody, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && as.Pos() >= end {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					if v, ok := w.c.objOf(id).(*types.Var); ok && w.c.mentionsVar(w.cond, v) {
						later = true
					}
				}
			}
		}
		return !later
	})
	if later {
		return false
	}
	w.exits = append(w.exits, st)
	return true
}

// condFalse reports whether e, a loop condition, is false given flags: a
// conjunct that is a flag set false, or the negation of one set true.
func condFalse(info *types.Info, e ast.Expr, flags map[types.Object]bool) bool {
	if len(flags) == 0 {
		return false
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.BinaryExpr:
		return e.Op == token.LAND && (condFalse(info, e.X, flags) || condFalse(info, e.Y, flags))
	case *ast.UnaryExpr:
		if id, ok := ast.Unparen(e.X).(*ast.Ident); ok && e.Op == token.NOT {
			v, ok := flags[info.Uses[id]]
			return ok && v
		}
	case *ast.Ident:
		v, ok := flags[info.Uses[e]]
		return ok && !v
	}
	return false
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
		return w.branch(s, st, breakIsLoop, contIsLoop)
	case *ast.BlockStmt:
		return w.stmts(s.List, st, breakIsLoop, contIsLoop)
	case *ast.LabeledStmt:
		return w.stmt(s.Stmt, st, breakIsLoop, contIsLoop)
	case *ast.IfStmt:
		return w.ifStmt(s, st, breakIsLoop, contIsLoop)
	case *ast.SwitchStmt:
		return w.switchStmt(s, st, contIsLoop)
	case *ast.TypeSwitchStmt:
		return w.typeSwitch(s, st, contIsLoop)
	case *ast.SelectStmt:
		return w.clauses(s.Body.List, st, opaqueOther, contIsLoop)
	case *ast.ForStmt:
		return w.inner(s, s.Body, st)
	case *ast.RangeStmt:
		return w.inner(s, s.Body, st)
	case *ast.ExprStmt:
		w.note(s, st)
		if call, ok := s.X.(*ast.CallExpr); ok && w.c.noReturn(call) {
			w.exits = append(w.exits, st)
			return st, false
		}
		return st, true
	case *ast.AssignStmt, *ast.DeclStmt:
		w.note(s, st)
		return w.simple(s, st), true
	case *ast.GoStmt:
		w.note(s, st)
	}
	return st, true
}

// branch follows a continue, break or fallthrough: a continue of this
// loop goes round, a break of it (or any labelled jump elsewhere) leaves.
func (w *loopWalker) branch(s *ast.BranchStmt, st state, breakIsLoop, contIsLoop bool) (state, bool) {
	switch s.Tok {
	case token.CONTINUE:
		switch {
		case (s.Label == nil && contIsLoop) || w.isLoopLabel(s.Label):
			w.goRound(st, s.Pos())
		case s.Label != nil:
			// continue of an outer loop: this loop is left
			w.exits = append(w.exits, st)
		case w.innerConts != nil:
			// the next round of an inner loop, or past its end
			*w.innerConts = append(*w.innerConts, st)
		}
	case token.BREAK:
		if (s.Label == nil && breakIsLoop) || s.Label != nil {
			w.exits = append(w.exits, st)
		}
	case token.GOTO:
		if w.isLoopLabel(s.Label) {
			w.goRound(st, s.Pos()) // a goto loop's jump back (see gotoLoops)
		} else {
			w.forward(s, st)
		}
	case token.FALLTHROUGH:
		return st, true
	}
	return st, false
}

func (w *loopWalker) ifStmt(s *ast.IfStmt, st state, breakIsLoop, contIsLoop bool) (state, bool) {
	if s.Init != nil {
		w.note(s.Init, st)
		st = w.simple(s.Init, st)
	}
	w.note(s.Cond, st)
	before := w.attempt
	t, tf := w.stmt(s.Body, st.with(cond{expr: s.Cond}), breakIsLoop, contIsLoop)
	e, ef := st.with(cond{expr: s.Cond, neg: true, skips: w.gatesAttempt(s, before)}), true
	if s.Else != nil {
		e, ef = w.stmt(s.Else, e, breakIsLoop, contIsLoop)
	}
	if tf && w.leaves(t, s.End()) {
		tf = false
	}
	if ef && w.leaves(e, s.End()) {
		ef = false
	}
	switch {
	case tf && ef:
		return w.merge(st, []state{t, e}), true
	case tf:
		return t, true
	case ef:
		return e, true
	}
	return st, false
}

// switchStmt walks each case with its condition (a default case with the
// negation of all the others); without a default, no case is a path too.
func (w *loopWalker) switchStmt(s *ast.SwitchStmt, st state, contIsLoop bool) (state, bool) {
	if s.Init != nil {
		st = w.simple(s.Init, st)
	}
	return w.cases(s.Body, st, func(values []ast.Expr) cond {
		return cond{isCase: true, tag: s.Tag, values: values}
	}, contIsLoop)
}

// cases walks a switch's case clauses, each with the condition mk makes of
// its values and the negation of the earlier ones'.
func (w *loopWalker) cases(body *ast.BlockStmt, st state, mk func([]ast.Expr) cond, contIsLoop bool) (state, bool) {
	var outs []state
	var all []cond
	hasDefault := false
	for _, cl := range body.List {
		cc := cl.(*ast.CaseClause)
		if cc.List == nil {
			hasDefault = true
			continue
		}
		all = append(all, mk(cc.List))
	}
	none := func() state {
		cs := st
		for _, a := range all {
			a.neg = true
			cs = cs.with(a)
		}
		return cs
	}
	earlier := 0 // the cases before this one: it is reached when none held
	for _, cl := range body.List {
		cc := cl.(*ast.CaseClause)
		cs := none()
		if cc.List != nil {
			cs = st
			for _, a := range all[:earlier] {
				a.neg = true
				cs = cs.with(a)
			}
			cs = cs.with(mk(cc.List))
			earlier++
		}
		if o, f := w.stmts(cc.Body, cs, false, contIsLoop); f {
			outs = append(outs, o)
		}
	}
	if !hasDefault {
		outs = append(outs, none())
	}
	if len(outs) == 0 {
		return st, false
	}
	return w.merge(st, outs), true
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
			w.note(cl.Comm, st)
			if cl.Comm != nil && (w.c.mentionsContext(cl.Comm) || w.c.receivesSignal(cl.Comm) || w.c.receivesDeadline(cl.Comm, w.loop, w.body)) {
				k = opaqueCtx
			} else if cl.Comm != nil && w.c.receivesGoError(cl.Comm, w.loop) {
				k = opaqueFailed
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
	return w.merge(st, outs), true
}

// noReturn reports whether a call never returns (panic, os.Exit,
// log.Fatal and friends).
func (c *checker) noReturn(call *ast.CallExpr) bool {
	if b, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); ok && b.Name() == "panic" {
		return true
	}
	fn := c.callee(call)
	if fn == nil {
		return c.exitVar(call)
	}
	if f := c.fact(fn); f != nil && f.Exits {
		return true // exit.Fatal(…): a helper that ends the process
	}
	return isFunc(fn, "os", "Exit") || fatalLog(fn)
}

// fatalLog reports whether fn is a logger's call that ends the process or
// panics: log's, glog's and klog's Fatal and Exit families, logrus's Fatal
// and Panic ones.
func fatalLog(fn *types.Func) bool {
	name := fn.Name()
	switch funcPath(fn) {
	case "log", "github.com/sirupsen/logrus":
		return strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Panic")
	case "github.com/golang/glog", "k8s.io/klog", "k8s.io/klog/v2":
		return strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Exit")
	}
	return false
}

// endsInExit reports whether a function body's last statement is a call
// that never returns.
func (c *checker) endsInExit(body *ast.BlockStmt) bool {
	if body == nil || len(body.List) == 0 {
		return false
	}
	es, ok := body.List[len(body.List)-1].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := ast.Unparen(es.X).(*ast.CallExpr)
	return ok && c.noReturn(call)
}

// exitVar reports whether call calls a package variable given only
// os.Exit (var osExit = os.Exit, kept to be swapped in tests).
func (c *checker) exitVar(call *ast.CallExpr) bool {
	v, init, ok := c.pkgVarInit(call.Fun)
	if !ok || c.pkgAssigned[v] {
		return false
	}
	sel, ok := ast.Unparen(init).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	fn, _ := c.info.Uses[sel.Sel].(*types.Func)
	return isFunc(fn, "os", "Exit")
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
		o := w.c.objOf(id)
		if v, ok := o.(*types.Var); ok && isBool(v.Type()) {
			b, known := w.c.constBool(rhsOf(as, i))
			st = st.setFlag(o, b, known)
			continue
		}
		if o == nil || !isError(o.Type()) {
			continue
		}
		rhs := rhsOf(as, i)
		src := w.errSrc(rhs, st)
		call, isCall := ast.Unparen(rhs).(*ast.CallExpr)
		if isCall && w.c.neverFails(w.c.callee(call)) {
			st = st.setSrc(o, srcNil)
			continue
		}
		if isCall && len(as.Lhs) > 1 && i == len(as.Lhs)-1 && w.c.refusalErr(w.c.callee(call)) {
			// retry, after, err := c.shouldRetry(n, err): its error says
			// "do not retry", not that the attempt failed
			st = st.setSrc(o, srcLocal)
			continue
		}
		if isCall && src == srcOutcome && w.remoteCall != nil && as.End() < w.remoteCall.Pos() && w.c.remoteKind(call) == remoteNone ||
			isCall && src == srcOutcome && w.focus != nil && as.End() < w.focus.Pos() {
			src = srcLocal
		}
		if isCall && src == srcOutcome && (w.attempt == token.NoPos || as.Pos() < w.attempt) {
			w.attempt = as.Pos()
			w.attemptCall, _ = ast.Unparen(rhs).(*ast.CallExpr)
			w.attemptAssign = as
		}
		if isCall && src == srcOutcome && w.statusCheck(call, as) {
			src = w.checkSrc(call)
		}
		st = st.setSrc(o, src)
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
		if e == w.focus {
			return srcOutcome // the call refocus asks about, even one that waits inside
		}
		if lw, ok := w.c.wait(e, w.body, w.fn); ok && !lw.ownRetry && !w.c.handsWork(e) && !(bareFor(w.loop) && w.c.waitingAttempt(e, lw)) {
			return srcBound
		}
		if w.c.ctxRecv(e.Fun) {
			return srcBound // ctx.Err(), r.Context().Err()
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

// inner walks a loop inside the loop. When it makes the loop's attempt
// (for _, url := range mirrors { resp, err := c.Do(…) … }), what follows
// it is reached the way its body's last round ended: each outcome of the
// attempt is judged by the path it took through that body.
func (w *loopWalker) inner(s ast.Stmt, body *ast.BlockStmt, st state) (state, bool) {
	w.depth++
	outer := w.innerConts
	var conts []state
	w.innerConts = &conts
	end, falls := w.stmt(body, st, false, false)
	w.innerConts = outer
	w.depth--
	holds := func(p token.Pos) bool { return p.IsValid() && s.Pos() <= p && p < s.End() }
	if !(w.remoteCall != nil && holds(w.remoteCall.Pos()) || holds(w.attempt)) {
		return st, true
	}
	// The inner loop holds the attempt (each candidate tried in turn):
	// it ends after a round that fell off its body or continued it.
	outs := conts
	if falls {
		outs = append(outs, end)
	}
	if len(outs) == 0 {
		return st, true
	}
	return w.merge(st, outs), true
}

// outcomeConds keeps, of the conditions a joining way adds, those that can
// depend on the attempt's outcome (an error, a response or a status, or
// a call handed one): a logger's type switch or a hook's nil test says
// nothing of the outcome and would only multiply the settings to try.
func (w *loopWalker) outcomeConds(conds []cond) []cond {
	var out []cond
	for _, c := range conds {
		if c.alts != nil || c.skips || c.opaque == opaqueClassify || c.opaque == opaqueCtx {
			out = append(out, c)
			continue
		}
		if c.opaque != opaqueNone {
			continue
		}
		exprs := append([]ast.Expr{c.expr, c.tag}, c.values...)
		for _, e := range exprs {
			if e != nil && w.c.mentionsOutcome(e) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// mentionsOutcome reports whether e involves an error, a response or a
// status, or a boolean some call handed one gave (a classifier's verdict).
func (c *checker) mentionsOutcome(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		x, ok := n.(ast.Expr)
		if !ok || found {
			return !found
		}
		t := c.info.TypeOf(x)
		if isError(t) || isNamed(t, "net/http", "Response") || t != nil && statusWrapper(t) || c.isStatus(x) || isContext(t) {
			found = true
		}
		if id, ok := x.(*ast.Ident); ok && isBool(t) {
			if v, ok := c.info.Uses[id].(*types.Var); ok && !isPkgVar(v) && !v.IsField() {
				found = true // a local flag: a verdict, perhaps
			}
		}
		return !found
	})
	return found
}

// rhsOf returns the expression that gives the i-th left-hand side of as its
// value: the i-th right-hand side, or the one multi-valued call or comma-ok
// expression all of them come from; nil if as has neither shape.
func rhsOf(as *ast.AssignStmt, i int) ast.Expr {
	switch {
	case len(as.Rhs) == len(as.Lhs):
		return as.Rhs[i]
	case len(as.Rhs) == 1:
		return as.Rhs[0]
	}
	return nil
}
