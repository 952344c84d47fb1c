package leakcheck

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxWait is how long a check waits, by default, for goroutines to
// finish before it reports them as leaked.
const DefaultMaxWait = 5 * time.Second

// An Option changes what a check ignores or how long it waits.
type Option func(*config)

type config struct {
	ignore  []func(goroutine) bool
	maxWait time.Duration
}

// IgnoreTopFunction ignores goroutines whose stack has the function f on top,
// named as a stack trace names it: "net/http.(*persistConn).readLoop",
// "internal/poll.runtime_pollWait".
func IgnoreTopFunction(f string) Option {
	return func(c *config) {
		c.ignore = append(c.ignore, func(g goroutine) bool { return g.top() == f })
	}
}

// IgnoreAnyFunction ignores goroutines that have the function f anywhere in
// their stack, named as a stack trace names it.
func IgnoreAnyFunction(f string) Option {
	return func(c *config) {
		c.ignore = append(c.ignore, func(g goroutine) bool { return g.has(f) })
	}
}

// IgnoreCurrent ignores the goroutines running when it is called, so that a
// check made later reports only those started since.
func IgnoreCurrent() Option {
	ids := make(map[uint64]bool)
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return func(c *config) {
		c.ignore = append(c.ignore, func(g goroutine) bool { return ids[g.id] })
	}
}

// MaxWait sets how long a check looks again for goroutines to finish before
// it reports them; d <= 0 looks once.
func MaxWait(d time.Duration) Option {
	return func(c *config) { c.maxWait = d }
}

