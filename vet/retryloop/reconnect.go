package retryloop

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// resetBackoffWaits are the waits of a loop that goes round on success (a
// reconnect or watch loop) which it reaches on every round but whose
// duration is made of a backoff it keeps across failures and resets
// (failures++ … failures = 0; delay *= 2 … delay = base): the wait after
// a success is the reset one, and what grows is a retry's wait — in step
// across every client that lost the dependency together. Waits already
// among skip are left out.
func (c *checker) resetBackoffWaits(sc loopScan, skip []loopCall) []loopCall {
	var out []loopCall
	seen := map[*ast.CallExpr]bool{}
	for _, lw := range skip {
		seen[lw.call] = true
	}
	for _, lw := range sc.waits {
		if seen[lw.call] {
			continue
		}
		if c.resetRetrier(lw.call, sc.body) {
			// for r := retry.Begin(); r.Continue(ctx); { …; r.Reset() }:
			// a success starts the schedule over, each failure waits on
			out = append(out, lw)
			continue
		}
		if lw.w.dur.kind != pPure {
			continue
		}
		for _, v := range c.durationVars(lw.call, sc.body) {
			if c.growsAndResets(v, sc.body) {
				out = append(out, lw)
				break
			}
		}
	}
	return out
}

// resetRetrier reports whether call is a method call on a local variable
// (r.Continue(ctx), b.Wait()) that body resets (r.Reset()): the waits of
// a retrier the loop starts over after each success.
func (c *checker) resetRetrier(call *ast.CallExpr, body *ast.BlockStmt) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id := identOf(sel.X)
	if id == nil {
		return false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || v.IsField() || isPkgVar(v) {
		return false
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if r, ok := n.(*ast.CallExpr); ok && len(r.Args) == 0 {
			if rs, ok := ast.Unparen(r.Fun).(*ast.SelectorExpr); ok && rs.Sel.Name == "Reset" {
				if rid := identOf(rs.X); rid != nil && c.info.Uses[rid] == v {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// durationVars are the local variables a wait's arguments name, and those
// the loop body assigns to them (d := base * time.Duration(n)).
func (c *checker) durationVars(call *ast.CallExpr, body *ast.BlockStmt) []*types.Var {
	var out []*types.Var
	seen := map[*types.Var]bool{}
	var add func(e ast.Node, depth int)
	add = func(e ast.Node, depth int) {
		ast.Inspect(e, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			v, ok := c.info.Uses[id].(*types.Var)
			if !ok || v.IsField() || isPkgVar(v) || seen[v] {
				return true
			}
			seen[v] = true
			out = append(out, v)
			if depth < 2 {
				for _, rhs := range c.assignedIn(v, body) {
					add(rhs, depth+1)
				}
			}
			return true
		})
	}
	for _, a := range call.Args {
		add(a, 0)
	}
	return out
}

// assignedIn returns the right-hand sides body gives v.
func (c *checker) assignedIn(v *types.Var, body *ast.BlockStmt) []ast.Expr {
	var out []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, l := range as.Lhs {
			if id, ok := l.(*ast.Ident); ok && c.objOf(id) == v {
				out = append(out, as.Rhs[i])
			}
		}
		return true
	})
	return out
}

func (c *checker) objOf(id *ast.Ident) types.Object {
	if o := c.info.Defs[id]; o != nil {
		return o
	}
	return c.info.Uses[id]
}

// growsAndResets reports whether body both grows v (v++, v += …, v *= …,
// v = v*k, v = min(v*2, max)) and sets it back to a constant (v = 0,
// v = initialDelay): a count of failures in a row, or a backoff reset
// once the connection is back. A value set under an if that tests v
// (if d > max { d = max }) caps it rather than resets it. Goroutines and
// function literals passed on are not the loop's.
func (c *checker) growsAndResets(v *types.Var, body *ast.BlockStmt) bool {
	grows, resets := false, false
	sync := syncLits(body)
	caps := map[ast.Node]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if c.mentionsVar(n.Cond, v) || c.settingsOnly(n.Cond, body) {
				// if backoff > max { backoff = max }: a cap, not a reset;
				// if conf.PollInterval > 0 { wait = conf.PollInterval }:
				// a setting's override, taken whatever the round's answer
				for _, s := range n.Body.List {
					caps[s] = true
				}
			}
		case *ast.GoStmt:
			return false
		case *ast.FuncLit:
			return sync[n]
		case *ast.IncDecStmt:
			if id, ok := n.X.(*ast.Ident); ok && n.Tok == token.INC && c.objOf(id) == v {
				grows = true
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != 1 || len(n.Rhs) != 1 {
				return true
			}
			id, ok := n.Lhs[0].(*ast.Ident)
			if !ok || c.objOf(id) != v {
				return true
			}
			switch n.Tok {
			case token.ADD_ASSIGN, token.MUL_ASSIGN, token.SHL_ASSIGN:
				grows = true
			case token.ASSIGN:
				if caps[n] {
					return true
				}
				if c.isConstant(n.Rhs[0]) {
					resets = true
				} else if c.mentionsVar(n.Rhs[0], v) {
					grows = true
				}
			}
		}
		return true
	})
	return grows && resets
}

