package retryloop

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
)

// What acts on this machine only: a retry of it has no shared dependency
// to synchronise on and no storm to spread, so its loop is not judged as a
// retry of a remote call.

// localPkgs are the packages whose calls act on this machine only.
var localPkgs = map[string]bool{
	"os": true, "syscall": true, "io/fs": true, "io/ioutil": true, "path/filepath": true, "golang.org/x/sys/unix": true,
	// fsnotify watches this machine's file system (inotify, kqueue):
	// gopls and sentinel-golang retry its Add while a checkout settles.
	"github.com/fsnotify/fsnotify": true,
	// and under the import path of its first releases
	"gopkg.in/fsnotify.v1": true, "gopkg.in/fsnotify/fsnotify.v1": true,
}

// isLocalCall reports whether fn acts on this machine only: a call into
// one of localPkgs, or a read of client-go's informer cache.
func isLocalCall(fn *types.Func) bool {
	return localPkgs[funcPath(fn)] || informerRead(fn)
}

// informerRead reports whether fn reads client-go's informer cache: a
// Store's or an Indexer's lookups, an informer's GetStore or GetIndexer, a
// generated lister's methods. That is memory this process keeps in step
// with the API server, not a call to it: a loop that looks a pod up again
// until the informer has seen it waits for its own cache.
func informerRead(fn *types.Func) bool {
	r := recvNamed(fn)
	if r == nil {
		return false
	}
	path := funcPath(fn)
	if strings.HasPrefix(path, "k8s.io/client-go/listers/") {
		return true
	}
	if path != "k8s.io/client-go/tools/cache" {
		return false
	}
	switch r.Obj().Name() {
	case "Store", "Indexer", "ThreadSafeStore", "SharedInformer", "SharedIndexInformer", "GenericLister", "GenericNamespaceLister":
		switch fn.Name() {
		case "List", "ListKeys", "Get", "GetByKey", "ByIndex", "Index", "IndexKeys", "ListIndexFuncValues", "GetStore", "GetIndexer", "HasSynced", "ByNamespace":
			return true
		}
	}
	return false
}

// isLocalOp reports whether a loop's attempt is a call that acts on this
// machine only (the file system, a syscall), or a call of a local variable
// given only literals that do.
func (c *checker) isLocalOp(call *ast.CallExpr, body *ast.BlockStmt) bool {
	if call == nil {
		return false
	}
	fn := c.callee(call)
	if fn == nil {
		// a local variable given literals that act on this machine only
		_, lits := c.localLits(call, body)
		for _, lit := range lits {
			if !c.localBody(lit.Body, 1) {
				return false
			}
		}
		return len(lits) > 0
	}
	if isIfaceMethod(fn) {
		// sched.queue.Size() behind an interface: local when every
		// implementation the package gives it is
		ts, ok := c.implTargets(call, fn, body)
		for _, t := range ts {
			ok = ok && (c.localHelper(t, 0) || c.memoryRead(t))
		}
		return ok && len(ts) > 0
	}
	return isLocalCall(fn) || c.localHelper(fn, 0) || c.memoryRead(fn) || c.unixDial(call, fn)
}

// unixDial reports whether call dials a unix socket (net.Dial("unix",
// path), a Dialer's DialContext(ctx, "unixpacket", path)): a daemon on
// this machine, no dependency shared with other clients.
func (c *checker) unixDial(call *ast.CallExpr, fn *types.Func) bool {
	if funcPath(fn) != "net" || !strings.HasPrefix(fn.Name(), "Dial") {
		return false
	}
	for _, a := range call.Args {
		if tv, ok := c.info.Types[a]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
			return strings.HasPrefix(constant.StringVal(tv.Value), "unix")
		}
	}
	return false
}

// localHelper reports whether fn is a function of this package that acts
// on this machine only: it calls the file system or a syscall, and
// otherwise only the standard library's pure packages and other such
// helpers (createLockfile over os.OpenFile); goroutines it starts are not
// its attempt.
func (c *checker) localHelper(fn *types.Func, depth int) bool {
	d := c.decls[fn]
	return d != nil && depth <= 3 && c.localBody(d.Body, depth)
}

// localBody reports whether body acts on this machine only, as
// localHelper asks of a function's; a method of the universe's error
// (err.Error()) is in-process too.
func (c *checker) localBody(body *ast.BlockStmt, depth int) bool {
	local, ok := false, true
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt, *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if tv, isType := c.info.Types[n.Fun]; isType && tv.IsType() {
				return true // a conversion
			}
			if _, builtin := c.info.Uses[calleeIdent(n.Fun)].(*types.Builtin); builtin {
				return true
			}
			callee := c.callee(n)
			path := funcPath(callee)
			switch {
			case callee == nil:
				ok = false
			case callee.Pkg() == nil:
				// err.Error()
			case isLocalCall(callee):
				local = true
			case callee.Pkg() == c.pass.Pkg && isIfaceMethod(callee):
				// fs.openFile behind the package's own interface: local
				// when each type of the package behind it is (the
				// os.OpenFile one, and an in-memory stand-in beside it)
				l, known := c.implsLocal(callee, depth+1)
				local, ok = local || l, known
			case callee.Pkg() == c.pass.Pkg && c.decls[callee] != nil && c.decls[callee].Body == body:
				// a recursive call (wait for the parent directory first):
				// what the rest of this body does
			case callee.Pkg() == c.pass.Pkg:
				if c.localHelper(callee, depth+1) {
					local = true
				} else if c.decls[callee] == nil || c.remoteIn(c.decls[callee].Body) != nil || !c.pureStd(c.decls[callee].Body) {
					ok = false
				}
			case !pureStdPkg(path):
				ok = false
			}
		}
		return ok
	})
	return ok && local
}

// implsLocal reports, for an interface method of this package, whether a
// type of the package behind it acts on this machine (local) and whether
// every one is local or in-process only (known).
func (c *checker) implsLocal(m *types.Func, depth int) (local, known bool) {
	impls, ok := c.pkgImpls(m)
	if !ok || len(impls) == 0 || depth > 3 {
		return false, false
	}
	for _, t := range impls {
		switch b := c.decls[t].Body; {
		case c.localHelper(t, depth):
			local = true
		case c.remoteIn(b) != nil || !c.pureStd(b):
			return false, false
		}
	}
	return local, true
}

// pureStd reports whether a body calls only the standard library's pure
// packages and this package's functions.
func (c *checker) pureStd(b *ast.BlockStmt) bool {
	ok := true
	ast.Inspect(b, func(n ast.Node) bool {
		if call, isCall := n.(*ast.CallExpr); isCall {
			if callee := c.callee(call); callee != nil && callee.Pkg() != c.pass.Pkg && !pureStdPkg(funcPath(callee)) && !isLocalCall(callee) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// pureStdPkg reports whether path is a standard library package whose
// calls reach nothing beyond this process: not the network, a database,
// another program.
func pureStdPkg(path string) bool {
	if path == "" || !isStdPath(path) {
		return false
	}
	for _, p := range []string{"net", "database", "os/exec", "plugin", "crypto/tls", "log/syslog"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return false
		}
	}
	return true
}