// Find returns an error listing each goroutine, other than the caller and
// those the options or the defaults ignore, still running once the wait is
// over; nil if there is none.
func Find(opts ...Option) error {
	c := config{maxWait: DefaultMaxWait}
	for _, o := range opts {
		o(&c)
	}
	self := currentID()
	deadline := time.Now().Add(c.maxWait)
	pause := time.Microsecond
	for {
		leaked := c.leaked(goroutines(), self)
		if len(leaked) == 0 {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return leakError(leaked)
		}
		wait(min(pause, left))
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// wait pauses the checking goroutine for d.
func wait(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
}

func (c *config) leaked(all []goroutine, self uint64) []goroutine {
	var out []goroutine
	for _, g := range all {
		if g.id == self || ignoredByDefault(g) {
			continue
		}
		ignored := false
		for _, ig := range c.ignore {
			if ig(g) {
				ignored = true
				break
			}
		}
		if !ignored {
			out = append(out, g)
		}
	}
	return out
}

func leakError(leaked []goroutine) error {
	var b strings.Builder
	fmt.Fprintf(&b, "found %d unexpected goroutine(s):\n", len(leaked))
	for _, g := range leaked {
		fmt.Fprintf(&b, "\ngoroutine %d [%s], %s on top of the stack:\n%s", g.id, g.state, g.top(), g.stack)
	}
	return &Error{msg: b.String(), n: len(leaked)}
}

// Error is what Find returns when goroutines leaked.
type Error struct {
	msg string
	n   int
}

func (e *Error) Error() string { return e.msg }

// Leaked reports how many goroutines were found running.
func (e *Error) Leaked() int { return e.n }

// TB is the part of testing.TB that VerifyNone uses.
type TB interface {
	Helper()
	Error(args ...any)
}

// VerifyNone marks the test failed, with each leaked goroutine's stack, if
// goroutines are still running once the wait is over. Called in a
// t.Cleanup registered first, it runs after the test's other cleanups:
//
//	ignore := leakcheck.IgnoreCurrent()
//	t.Cleanup(func() { leakcheck.VerifyNone(t, ignore) })
func VerifyNone(t TB, opts ...Option) {
	t.Helper()
	if err := Find(opts...); err != nil {
		t.Error(err)
	}
}

// M is the part of *testing.M that VerifyTestMain uses.
type M interface {
	Run() int
}

// exit and stderr are replaced by this package's tests.
var (
	exit             = os.Exit
	stderr io.Writer = os.Stderr
)

// VerifyTestMain runs the tests and exits with their code; if they passed
// but goroutines are still running once the wait is over, it prints each
// one's stack to standard error and exits with 1.
func VerifyTestMain(m M, opts ...Option) {
	exit(verifyTestMain(m, opts...))
}

func verifyTestMain(m M, opts ...Option) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if err := Find(opts...); err != nil {
		fmt.Fprintf(stderr, "leakcheck: the tests passed but left goroutines running: %v\n", err)
		return 1
	}
	return 0
}

// goroutine is one goroutine of a stack dump.
type goroutine struct {
	id    uint64
	state string   // "chan receive", "select", "running", ...
	funcs []string // the functions on its stack, the top first
	stack string   // the dump's lines for it, header excluded
}

func (g goroutine) top() string {
	if len(g.funcs) == 0 {
		return ""
	}
	return g.funcs[0]
}

func (g goroutine) has(f string) bool {
	for _, s := range g.funcs {
		if s == f {
			return true
		}
	}
	return false
}

// ignoredByDefault reports the goroutines of the test runner, the fuzzing
// engine and the runtime that run beside every test, as goleak does.
func ignoredByDefault(g goroutine) bool {
	switch g.top() {
	case "testing.RunTests", "testing.(*T).Run", "testing.(*T).Parallel",
		"testing.runFuzzing", "testing.runFuzzTests", "testing.(*F).Fuzz":
		// Waiting on subtests, on the serial tests before a parallel one,
		// or on the fuzzing workers.
		return strings.HasPrefix(g.state, "chan receive")
	case "os/signal.signal_recv", "os/signal.loop":
		return true
	}
	switch {
	case g.has("runtime.ensureSigM"): // signal.Notify's runtime goroutine
		return true
	case g.has("runtime.ReadTrace"): // the execution tracer's reader
		return true
	case g.has("runtime.goexit") && strings.HasPrefix(g.state, "syscall"):
		// A goroutine parked in a cgo callback's system call.
		return true
	}
	return false
}

// goroutines returns every goroutine's stack, as runtime.Stack dumps them.
func goroutines() []goroutine {
	return parse(dump(true))
}

// currentID returns the calling goroutine's id.
func currentID() uint64 {
	gs := parse(dump(false))
	if len(gs) == 0 {
		return 0
	}
	return gs[0].id
}

func dump(all bool) string {
	for n := 64 << 10; ; n *= 2 {
		buf := make([]byte, n)
		if m := runtime.Stack(buf, all); m < n {
			return string(buf[:m])
		}
	}
}

// parse splits a runtime.Stack dump into goroutines. A dump is a list of
// blocks separated by blank lines, each
//
//	goroutine 7 [chan receive, 2 minutes]:
//	pkg.fn(0x1, ...)
//		/path/file.go:12 +0x1f
//	created by pkg.start in goroutine 1
//		/path/file.go:30 +0x2b
//
// The function named after "created by" started the goroutine and is not
// on its stack.
func parse(dump string) []goroutine {
	var out []goroutine
	for _, block := range strings.Split(dump, "\n\n") {
		header, body, _ := strings.Cut(strings.TrimLeft(block, "\n"), "\n")
		g, ok := parseHeader(header)
		if !ok {
			continue
		}
		g.stack = body
		for _, line := range strings.Split(body, "\n") {
			if line == "" || line[0] == '\t' || strings.HasPrefix(line, "...") {
				continue
			}
			if strings.HasPrefix(line, "created by ") {
				break
			}
			if i := strings.LastIndexByte(line, '('); i > 0 {
				line = line[:i]
			}
			g.funcs = append(g.funcs, line)
		}
		out = append(out, g)
	}
	return out
}

// parseHeader reads "goroutine 7 [chan receive, 2 minutes]:".
func parseHeader(line string) (goroutine, bool) {
	rest, ok := strings.CutPrefix(line, "goroutine ")
	if !ok {
		return goroutine{}, false
	}
	idText, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return goroutine{}, false
	}
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil {
		return goroutine{}, false
	}
	state := strings.TrimSuffix(rest, ":")
	state = strings.TrimSuffix(strings.TrimPrefix(state, "["), "]")
	return goroutine{id: id, state: state}, true
}