// settingsOnly reports whether a condition tests nothing of the round:
// only constants and values the loop (body) neither declares nor assigns,
// and their fields (conf.PollInterval > 0) — no call, no local state.
func (c *checker) settingsOnly(e ast.Expr, body *ast.BlockStmt) bool {
	only, named := true, false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if tv, ok := c.info.Types[n]; !ok || tv.Value == nil {
				only = false // a call answers something of now
			}
		case *ast.SelectorExpr:
			if v, ok := c.info.Uses[n.Sel].(*types.Var); ok && v.IsField() {
				named = true
				only = only && c.loopSetting(n.X, body)
				return false
			}
		case *ast.Ident:
			if _, ok := c.info.Uses[n].(*types.Var); ok {
				named = true
				only = only && c.loopSetting(n, body)
			}
		}
		return only
	})
	return only && named
}

// loopSetting reports whether e is a variable the loop neither declares
// nor assigns, or a field of one (conf.Retry.Max).
func (c *checker) loopSetting(e ast.Expr, body *ast.BlockStmt) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := c.info.Uses[x].(*types.Var)
		if !ok || (v.Pos() >= body.Pos() && v.Pos() < body.End()) {
			return false
		}
		return len(c.assignedIn(v, body)) == 0
	case *ast.SelectorExpr:
		if v, ok := c.info.Uses[x.Sel].(*types.Var); ok && v.IsField() {
			return c.loopSetting(x.X, body)
		}
	}
	return false
}

// isConstant reports whether e is a constant or a package variable's or
// field's value that the loop does not change (initialDelay, b.min).
func (c *checker) isConstant(e ast.Expr) bool {
	e = ast.Unparen(e)
	if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
		return tv.Value.Kind() != constant.Unknown
	}
	switch e := e.(type) {
	case *ast.SelectorExpr:
		v, ok := c.info.Uses[e.Sel].(*types.Var)
		return ok && (v.IsField() || isPkgVar(v))
	case *ast.Ident:
		v, ok := c.info.Uses[e].(*types.Var)
		return ok && isPkgVar(v)
	}
	return false
}

// mentionsVar reports whether n names v anywhere, literals included.
func (c *checker) mentionsVar(n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && c.info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// redials reports whether a loop's body opens a connection through a call
// that is no HTTP request or model SDK call (connectToServer, Dial,
// DialContext, reconnect): a loop that goes round on its failures
// re-establishes a transport, whose errors are the transport's — not
// `unclassified`, as a net/http loop's transport errors are not. A loop
// that also makes an HTTP, model SDK or gRPC call whose failure does not
// leave the loop (it re-sends the request on every status or error) is
// still judged.
func (c *checker) redials(body *ast.BlockStmt) bool {
	found, resends := false, false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt, *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			for i, st := range n.List {
				if call := c.remoteStmtCall(st); call != nil && !c.leavesOnError(st, n.List[i+1:], n == body) {
					resends = true
				}
			}
		case *ast.CallExpr:
			if c.isDial(n) {
				found = true
			}
		}
		return !resends
	})
	return found && !resends
}

