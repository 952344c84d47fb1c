package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A long poll re-sends its request as soon as an answer comes: that is its
// work, not a retry. A wait it takes only after a failure is a retry's,
// though, and the failures that reach it are what it retries. When they
// are every error of a call whose error carries the answer's status — a 401
// and a 404 as much as a 503 — the poll is as unclassified as a retry
// loop that does the same.

// pollUnclassified judges an HTTP poll's failure waits as a retry loop's:
// the outcomes that reach one of fw are the ones the poll retries. It
// asks it of a poll around net/http's client (each status is read as the
// loop reads it), a model SDK's method or a go-swagger client, and a helper
// known to fold the status into its error (FoldsStatus). A helper whose
// error may be only the transport's, and a gRPC stream or session re-opened
// after any failure (a reconnect), are judged for their waits only.
func (c *checker) pollUnclassified(s ast.Stmt, w *loopWalker, sc loopScan, fw []loopCall) {
	if len(fw) == 0 || c.redials(sc.body) {
		return
	}
	callee := c.remoteCallee(sc)
	if !c.foldsStatus(callee) && (sc.remote != remoteHTTP || funcPath(callee) != "net/http") {
		return
	}
	k := foldedKind(c, sc)
	v := verdict{retried: map[int]tri{}}
	for _, o := range outcomes(k) {
		if !o.failure() {
			continue
		}
		r := triF
		for _, lw := range fw {
			r = or3(r, w.waitReached(lw, k, o))
		}
		if o.hasStatus {
			v.retried[o.status] = r
		} else {
			v.errTri = r
		}
	}
	c.reportUnclassified(s, sc, v)
}

// foldedKind is the kind of the loop's remote call as its outcomes come:
// a helper that returns the response but folds a non-2xx answer into its
// error hands back its statuses as a model SDK does.
func foldedKind(c *checker, sc loopScan) int {
	if fn := c.remoteCallee(sc); sc.remote == remoteHTTP && funcPath(fn) != "net/http" && c.foldsStatus(fn) {
		return remoteSDK
	}
	return sc.remote
}

// remoteCallee is the function the loop's remote call calls, or nil.
func (c *checker) remoteCallee(sc loopScan) *types.Func {
	if sc.remoteCall == nil {
		return nil
	}
	return c.callee(sc.remoteCall)
}

// foldsStatus reports whether fn's error carries the answer's status: a
// model SDK's method, go-openapi's Submit, or a function whose fact says
// it folds.
func (c *checker) foldsStatus(fn *types.Func) bool {
	if fn == nil {
		return false
	}
	if p := funcPath(fn); sdkRoot(p) != "" || p == openapiRuntimePath {
		return true
	}
	f := c.fact(fn)
	return f != nil && f.FoldsStatus
}

// summarizeFolds sets s.FoldsStatus for a function that makes a remote
// call, returns an error last, and either returns a non-nil one under an
// if that tests the answer's status, or returns one of a type that carries
// a status (&HTTPError{StatusCode: code}, however the code was read), or
// calls a function that folds and returns some non-nil error (its own
// wrapping of that one, as a rule).
func (c *checker) summarizeFolds(fn *types.Func, d *ast.FuncDecl, s *FuncFact) {
	res := fn.Type().(*types.Signature).Results()
	if s.Remote == remoteNone || res.Len() == 0 || !isError(res.At(res.Len()-1).Type()) {
		return
	}
	callsFolding := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.IfStmt:
			if (c.hasStatus(n.Cond) || c.localStatusTest(n.Cond, d.Body)) && returnsNamedError(c.info, n.Body, res) {
				s.FoldsStatus = true
			}
		case *ast.ReturnStmt:
			// return nil, &HTTPError{StatusCode: code}: an error of a
			// type that carries the status, however the status was read
			if c.statusErrorReturn(n, res.Len()) {
				s.FoldsStatus, s.StatusError = true, true
			}
		case *ast.CallExpr:
			if callee := c.callee(n); callee != fn && (c.foldsStatus(callee) || c.checksStatus(callee) && handsResponse(c.info, n)) {
				callsFolding = true
			}
		}
		return !s.StatusError
	})
	if !s.FoldsStatus && callsFolding {
		s.FoldsStatus = returnsNamedError(c.info, d.Body, res)
	}
}

