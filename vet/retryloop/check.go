package retryloop

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// funcCtx is the function a body belongs to.
type funcCtx struct {
	fn    *types.Func    // nil for a function literal
	ftype *ast.FuncType  // its signature
	decl  *ast.BlockStmt // the enclosing declaration's body, for assignments
}

type loopCall struct {
	call *ast.CallExpr
	w    waitInfo
}

// loop checks one for or range statement.
func (c *checker) loop(s ast.Stmt, label *ast.Ident, fc funcCtx) {
	var body *ast.BlockStmt
	var scan []ast.Node
	switch s := s.(type) {
	case *ast.ForStmt:
		body = s.Body
		for _, n := range []ast.Node{s.Init, s.Cond, s.Post} {
			if n != nil && !isNilNode(n) {
				scan = append(scan, n)
			}
		}
	case *ast.RangeStmt:
		body = s.Body
	}
	scan = append(scan, body)

	remote := remoteNone
	var remoteCall *ast.CallExpr
	var waits []loopCall
	readsRA, delegated := false, false
	for _, n := range scan {
		sync := syncLits(n)
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				return false
			case *ast.FuncLit:
				// A function literal called at once is part of the loop's
				// body; one passed on (a callback, recoil.Do's op) is
				// looked at only for its remote calls.
				if !sync[n] {
					if r := c.remoteIn(n); r != nil && remote == remoteNone {
						remote, remoteCall = r.kind, r.call
					}
					return false
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(strings.ToLower(n.Value), "retry-after") {
					readsRA = true
				}
			case *ast.CallExpr:
				if c.isRecoilCall(n) {
					delegated = true
				}
				if c.readsRetryAfter(n) {
					readsRA = true
				}
				if k := c.remoteKind(n); k != remoteNone && (remote == remoteNone || (k == remoteHTTP && remote != remoteHTTP)) {
					remote, remoteCall = k, n
				}
				if w, ok := c.wait(n, fc.decl, fc.fn); ok {
					waits = append(waits, loopCall{n, w})
				}
			}
			return true
		})
	}
	if delegated || len(waits) == 0 {
		return
	}

	w := &loopWalker{c: c, label: label, body: fc.decl, fn: fc.fn}
	start := state{}
	if fs, ok := s.(*ast.ForStmt); ok && fs.Cond != nil {
		start = start.with(cond{expr: fs.Cond})
	}
	if end, falls := w.stmt(body, start, true, true); falls {
		w.gorounds = append(w.gorounds, end)
	}

	// A retry loop goes round on some failure and leaves on some success.
	os := outcomes(remote)
	retried := map[int]tri{}
	errTri := triF
	anyFailure, leavesOnSuccess := false, false
	for _, o := range os {
		r := w.retries(remote, o)
		if o.success() {
			if r == triF {
				leavesOnSuccess = true
			}
			continue
		}
		if !o.failure() {
			continue
		}
		if r != triF {
			anyFailure = true
		}
		if o.hasStatus {
			retried[o.status] = r
		} else {
			errTri = r
		}
	}
	if !anyFailure || !leavesOnSuccess {
		return // it goes round on every success: polling, pagination, a reconnect loop
	}

	forPos := s.Pos()
	// unbounded
	if !c.bounded(s, w) {
		c.add(finding{check: CheckUnbounded, pos: forPos, end: forPos + 3,
			msg: "retry loop has no bound on attempts or total time: count attempts, or stop when ctx is done or a deadline passes"})
	}
	// nojitter
	for _, lw := range waits {
		if lw.w.dur.kind != pPure {
			continue
		}
		what := "this wait"
		if lw.w.helper != "" {
			what = lw.w.helper
		}
		c.add(finding{check: CheckNoJitter, pos: lw.call.Pos(), end: lw.call.End(),
			msg: fmt.Sprintf("%s in a retry loop has a constant or purely exponential duration: clients that failed together retry together; randomise it (full jitter) or use recoil", what)})
	}
	if remote == remoteNone {
		return
	}
	name := c.callName(remoteCall)
	// unclassified
	var parts []string
	nonSuccess, allNon2xx := 0, true
	var perm []string
	for _, st := range probeStatuses {
		if st < 300 {
			continue
		}
		nonSuccess++
		if retried[st] != triT {
			allNon2xx = false
		}
	}
	for _, st := range permanent {
		if retried[st] == triT {
			perm = append(perm, fmt.Sprint(st))
		}
	}
	switch {
	case errTri == triT && (remote != remoteHTTP || allNon2xx):
		parts = append(parts, "on every error")
		if remote == remoteHTTP {
			parts = append(parts, "on every non-2xx status")
		}
	case allNon2xx && nonSuccess > 0 && remote != remoteGRPC:
		parts = append(parts, "on every non-2xx status")
	default:
		if errTri == triT {
			parts = append(parts, "on every error")
		}
		if len(perm) > 0 {
			parts = append(parts, "on "+strings.Join(perm, ", ")+", which will not change on a retry")
		}
	}
	if len(parts) > 0 {
		c.add(finding{check: CheckUnclassified, pos: forPos, end: forPos + 3,
			msg: fmt.Sprintf("retry loop around %s retries %s: classify the failure (errors.Is/As, retry 429, 503 and 5xx, never 400, 401, 403, 404, 413, 422) or use recoil", name, strings.Join(parts, " and "))})
	}
	// retryafter
	if !readsRA && (retried[429] == triT || retried[503] == triT) {
		var which []string
		for _, st := range []int{429, 503} {
			if retried[st] == triT {
				which = append(which, fmt.Sprint(st))
			}
		}
		lw := waits[0]
		c.add(finding{check: CheckRetryAfter, pos: lw.call.Pos(), end: lw.call.End(),
			msg: fmt.Sprintf("retry loop retries %s without reading Retry-After: the server said when to come back; read it (recoilhttp.ServerWait) or use recoilhttp.Transport", strings.Join(which, " and "))})
	}
}

