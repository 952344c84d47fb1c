package retryloop

import (
	"fmt"
	"go/ast"
)

// client-go's retry.OnError(backoff, retriable, fn) retries what
// retriable says. A retriable that answers true whatever the error
// ("always retry") retries every failure of fn: a fn whose HTTP call turns
// each non-2xx answer into its error re-sends a 404 as much as a 503, and
// waits the backoff's own steps after a 503 or a 429.

// kRetryEveryError reports such a call: unclassified, and retryafter
// unless fn reads Retry-After.
func (c *checker) kRetryEveryError(call *ast.CallExpr, decl *ast.BlockStmt) {
	fn := c.callee(call)
	if fn == nil || funcPath(fn) != kRetryPath || fn.Name() != "OnError" || len(call.Args) != 3 {
		return
	}
	pred, ok := ast.Unparen(call.Args[1]).(*ast.FuncLit)
	if !ok || !c.alwaysTrue(pred) {
		return
	}
	lit := c.operationLit(call, decl)
	if lit == nil {
		return
	}
	r := c.remoteIn(lit.Body)
	if r == nil || !c.foldsAnswers(r) {
		return
	}
	c.add(finding{check: CheckUnclassified, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s retries every error of %s, statuses that will not change (400, 401, 403, 404) among them: have the retriable func answer true only for 429, 503 and the transient 5xx, or use recoil", c.callName(call), c.callName(r.call))})
	if !c.litReadsRetryAfter(lit) {
		c.add(finding{check: CheckRetryAfter, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s retries 429 and 503 without reading Retry-After: the server said when to come back; read it, or use recoilhttp.Transport", c.callName(call))})
	}
}

// alwaysTrue reports whether every return of lit is the constant true.
func (c *checker) alwaysTrue(lit *ast.FuncLit) bool {
	n, all := 0, true
	ast.Inspect(lit.Body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			n++
			v, known := false, false
			if len(m.Results) == 1 {
				v, known = c.constBool(m.Results[0])
			}
			all = all && known && v
		}
		return all
	})
	return n > 0 && all
}

// foldsAnswers reports whether a remote call's failed answers come back as
// its error: a model SDK's method, or a helper of this package whose fact
// says it turns a non-2xx status into its error. Another module's helper
// (crane.Copy) may classify and retry inside, out of the retriable's
// sight.
func (c *checker) foldsAnswers(r *remoteAt) bool {
	fn := c.callee(r.call)
	if fn == nil || r.kind != remoteHTTP && r.kind != remoteSDK {
		return false
	}
	if sdkRoot(funcPath(fn)) != "" {
		return true
	}
	f := c.fact(fn)
	return fn.Pkg() == c.pass.Pkg && f != nil && (f.FoldsStatus || f.StatusError)
}
