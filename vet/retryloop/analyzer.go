package retryloop

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// The names of the checks, as they appear in messages and in
// //recoil:ignore comments. They are stable.
const (
	CheckUnclassified = "unclassified"
	CheckNoJitter     = "nojitter"
	CheckDeafWait     = "deafwait"
	CheckUnbounded    = "unbounded"
	CheckRetryAfter   = "retryafter"
	CheckStacked      = "stacked"
	// CheckIgnore reports a malformed //recoil:ignore comment; it cannot
	// itself be ignored.
	CheckIgnore = "ignore"
)

// Checks lists the names of the checks a //recoil:ignore comment can name.
var Checks = []string{CheckUnclassified, CheckNoJitter, CheckDeafWait, CheckUnbounded, CheckRetryAfter, CheckStacked}

// Analyzer finds retry loops and retry configurations that amplify
// failures. It is safe for concurrent use, as every analysis.Analyzer is.
var Analyzer = &analysis.Analyzer{
	Name: "recoilvet",
	Doc: `find retry loops and retry settings that turn a blip into an outage

recoilvet reports hand-written retry loops that retry without classifying
the failure (unclassified), waits without jitter (nojitter), waits deaf to
the caller's context (deafwait), retry loops without a bound (unbounded),
429/503 retried without reading Retry-After (retryafter), and retry layers
stacked on each other (stacked). A "//recoil:ignore <check> <reason>"
comment on the line of a finding or the line above silences it.`,
	URL:       "https://github.com/recoil-go/recoil/blob/main/docs/vet.md",
	Run:       run,
	FactTypes: []analysis.Fact{new(FuncFact), new(StatusFact), new(OfflineFact), new(SettingFact)},
}

// testFiles is the -testfiles flag: check _test.go files too. Off by
// default: a test sleeping inside testing/synctest's fake clock, or a test
// waiting for its own server to listen, is not a retry storm.
var testFiles bool

func init() {
	Analyzer.Flags.BoolVar(&testFiles, "testfiles", false, "check _test.go files too (their sleeps and loops are usually fake clocks and readiness probes)")
}

const (
	remoteNone = iota
	remoteHTTP
	remoteSDK
	remoteGRPC
)

const (
	jitterUnknown = iota
	jitterNone
	jitterYes
)

// finding is a diagnostic before ignore comments are applied.
type finding struct {
	check string
	pos   token.Pos
	end   token.Pos
	msg   string
	fixes []analysis.SuggestedFix
}