// isDial reports whether call opens a connection and is no HTTP request
// or model SDK call: its callee's name has connect (not disconnect) or
// begins with dial or redial, and its last result is an error. A function
// of the package's own named so that asks an HTTP endpoint first and then
// dials (connectAndRun: the gateway's URL, then the websocket) opens a
// connection too: its HTTP call is the way to the connection; and so does
// one named dial… that speaks HTTP (websocket.Dial: its handshake).
func (c *checker) isDial(call *ast.CallExpr) bool {
	fn := c.callee(call)
	if fn == nil || !lastResultIsError(fn) {
		return false
	}
	name := strings.ToLower(fn.Name())
	dial := strings.HasPrefix(name, "dial") || strings.HasPrefix(name, "redial")
	if k := c.remoteKind(call); (k == remoteHTTP || k == remoteSDK) && !dial && !c.dialsWithin(fn) {
		return false // an HTTP request named connect: its statuses can be read
	}
	return dialName(fn.Name())
}

// dialName reports whether a function's name says it connects.
func dialName(name string) bool {
	name = strings.ToLower(name)
	return (strings.Contains(name, "connect") && !strings.Contains(name, "disconnect")) || strings.HasPrefix(name, "dial") || strings.HasPrefix(name, "redial")
}

// dialsWithin reports whether fn, declared in this package, calls in its
// own body a function named for dialling that is no HTTP request
// (websocket.Dialer.DialContext, net.Dial).
func (c *checker) dialsWithin(fn *types.Func) bool {
	d := c.decls[fn]
	if d == nil || d.Body == nil {
		return false
	}
	found := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			if f := c.callee(call); f != nil && f != fn && lastResultIsError(f) && dialName(f.Name()) && c.remoteKind(call) == remoteNone {
				found = true
			}
		}
		_, lit := n.(*ast.FuncLit)
		return !found && !lit
	})
	return found
}

// remoteStmtCall is the HTTP, model SDK or gRPC call an assignment or
// expression statement makes (resp, err := hc.Do(req)), unless it is a
// dial.
func (c *checker) remoteStmtCall(st ast.Stmt) *ast.CallExpr {
	var e ast.Expr
	switch st := st.(type) {
	case *ast.AssignStmt:
		if len(st.Rhs) != 1 {
			return nil
		}
		e = st.Rhs[0]
	case *ast.ExprStmt:
		e = st.X
	default:
		return nil
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || c.remoteKind(call) == remoteNone || c.isDial(call) {
		return nil
	}
	return call
}

// leavesOnError reports whether the statement after st tests the error st
// assigns and, when it is set, returns, goes to a label or breaks out of
// the loop (a plain break where st is in the loop's own body, top):
// addr, err := nextServer(…); if err != nil { return nil }.
func (c *checker) leavesOnError(st ast.Stmt, rest []ast.Stmt, top bool) bool {
	as, ok := st.(*ast.AssignStmt)
	if !ok || len(rest) == 0 {
		return false
	}
	id, ok := as.Lhs[len(as.Lhs)-1].(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := c.objOf(id).(*types.Var)
	if !ok || !isError(v.Type()) {
		return false
	}
	ifs, ok := rest[0].(*ast.IfStmt)
	if !ok || ifs.Init != nil || !c.mentionsVar(ifs.Cond, v) || len(ifs.Body.List) == 0 {
		return false
	}
	switch last := ifs.Body.List[len(ifs.Body.List)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return last.Tok == token.GOTO || (last.Tok == token.BREAK && (last.Label != nil || top))
	}
	return false
}

// waitReached is whether the walk reaches lw's wait on outcome o; a wait
// in the loop's header (for r := retry.Begin(); r.Continue(ctx); {…}),
// which the walk of the body never meets, is reached on every way round.
func (w *loopWalker) waitReached(lw loopCall, k int, o outcome) tri {
	if states := w.at[lw.call]; len(states) > 0 {
		return w.reaches(states, k, o)
	}
	return w.retries(k, o)
}
