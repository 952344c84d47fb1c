package retryloop

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// OfflineFact marks a package that cannot reach another machine or
// another program: neither it nor anything it imports, however deep,
// imports net (or a package under it), crypto/tls, os/exec, plugin,
// log/syslog or database/sql. A retry in such a package retries this
// machine's work — a database engine's compaction, a commit to its own
// files — whatever its helpers are called.
type OfflineFact struct{}

// AFact marks OfflineFact as an analysis fact.
func (*OfflineFact) AFact() {}

// String prints the fact as the analyzer's tests match it.
func (*OfflineFact) String() string { return "offline" }

// reachesOut reports whether importing the package at path lets a
// program talk to another machine or start another program.
func reachesOut(path string) bool {
	switch path {
	case "net", "crypto/tls", "os/exec", "plugin", "log/syslog", "database/sql", "database/sql/driver":
		return true
	}
	return strings.HasPrefix(path, "net/")
}

// markOffline reports whether pass's package is offline, and if it is
// says so in a fact for the packages that import it. A package is offline
// when none of its imports reaches out and each carries the fact; an
// import analysed without one (cgo's "C" outside the standard library,
// a package vet did not visit) is taken to reach out.
func markOffline(pass *analysis.Pass, std bool) bool {
	if reachesOut(pass.Pkg.Path()) {
		return false
	}
	for _, imp := range pass.Pkg.Imports() {
		switch p := imp.Path(); {
		case p == "unsafe", p == "C" && std:
		case p == "C", reachesOut(p), !pass.ImportPackageFact(imp, new(OfflineFact)):
			return false
		}
	}
	pass.ExportPackageFact(new(OfflineFact))
	return true
}

// offlineWork reports whether a loop's attempt is this package's own
// work in a package that is offline: a call of one of its functions that,
// itself or through its package's other functions, acts on something —
// the file system, a syscall, another package's code (which, the package
// being offline, is offline too). Nothing such a call does can be another
// machine's answer. A call of a function value, or of an interface's
// method, may be anybody's — a retry helper's operation, a store the user
// plugs in — and is not taken; nor is a function that only returns what
// it was given or made, which stands for work the reader cannot see.
func (c *checker) offlineWork(call *ast.CallExpr) bool {
	if !c.offline || call == nil {
		return false
	}
	fn := c.callee(call)
	return fn != nil && fn.Pkg() == c.pass.Pkg && !isIfaceMethod(fn) && c.actsLocally(fn, 0)
}

// actsLocally reports whether fn, a function of this package, calls a
// function of a local package (see localPkgs) or of a package outside
// the standard library, itself or through this package's functions (to
// a depth of three), and never calls one of its own func parameters: a
// helper that runs what it is handed runs the caller's work.
func (c *checker) actsLocally(fn *types.Func, depth int) bool {
	d := c.decls[fn]
	if d == nil || depth > 3 {
		return false
	}
	acts, handed := false, false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !handed
		}
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
			if v, ok := c.info.Uses[id].(*types.Var); ok && c.params[v] {
				handed = true
			}
		}
		switch callee := c.callee(call); {
		case callee == nil || callee.Pkg() == nil:
		case callee.Pkg() == c.pass.Pkg:
			acts = acts || (!isIfaceMethod(callee) && c.actsLocally(callee, depth+1))
		case localPkgs[funcPath(callee)] || !isStdPath(callee.Pkg().Path()):
			acts = true
		}
		return !handed
	})
	return acts && !handed
}

// isStdPath reports whether path names a standard library package (its
// first element has no dot).
func isStdPath(path string) bool {
	return !strings.Contains(strings.Split(path, "/")[0], ".")
}