func isNilNode(n ast.Node) bool {
	switch n := n.(type) {
	case ast.Stmt:
		return n == nil
	case ast.Expr:
		return n == nil
	}
	return false
}

// bounded reports whether a retry loop stops on its own: a range, a
// counting or clock condition, or an exit on a count, the clock or the
// context.
func (c *checker) bounded(s ast.Stmt, w *loopWalker) bool {
	switch s := s.(type) {
	case *ast.RangeStmt:
		return true
	case *ast.ForStmt:
		if s.Cond != nil && c.boundExpr(s.Cond, w, state{}) {
			return true
		}
	}
	for _, e := range w.exits {
		for _, cd := range e.conds {
			if w.isBound(cd, e) {
				return true
			}
		}
	}
	return false
}

func (c *checker) callName(call *ast.CallExpr) string {
	fn := c.callee(call)
	if fn == nil {
		return "a remote call"
	}
	if r := recvNamed(fn); r != nil {
		return r.Obj().Name() + "." + fn.Name()
	}
	if fn.Pkg() != nil && fn.Pkg() != c.pass.Pkg {
		return fn.Pkg().Name() + "." + fn.Name()
	}
	return fn.Name()
}

// deafWaits reports the waits in b that cannot hear a context in scope.
func (c *checker) deafWaits(b *ast.BlockStmt, fc funcCtx) {
	stmtOf := map[*ast.CallExpr]*ast.ExprStmt{}
	ast.Inspect(b, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.GoStmt:
			if _, lit := n.Call.Fun.(*ast.FuncLit); !lit {
				return false // go helper(): the caller does not wait
			}
		case *ast.ExprStmt:
			if call, ok := n.X.(*ast.CallExpr); ok {
				stmtOf[call] = n
			}
		case *ast.CallExpr:
			w, ok := c.wait(n, fc.decl, fc.fn)
			if !ok || !w.deaf {
				return true
			}
			ctx := c.ctxName(n.Pos())
			if ctx == "" {
				return true
			}
			f := finding{check: CheckDeafWait, pos: n.Pos(), end: n.End()}
			switch {
			case w.helper != "":
				f.msg = fmt.Sprintf("%s waits with time.Sleep and cannot hear %s: the caller's cancellation and deadline go unheard; pass %s and select on %s.Done()", w.helper, ctx, ctx, ctx)
			case w.sleep:
				f.msg = fmt.Sprintf("time.Sleep ignores %s: the caller's cancellation and deadline go unheard; select on %s.Done() and time.After, or use recoil", ctx, ctx)
				if es := stmtOf[n]; es != nil {
					if fix, ok := c.sleepFix(es, n, ctx, fc); ok {
						f.fixes = []analysis.SuggestedFix{fix}
					}
				}
			default:
				f.msg = fmt.Sprintf("a bare receive from time.After ignores %s: select on %s.Done() as well", ctx, ctx)
			}
			c.add(f)
		}
		return true
	})
}