// statusErrorReturn reports whether r, a return of n results, gives an
// error of a type that carries a status and nil for every other result.
func (c *checker) statusErrorReturn(r *ast.ReturnStmt, n int) bool {
	if len(r.Results) != n || !statusBearing(c.info.TypeOf(r.Results[n-1])) {
		return false
	}
	for _, x := range r.Results[:n-1] {
		if !isNil(c.info, x) {
			return false
		}
	}
	return true
}

// typedKind is the kind of a retry loop's remote call as its outcomes
// come: a helper whose failed answers come back as nothing but an error
// carrying the status (StatusError) hands them back as a model SDK does.
// (A helper that hands back the response beside its error is read
// through where the loop tests them.)
func typedKind(c *checker, sc loopScan) int {
	if fn := c.remoteCallee(sc); sc.remote == remoteHTTP && funcPath(fn) != "net/http" {
		if f := c.fact(fn); f != nil && f.StatusError {
			return remoteSDK
		}
	}
	return sc.remote
}

// returnsError reports whether body (outside function literals) has a
// return of n results whose last is not the constant nil.
func returnsError(info *types.Info, body *ast.BlockStmt, n int) bool {
	found := false
	ast.Inspect(body, func(nd ast.Node) bool {
		switch r := nd.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(r.Results) == n && !isNil(info, r.Results[n-1]) {
				found = true
			}
		}
		return !found
	})
	return found
}

// returnsNamedError is returnsError for a function whose results are res,
// a bare return counted too where the named error result is not nil: under
// `if err != nil`, or after the block it ends set it (err =
// errors.New("non-200 status"); return).
func returnsNamedError(info *types.Info, body *ast.BlockStmt, res *types.Tuple) bool {
	if returnsError(info, body, res.Len()) {
		return true
	}
	named := res.At(res.Len() - 1)
	if named.Name() == "" || named.Name() == "_" {
		return false
	}
	is := func(e ast.Expr) bool { return info.Uses[identOf(e)] == named }
	found := false
	ast.Inspect(body, func(nd ast.Node) bool {
		switch b := nd.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			if c, ok := ast.Unparen(b.Cond).(*ast.BinaryExpr); ok && c.Op == token.NEQ && is(c.X) && isNil(info, c.Y) && endsBare(b.Body.List) {
				found = true
			}
		case *ast.BlockStmt:
			set := false
			for _, st := range b.List {
				if as, ok := st.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
					for i, l := range as.Lhs {
						if is(l) {
							set = !isNil(info, as.Rhs[i])
						}
					}
				}
				if r, ok := st.(*ast.ReturnStmt); ok && len(r.Results) == 0 && set {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// endsBare reports whether list ends with a bare return.
func endsBare(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	r, ok := list[len(list)-1].(*ast.ReturnStmt)
	return ok && len(r.Results) == 0
}

// plainDoer reports whether call is made through an interface with
// http.Client.Do's shape (an injected HTTP client) and no implementation
// in sight folds a status into the error: by the shape's contract, as
// with net/http, its error is the transport's. An implementation that is
// a func type (DoerFunc) is the package's way of stacking decorators, one
// of which may fold the status: not plain.
func (c *checker) plainDoer(call *ast.CallExpr, fn *types.Func, body *ast.BlockStmt) bool {
	if fn == nil || !isDoer(fn) {
		return false
	}
	targets, _ := c.implTargets(call, fn, body)
	for _, t := range targets {
		if c.foldsStatus(t) || funcTypeRecv(t) {
			return false
		}
	}
	return true
}

// funcTypeRecv reports whether fn is a method of a named func type.
func funcTypeRecv(fn *types.Func) bool {
	r := recvNamed(fn)
	if r == nil {
		return false
	}
	_, ok := r.Underlying().(*types.Signature)
	return ok
}