type checker struct {
	pass     *analysis.Pass
	info     *types.Info
	decls    map[*types.Func]*ast.FuncDecl
	pkgVars  map[*types.Var]ast.Expr
	summary  map[*types.Func]*FuncFact
	assigns  map[*ast.BlockStmt]map[types.Object][]ast.Expr
	purities map[resultKey]purity
	findings []finding
	seen     map[string]bool
	bare     map[*ast.CallExpr]bool
	detached map[*types.Var]bool
	// live is where a detached context's errgroup first starts a
	// goroutine, whose failure cancels it
	live   map[*types.Var]token.Pos
	params map[*types.Var]bool // every function's and literal's parameters
	// ctxBlind, while set, makes hearing a context no bound: ctxOnly asks
	// what else ends a loop.
	ctxBlind bool
	// fieldValues are the values the package gives each struct field.
	fieldValues map[*types.Var][]fieldValue
	// fieldKeys are the keys the package stores in each map field
	// (rc.Codes[code] = …).
	fieldKeys map[*types.Var][]fieldValue
	// counted caches counterElems, by variable and body: the evaluator
	// asks it of every comparison on every outcome.
	counted       map[countedKey]bool
	fieldPurities map[*types.Var]purity
	// sites are the calls of the package's functions, by callee (built
	// when first needed).
	sites map[*types.Func][]callSite
	// off are the branches of each body taken only when a setting is
	// changed from its default (see offByDefault); gates are the fields
	// whose tests guard them.
	off   map[*ast.BlockStmt][]ast.Node
	gates map[*ast.BlockStmt][]*types.Var
	// fieldMutated are the fields the package changes other than by a
	// plain assignment: f++, f += d, a tuple assignment, &x.f.
	fieldMutated map[*types.Var]bool
	// flagFields are the duration fields a command-line flag sets
	// (flag.DurationVar(&conf.retryDelay, …)).
	flagFields map[*types.Var]bool
	// pkgAssigned are the package variables the package assigns anywhere.
	pkgAssigned map[*types.Var]bool
	// litArgs bind a function literal's parameters while its result is
	// read (see litPurity).
	litArgs map[*types.Var]litArg
	// summarized is set once the package's facts are settled;
	// statusVars are the variables that hold a helper's status result
	// (see heldStatus), built when first needed after that.
	summarized bool
	statusVars map[types.Object]bool
	// notYet caches notYetSentinel's answers.
	notYet map[notYetKey]bool
	// litWaiting are the function literals litWait is reading: a
	// literal that calls its own variable is not read again inside.
	litWaiting map[*ast.FuncLit]bool
	// nilErr caches neverFails' answers.
	nilErr map[*types.Func]bool
	// sentinels are the package's error variables that stand for one
	// HTTP status (see findStatusSentinels).
	sentinels map[*types.Var]int
	// kinds are the error types whose values the package makes in place
	// and returns under a test of a response's status, each with the
	// statuses that test holds it to (see findStatusSentinels).
	kinds map[*types.TypeName][]int
	// ctxMethods caches ctxMethod's answers by type; heardCtx,
	// heardField's by declaration.
	ctxMethods map[types.Type]string
	heardCtx   map[*ast.FuncDecl]string
	// bodies are the package's function declarations with bodies, in
	// position order (see declAt).
	bodies []*ast.FuncDecl
	// bgRequests caches backgroundRequest's answers by parameter.
	bgRequests map[*types.Var]bool
	// handed caches handedFunc's answers by parameter; declsRead is set
	// once every declaration is in decls, and findingSites while the
	// call sites handedFunc reads are collected.
	handed       map[*types.Var]*types.Func
	declsRead    bool
	findingSites bool
	// offline is set when the package cannot reach another machine or
	// program (see OfflineFact).
	offline bool
	// sleepers caches sleepersIn's answers by declaration body: every
	// body checked in a declaration asks for the same one.
	sleepers map[*ast.BlockStmt]map[*ast.CallExpr]sleeperAt
	// bodyResults maps a function's body to its result list (resultsOf).
	bodyResults map[*ast.BlockStmt]*ast.FieldList
}

// newChecker makes the checker of one package's pass.
func newChecker(pass *analysis.Pass, offline bool) *checker {
	return &checker{
		pass:     pass,
		offline:  offline,
		info:     pass.TypesInfo,
		decls:    map[*types.Func]*ast.FuncDecl{},
		pkgVars:  map[*types.Var]ast.Expr{},
		summary:  map[*types.Func]*FuncFact{},
		assigns:  map[*ast.BlockStmt]map[types.Object][]ast.Expr{},
		purities: map[resultKey]purity{},
		seen:     map[string]bool{},
		bare:     map[*ast.CallExpr]bool{},
		detached: map[*types.Var]bool{},
		live:     map[*types.Var]token.Pos{},
		params:   map[*types.Var]bool{},
		off:      map[*ast.BlockStmt][]ast.Node{},
		gates:    map[*ast.BlockStmt][]*types.Var{},

		fieldMutated: map[*types.Var]bool{},
		flagFields:   map[*types.Var]bool{},
		notYet:       map[notYetKey]bool{},
		pkgAssigned:  map[*types.Var]bool{},
		litArgs:      map[*types.Var]litArg{},
		nilErr:       map[*types.Func]bool{},
		sentinels:    map[*types.Var]int{},
		kinds:        map[*types.TypeName][]int{},
		ctxMethods:   map[types.Type]string{},
		heardCtx:     map[*ast.FuncDecl]string{},
		handed:       map[*types.Var]*types.Func{},
		sleepers:     map[*ast.BlockStmt]map[*ast.CallExpr]sleeperAt{},

		fieldValues:   map[*types.Var][]fieldValue{},
		fieldKeys:     map[*types.Var][]fieldValue{},
		counted:       map[countedKey]bool{},
		fieldPurities: map[*types.Var]purity{},
	}
}