// sleepFix rewrites time.Sleep(d) as a select on ctx.Done() and
// time.After(d), returning ctx.Err() (with zero values before it) if ctx
// is done first.
func (c *checker) sleepFix(es *ast.ExprStmt, call *ast.CallExpr, ctx string, fc funcCtx) (analysis.SuggestedFix, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	timePkg := types.ExprString(sel.X)
	ret, ok := c.returnOnDone(ctx, fc)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	var d bytes.Buffer
	if err := format.Node(&d, c.pass.Fset, call.Args[0]); err != nil {
		return analysis.SuggestedFix{}, false
	}
	col := c.pass.Fset.Position(es.Pos()).Column
	ind := strings.Repeat("\t", max(col-1, 0))
	text := fmt.Sprintf("select {\n%scase <-%s.Done():\n%s\t%s\n%scase <-%s.After(%s):\n%s}",
		ind, ctx, ind, ret, ind, timePkg, d.String(), ind)
	return analysis.SuggestedFix{
		Message:   fmt.Sprintf("wait in a select on %s.Done() and time.After", ctx),
		TextEdits: []analysis.TextEdit{{Pos: es.Pos(), End: es.End(), NewText: []byte(text)}},
	}, true
}

// returnOnDone is the statement that leaves the function when ctx is done.
func (c *checker) returnOnDone(ctx string, fc funcCtx) (string, bool) {
	if fc.ftype == nil || fc.ftype.Results == nil || len(fc.ftype.Results.List) == 0 {
		return "return", true
	}
	var types_ []types.Type
	for _, f := range fc.ftype.Results.List {
		t := c.info.TypeOf(f.Type)
		n := max(len(f.Names), 1)
		for range n {
			types_ = append(types_, t)
		}
	}
	if !isError(types_[len(types_)-1]) {
		return "", false
	}
	vals := make([]string, 0, len(types_))
	for _, t := range types_[:len(types_)-1] {
		z, ok := c.zero(t)
		if !ok {
			return "", false
		}
		vals = append(vals, z)
	}
	vals = append(vals, ctx+".Err()")
	return "return " + strings.Join(vals, ", "), true
}

func (c *checker) zero(t types.Type) (string, bool) {
	if t == nil {
		return "", false
	}
	if _, ok := t.(*types.TypeParam); ok {
		return "", false
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false", true
		case u.Info()&types.IsString != 0:
			return `""`, true
		case u.Info()&types.IsNumeric != 0:
			return "0", true
		}
		return "nil", true
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return "nil", true
	case *types.Struct, *types.Array:
		return types.TypeString(t, types.RelativeTo(c.pass.Pkg)) + "{}", true
	}
	return "", false
}

// syncLits returns the function literals under n that are called where
// they stand: func() { … }().
func syncLits(n ast.Node) map[*ast.FuncLit]bool {
	m := map[*ast.FuncLit]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
				m[lit] = true
			}
		}
		return true
	})
	return m
}

type remoteAt struct {
	kind int
	call *ast.CallExpr
}

// remoteIn returns the first remote call inside n (goroutines excluded).
func (c *checker) remoteIn(n ast.Node) *remoteAt {
	var r *remoteAt
	ast.Inspect(n, func(n ast.Node) bool {
		if r != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt:
			return false
		case *ast.CallExpr:
			if k := c.remoteKind(n); k != remoteNone {
				r = &remoteAt{k, n}
			}
		}
		return true
	})
	return r
}
