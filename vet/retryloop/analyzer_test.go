package retryloop_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis/analysistest"
)

// casePackages are the testdata packages checked against their // want
// comments; all but sleeper (a helper package whose facts are checked)
// hold labelled cases: "// case: flag <check>..." or "// case: clean" on
// each case function, what a careful reviewer would report.
var casePackages = []string{"loops", "sdk", "clean", "usesleeper", "stacked", "ignores", "hard", "more", "sleeper", "shapes", "fixes", "testfiles", "reads", "pacer", "usepacer", "decorate", "settings", "decide", "statuses", "copyopts", "joins", "chains", "picks", "through", "reconnects", "backoffops", "rhflag", "rhclean", "libretries", "kretries", "retrywrap", "useretrywrap", "innerwait", "classify", "tries", "flagexit", "answers", "kpolls", "readcreate", "cenkaltis", "libscheds", "mixedwaits", "optctors", "tickers", "closurewaits", "failovers", "handoffs", "clocks", "members", "gotos", "worklits", "checks", "handedin", "zerojitter", "aliases", "notyet", "shutdowns", "selfverdict", "goerrs", "harness", "wrapreq", "nofail", "ownctx", "watchadd", "sentinel", "usesentinel", "handedget", "serverwaits", "stopbounds", "packetservers", "ownctxiface", "pkgerrs", "forever", "factors", "retrycfg", "userecurse", "grpccodes", "stopctx", "streams", "ownretry", "inprocess", "drivercodes", "exits", "pacedpolls", "servertold", "eofpolls", "gates", "ownproc", "aliasctx", "offlinedb", "onlinedb", "namedstatus", "ifaceremote", "firsttry", "backoffevery", "pacedselect", "swaggerops", "ifacelocal", "groupctx", "pollfolds", "acceptretry", "resignal", "crosssetting", "optimistic", "batchretry", "hotretry", "serverbackoff", "methodvalues", "madecall", "pauses", "informers", "paramjitter", "ownlisten", "opaqueverdict", "doers", "doerfolds", "rewraps", "localwaits", "definedfrom", "assertnil", "sleepsignal", "typedstatus", "truncjitter", "policyparams", "cenkaltistop", "clonedcfg", "retrygora", "registryopts", "kretryctx", "verdictcount", "defaultpoll", "settingpoll", "alltrue", "firstround", "notyettext", "chainedcmd", "nakedpoll", "deafoption", "sleepvar", "kretryevery", "bgdeaf", "ceretries", "pkgzrepeat", "okpairs", "retrygohttp", "pesters", "tunnelwait", "cenkwrap", "usecenkwrap", "raonly", "deciders", "dialvia", "peekticker", "ctxlike", "ginctx", "recurstatus", "checkresp", "ownpoll", "waitnext", "resetretrier", "heldpolicy", "reqdeadline", "bgctx", "hotstatus", "ctxaccessor", "ctxrecurse", "kinderr", "deafhanded", "ownkind", "startedpoll", "zerofield", "waitingcall", "closewait", "tuplestatus", "namedfold", "reconnectlabel", "leaderredirect", "fieldctx", "netonly", "uncounted", "closeflag", "headerwait", "owndeadline", "bgrequest", "statuswrapper", "sessionctx", "mqtttoken", "procdone", "clockticker", "memberfield", "fastclient", "wraperr", "retrygov5", "timerretry", "heartbeat", "pkgopts"}