func run(pass *analysis.Pass) (any, error) {
	std := isStd(pass)
	offline := markOffline(pass, std)
	if std {
		// The standard library's timers and connections are not retry
		// loops, and its functions are not anyone's wait helpers.
		return nil, nil
	}
	c := newChecker(pass, offline)
	for _, f := range pass.Files {
		c.findBare(f)
		c.findParams(f)
		c.findDetached(f)
		c.findFieldValues(f)
		c.findFieldMutations(f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if fn, ok := c.info.Defs[d.Name].(*types.Func); ok && d.Body != nil {
					c.decls[fn] = d
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok || len(vs.Values) != len(vs.Names) {
						continue
					}
					for i, n := range vs.Names {
						if v, ok := c.info.Defs[n].(*types.Var); ok {
							c.pkgVars[v] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	c.declsRead = true
	c.findStatusSentinels()
	c.summarize()
	c.summarized = true
	if inModCache(pass) {
		// A downloaded dependency: go vet analyses it for its facts only
		// and never shows its diagnostics, so do not look for any.
		return nil, nil
	}
	for _, f := range pass.Files {
		if !testFiles && strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		c.file(f)
	}
	c.report()
	return nil, nil
}

// isStd reports whether pass is checking a package of the standard
// library (its files are under GOROOT).
func isStd(pass *analysis.Pass) bool {
	if len(pass.Files) == 0 || !isStdPath(pass.Pkg.Path()) {
		return false
	}
	root := build.Default.GOROOT
	if root == "" {
		return false
	}
	name := pass.Fset.File(pass.Files[0].Pos()).Name()
	return strings.HasPrefix(filepath.ToSlash(name), filepath.ToSlash(filepath.Join(root, "src"))+"/")
}

// inModCache reports whether pass is checking a package in the module
// cache (a downloaded dependency, not the user's code).
func inModCache(pass *analysis.Pass) bool {
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		gopath := filepath.SplitList(build.Default.GOPATH)
		if len(gopath) == 0 || gopath[0] == "" {
			return false
		}
		cache = filepath.Join(gopath[0], "pkg", "mod")
	}
	if len(pass.Files) == 0 {
		return false
	}
	name := pass.Fset.File(pass.Files[0].Pos()).Name()
	return strings.HasPrefix(filepath.ToSlash(name), filepath.ToSlash(cache)+"/")
}

// summarize computes each of the package's functions' FuncFact, to a fixed
// point (helpers call helpers in any order), and exports the non-empty ones.
func (c *checker) summarize() {
	fns := make([]*types.Func, 0, len(c.decls))
	for fn := range c.decls {
		fns = append(fns, fn)
		c.summary[fn] = &FuncFact{}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].Pos() < fns[j].Pos() })
	for range 10 {
		changed := false
		for _, fn := range fns {
			s := c.summarizeFunc(fn, c.decls[fn])
			if *s != *c.summary[fn] {
				c.summary[fn] = s
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for _, fn := range fns {
		// No other summary reads CtxOnly: it walks the loops again, so
		// once, after the rest have settled, not on every round.
		c.summary[fn].CtxOnly = c.ctxOnly(fn, c.decls[fn])
	}
	c.summarizeDeafCtx(fns)
	for _, fn := range fns {
		// Only an exported function can be another package's helper.
		if s := c.summary[fn]; *s != (FuncFact{}) && fn.Exported() {
			c.exportFact(fn, s)
		}
	}
	c.exportIfaceRemotes()
	c.exportSettings()
}

func (c *checker) summarizeFunc(fn *types.Func, d *ast.FuncDecl) *FuncFact {
	s := &FuncFact{}
	var waits []*ast.CallExpr
	var found []waitInfo
	sync := syncLits(d.Body)
	if isIterator(fn) {
		// An iterator's body runs in its caller's range loop: the
		// function literals it returns wait for that loop.
		ast.Inspect(d.Body, func(n ast.Node) bool {
			if r, ok := n.(*ast.ReturnStmt); ok {
				for _, x := range r.Results {
					if lit, ok := ast.Unparen(x).(*ast.FuncLit); ok {
						sync[lit] = true
					}
				}
			}
			return true
		})
	}
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			return false // a goroutine's waits and calls are not the caller's
		case *ast.FuncLit:
			return sync[n] // a callback's are not either, unless called at once
		case *ast.BasicLit:
			if serverWaitLit(n) {
				s.RetryAfter = true
			}
		case *ast.CallExpr:
			if k := c.remoteKind(n); k != remoteNone && (s.Remote == remoteNone || k == remoteHTTP) {
				s.Remote = k
			}
			if c.readsRetryAfter(n) {
				s.RetryAfter = true
			}
			if i, stop := c.everyWork(n, d.Body, fn); i > 0 {
				s.EveryWork, s.EveryStop = i, stop
			}
			if i := c.libWork(n, d.Body, fn); i > 0 {
				s.LibWork = i
			} else if i := c.pollWork(n, d.Body, fn); i > 0 {
				s.LibWork, s.OwnLoop = i, true
			}
			if w, ok := c.wait(n, d.Body, fn); ok {
				waits = append(waits, n)
				found = append(found, w)
			}
		}
		return true
	})
	if s.LibWork == 0 {
		s.LibWork, s.LibPolicy, s.LibField = c.retryHelperWork(fn, d)
		s.OwnLoop = s.LibWork != 0
	}
	c.summarizeWaits(s, d.Body, waits, found)
	s.DeafCtx = c.deafCtxWaits(fn, d.Body, waits, found)
	c.summarizeResult(fn, d, s)
	c.summarizeVerdict(fn, d, s)
	c.summarizeStatusResult(fn, d, s)
	s.ChecksStatus = c.checksStatusBody(fn, d)
	s.PollCond = c.ownPollCond(fn, d)
	c.summarizeFolds(fn, d, s)
	c.summarizeBound(fn, d, s)
	s.Exits = c.endsInExit(d.Body)
	s.DeafOption = c.returnsSleeper(fn, d)
	c.summarizeHeld(fn, d, s)
	s.CtxOnly = c.summary[fn].CtxOnly // set once the other facts settle (summarize)
	return s
}

// summarizeWaits records in s how the function waits, from the waits found
// in body: whether it does (a timeout on an answer is no pause), whether
// deaf to a context, and how its durations are made.
func (c *checker) summarizeWaits(s *FuncFact, body *ast.BlockStmt, waits []*ast.CallExpr, found []waitInfo) {
	timeouts := c.timeoutWaits(body, waits)
	own := c.ownRetryWaits(body, waits)
	ownOnly, bgOnly := true, true
	defer func() { s.OwnRetry = s.Waits && ownOnly; s.BgDeaf = s.Deaf && bgOnly }()
	var jit []purity
	for i, w := range found {
		if timeouts[waits[i]] {
			continue
		}
		s.Waits = true
		ownOnly = ownOnly && (own[waits[i]] || w.ownRetry)
		if w.deaf && !c.ctxInScope(waits[i].Pos()) {
			s.Deaf, bgOnly = true, bgOnly && w.bg
		}
		jit = append(jit, w.dur)
	}
	if len(jit) == 0 {
		return
	}
	all := purity{kind: pNone} // the server's waits alone say nothing of jitter
	for _, p := range jit {
		all = all.and(p)
	}
	switch all.kind {
	case pPure:
		s.Jitter = jitterNone
		s.ByDefault = all.byDefault
	case pRand:
		s.Jitter = jitterYes
	case pParam:
		if i, ok := all.single(); ok {
			s.DurParam = i + 1
		} else {
			s.DurParams = all.params
		}
	case pField:
		s.DurField = all.field
	}
}

// fact returns what is known of the function a call calls, from this
// package's summaries or an imported fact.
func (c *checker) fact(fn *types.Func) *FuncFact {
	if fn == nil {
		return nil
	}
	if s, ok := c.summary[fn]; ok {
		return s
	}
	if fn.Pkg() == nil || fn.Pkg() == c.pass.Pkg {
		return nil
	}
	var f FuncFact
	if c.pass.ImportObjectFact(fn, &f) {
		return &f
	}
	return nil
}

func (c *checker) file(f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || (!testFiles && c.testHelper(fd)) {
			continue
		}
		fn, _ := c.info.Defs[fd.Name].(*types.Func)
		c.body(fd.Body, funcCtx{fn: fn, ftype: fd.Type, decl: fd.Body, own: fd.Body})
		rw, selfCalls := c.recursion(fd, fn)
		c.resolveByCallers(rw, fn) // a wait handed down by the callers (tryHTTPRequest(n, wait, …))
		c.reportNoJitter(rw)
		c.reportRecursionUnbounded(fd, fn, selfCalls)
		c.recursionRetryAfter(fd, fn, selfCalls)
		c.recursionEveryError(fd, fn)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				c.body(n.Body, funcCtx{ftype: n.Type, decl: fd.Body, own: n.Body, outer: fn})
			case *ast.CallExpr:
				c.backoffRetryAfter(n, fd.Body)
				c.helperOperation(n, fd.Body)
				c.pkgzRepeaterOp(n, fd.Body)
				c.pkgzMiddleware(n, fd.Body)
				c.pesterClient(n, fd.Body)
				c.retryGoRetryAfter(n, fd.Body)
				c.kRetryEveryError(n, fd.Body)
				c.ggcrRetryBackoff(n, fd.Body)
				c.cloudEventsRetries(n)
				c.libraryRetry(n, fd.Body, fn)
				c.pollRetry(n, fd.Body, fn)
				c.ownPollRetry(n, fd.Body)
				c.sleepHandedOn(n)
				c.retryableRetryAfter(n)
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			c.stacked(call, f)
		}
		return true
	})
}

