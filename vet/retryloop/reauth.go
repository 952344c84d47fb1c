package retryloop

import (
	"go/ast"
	"strings"
)

// resetsCredentials reports whether body calls something that resets or
// refreshes the credentials a request carries (t.ResetToken(),
// c.refreshSession(ctx), a.reauthenticate()): a 401 or 403 re-sent after
// it is answered anew.
func (c *checker) resetsCredentials(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		if fn := c.callee(call); fn != nil && credentialReset(fn.Name()) {
			found = true
		}
		return !found
	})
	return found
}

// credentialReset reports whether a function's name says it resets,
// refreshes or renews credentials, or logs in again.
func credentialReset(name string) bool {
	n := strings.ToLower(name)
	if strings.Contains(n, "reauth") || strings.Contains(n, "relogin") {
		return true
	}
	verb, noun := false, false
	for _, v := range []string{"reset", "invalidate", "refresh", "renew", "clear", "expire", "drop"} {
		verb = verb || strings.Contains(n, v)
	}
	for _, w := range []string{"token", "auth", "credential", "login", "session", "jwt"} {
		noun = noun || strings.Contains(n, w)
	}
	return verb && noun
}