// recorder is an analysistest.Testing that keeps what it is told, so that
// one (slow: it type-checks net/http) run serves every test.
type recorder struct {
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

var (
	runOnce sync.Once
	results []*analysistest.Result
	runErrs *recorder
)

func run(t *testing.T) ([]*analysistest.Result, []string) {
	t.Helper()
	runOnce.Do(func() {
		runErrs = &recorder{}
		results = analysistest.Run(runErrs, analysistest.TestData(), retryloop.Analyzer, casePackages...)
	})
	return results, runErrs.errs
}

// TestAnalyzer checks every diagnostic and fact against the testdata's
// // want comments.
func TestAnalyzer(t *testing.T) {
	_, errs := run(t)
	for _, e := range errs {
		t.Error(e)
	}
}

// counts are one check's confusion counts over the labelled cases.
type counts struct{ TP, FP, FN, TN int }

func (c counts) precision() float64 { return ratio(c.TP, c.TP+c.FP) }
func (c counts) recall() float64    { return ratio(c.TP, c.TP+c.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// measure scores the analyzer on the labelled cases: for each case
// function and each check, whether the label says flag and whether a
// diagnostic of that check falls inside the function.
func measure(t *testing.T) (map[string]counts, int) {
	t.Helper()
	res, _ := run(t)
	by := map[string]counts{}
	cases := 0
	for _, r := range res {
		if r.Pass == nil {
			continue
		}
		for _, f := range r.Pass.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Doc == nil {
					continue
				}
				want, ok := label(fd.Doc.Text())
				if !ok {
					continue
				}
				cases++
				got := map[string]bool{}
				for _, diag := range r.Diagnostics {
					if diag.Pos >= fd.Pos() && diag.Pos < fd.End() {
						got[diag.Category] = true
					}
				}
				for _, check := range retryloop.Checks {
					c := by[check]
					switch w, g := slices.Contains(want, check), got[check]; {
					case w && g:
						c.TP++
					case w:
						c.FN++
						t.Logf("missed %s in %s", check, pos(r.Pass.Fset, fd))
					case g:
						c.FP++
						t.Logf("false %s in %s", check, pos(r.Pass.Fset, fd))
					default:
						c.TN++
					}
					by[check] = c
				}
			}
		}
	}
	return by, cases
}

func pos(fset *token.FileSet, fd *ast.FuncDecl) string {
	p := fset.Position(fd.Pos())
	return fmt.Sprintf("%s (%s:%d)", fd.Name.Name, p.Filename[strings.LastIndex(p.Filename, "testdata/"):], p.Line)
}

// label parses a case function's doc comment.
func label(doc string) ([]string, bool) {
	for _, line := range strings.Split(doc, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "case:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, false
		}
		switch f[0] {
		case "clean":
			return nil, true
		case "flag":
			return f[1:], true
		}
	}
	return nil, false
}

// TestPrecisionRecall pins the analyzer's precision and recall, check by
// check, on the labelled cases; docs/vet.md states these numbers.
func TestPrecisionRecall(t *testing.T) {
	got, cases := measure(t)
	want := map[string]counts{
		retryloop.CheckUnclassified: {TP: 75, FP: 0, FN: 1, TN: 795},
		retryloop.CheckNoJitter:     {TP: 341, FP: 2, FN: 0, TN: 528},
		retryloop.CheckDeafWait:     {TP: 107, FP: 0, FN: 0, TN: 764},
		retryloop.CheckUnbounded:    {TP: 71, FP: 0, FN: 0, TN: 800},
		retryloop.CheckRetryAfter:   {TP: 146, FP: 0, FN: 0, TN: 725},
		retryloop.CheckStacked:      {TP: 5, FP: 0, FN: 1, TN: 865},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d labelled cases\n| check | TP | FP | FN | TN | precision | recall |\n|---|---|---|---|---|---|---|\n", cases)
	checks := slices.Clone(retryloop.Checks)
	sort.Strings(checks)
	for _, c := range checks {
		g := got[c]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.2f | %.2f |\n", c, g.TP, g.FP, g.FN, g.TN, g.precision(), g.recall())
		if g != want[c] {
			t.Errorf("%s: got %+v, want %+v", c, g, want[c])
		}
	}
	t.Log("\n" + b.String())
}

func TestLabelsParse(t *testing.T) {
	tests := []struct {
		doc  string
		want []string
		ok   bool
	}{
		{"case: clean\n", nil, true},
		{"Some words.\ncase: flag nojitter deafwait\n", []string{"nojitter", "deafwait"}, true},
		{"no label\n", nil, false},
		{"case:\n", nil, false},
	}
	for _, tt := range tests {
		got, ok := label(tt.doc)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("label(%q) = %v, %v, want %v, %v", tt.doc, got, ok, tt.want, tt.ok)
		}
	}
}
