package retryloop

import (
	"go/ast"
	"go/token"
	"strings"
)

// mentionsRetryAfter reports whether n holds the string "Retry-After".
func mentionsRetryAfter(n ast.Node) bool {
	found := false
	if n == nil || isNilNode(n) {
		return false
	}
	ast.Inspect(n, func(m ast.Node) bool {
		if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(strings.ToLower(lit.Value), "retry-after") {
			found = true
		}
		return !found
	})
	return found
}

// retryAfterBranches returns the bodies of body's if statements whose
// init or condition reads Retry-After: what they assign is the server's
// wait.
func retryAfterBranches(body *ast.BlockStmt) []ast.Node {
	var out []ast.Node
	if body == nil {
		return nil
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if s, ok := n.(*ast.IfStmt); ok && (mentionsRetryAfter(s.Init) || mentionsRetryAfter(s.Cond)) {
			out = append(out, s.Body)
		}
		return true
	})
	return out
}