// body checks one function body: its waits, and its loops (loops in
// function literals inside it are checked with the literal's body).
func (c *checker) body(b *ast.BlockStmt, fc funcCtx) {
	c.deafWaits(b, fc)
	c.bgUnbounded(b)
	labels := map[ast.Stmt]*ast.Ident{}
	ast.Inspect(b, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.LabeledStmt:
			labels[n.Stmt] = n.Label
		case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
			list, _ := stmtList(n)
			for _, g := range gotoLoops(list) {
				c.loop(g.loop, g.label, fc)
			}
		case *ast.ForStmt:
			c.loop(n, labels[n], fc)
		case *ast.RangeStmt:
			c.loop(n, labels[n], fc)
		}
		return true
	})
}

func (c *checker) add(f finding) {
	key := fmt.Sprintf("%s@%d", f.check, f.pos)
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.findings = append(c.findings, f)
}

// report applies the //recoil:ignore comments and reports what is left,
// and reports malformed ignore comments.
func (c *checker) report() {
	type lineKey struct {
		file string
		line int
	}
	ignores := map[lineKey][]string{}
	for _, f := range c.pass.Files {
		for _, cg := range f.Comments {
			for _, cm := range cg.List {
				check, _, isIgnore, err := parseIgnore(cm.Text)
				if !isIgnore {
					continue
				}
				if err != nil {
					c.pass.Report(analysis.Diagnostic{Pos: cm.Pos(), End: cm.End(), Category: CheckIgnore,
						Message: CheckIgnore + ": " + err.Error()})
					continue
				}
				p := c.pass.Fset.Position(cm.Pos())
				k := lineKey{p.Filename, p.Line}
				ignores[k] = append(ignores[k], check)
			}
		}
	}
	sort.Slice(c.findings, func(i, j int) bool {
		if c.findings[i].pos != c.findings[j].pos {
			return c.findings[i].pos < c.findings[j].pos
		}
		return c.findings[i].check < c.findings[j].check
	})
	for _, f := range c.findings {
		p := c.pass.Fset.Position(f.pos)
		silenced := false
		for _, line := range []int{p.Line, p.Line - 1} {
			for _, chk := range ignores[lineKey{p.Filename, line}] {
				if chk == f.check {
					silenced = true
				}
			}
		}
		if silenced {
			continue
		}
		c.pass.Report(analysis.Diagnostic{Pos: f.pos, End: f.end, Category: f.check,
			Message: f.check + ": " + f.msg, SuggestedFixes: f.fixes})
	}
}

// findParams fills c.params with the parameters of f's functions and
// function literals.
func (c *checker) findParams(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok && ft.Params != nil {
			for _, fld := range ft.Params.List {
				for _, name := range fld.Names {
					if v, ok := c.info.Defs[name].(*types.Var); ok {
						c.params[v] = true
					}
				}
			}
		}
		return true
	})
}

// isIterator reports whether fn returns a range-over-func iterator:
// func(yield func(...) bool).
func isIterator(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Results().Len() != 1 {
		return false
	}
	it, ok := sig.Results().At(0).Type().Underlying().(*types.Signature)
	if !ok || it.Params().Len() != 1 || it.Results().Len() != 0 {
		return false
	}
	yield, ok := it.Params().At(0).Type().Underlying().(*types.Signature)
	return ok && yield.Results().Len() == 1 && types.Identical(yield.Results().At(0).Type(), types.Typ[types.Bool])
}
