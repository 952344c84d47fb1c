package retryloop

import (
	"fmt"
	"go/ast"
	"go/token"
)

// backoffEveryError reports a cenkalti/backoff retry (or an avast/retry-go
// one with no RetryIf) whose operation
// hands the library every error of a call that folds the answer's status
// into its error — a model SDK's method, a helper that turns any non-2xx
// answer into an error — untouched: it returns an error,
// and nothing in it makes one backoff.Permanent (retry.Unrecoverable), tests one (errors.Is or
// As, a comparison with an error variable, a type assertion, a
// classifier such as status.Code) or reads a status. Every failure, a 400
// or a 401 as much as a 503, is sent again on the library's schedule. (A
// gRPC method retried this way is left alone, as it was before: a
// reconnect on the library's jittered, ctx-bound backoff.)
// marker names how the library is told to stop ("backoff.Permanent").
func (c *checker) backoffEveryError(call *ast.CallExpr, lit *ast.FuncLit, r *remoteAt, marker string) bool {
	if r.kind != remoteSDK || c.readsStatus(lit.Body) || !returnsSomeError(c, lit) {
		return false
	}
	classified := false
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if classified {
			return false // Inspect still visits the siblings: keep the verdict
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			fn := c.callee(n)
			switch {
			case fn != nil && isCenkalti(funcPath(fn)) && fn.Name() == "Permanent",
				fn != nil && isModule(funcPath(fn), retryGoPath) && fn.Name() == "Unrecoverable":
				classified = true
			case isFunc(fn, "errors", "Is"), isFunc(fn, "errors", "As"), c.classifies(n):
				classified = true
			}
		case *ast.TypeAssertExpr:
			classified = isError(c.info.TypeOf(n.X))
		case *ast.BinaryExpr:
			classified = (n.Op == token.EQL || n.Op == token.NEQ) && (errVar(c.info, n.X) || errVar(c.info, n.Y))
		}
		return !classified
	})
	if classified {
		return false
	}
	c.add(finding{check: CheckUnclassified, pos: call.Pos(), end: call.End(),
		msg: fmt.Sprintf("%s retries every error of %s, statuses that will not change (400, 401, 403, 404) among them: return those as %s, retry only 429, 503 and the transient 5xx, or use recoil", c.callName(call), c.callName(r.call), marker)})
	return true
}

// returnsSomeError reports whether a function literal has a return whose
// last result is not the constant nil.
func returnsSomeError(c *checker, lit *ast.FuncLit) bool {
	found := false
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) > 0 && !isNil(c.info, n.Results[len(n.Results)-1]) {
				found = true
			}
		}
		return !found
	})
	return found
}
