package leakcheck

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) { VerifyTestMain(m) }

// blocked starts a goroutine parked in parkHere until the returned stop is
// called, and waits until it runs; stop waits until it has returned.
func blocked(t *testing.T) (stop func()) {
	t.Helper()
	started, release := make(chan struct{}), make(chan struct{})
	var done sync.WaitGroup
	done.Go(func() { parkHere(started, release) })
	<-started
	var once sync.Once
	stop = func() { once.Do(func() { close(release); done.Wait() }) }
	t.Cleanup(stop)
	return stop
}

//go:noinline
func parkHere(started chan<- struct{}, release <-chan struct{}) {
	close(started)
	<-release
}

const parkName = "github.com/recoil-go/recoil/internal/leakcheck.parkHere"

// short is the wait for a goroutine that is known to stay: looking once is
// enough, and the result does not depend on the machine's pace. A look this
// short may also catch the test runner between two states (a runnable
// testing.(*T).Run), so the tests below ask whether parkHere is among the
// goroutines reported, never for an exact count.
var short = MaxWait(0)

// reported reports whether err names parkHere's goroutine.
func reported(err error) bool {
	return err != nil && strings.Contains(err.Error(), parkName)
}

func TestFindReportsALeakedGoroutine(t *testing.T) {
	blocked(t)
	err := Find(short)
	var le *Error
	if !errors.As(err, &le) || le.Leaked() < 1 {
		t.Fatalf("Find() = %v, want an *Error with at least one goroutine", err)
	}
	if !reported(err) {
		t.Errorf("Find() = %q, want the stack to name %s", err, parkName)
	}
	// The state is "chan receive" once parkHere blocks, "runnable" an
	// instant before: either is reported.
	if !regexp.MustCompile(`goroutine \d+ \[(chan receive|runnable|running)\], ` + regexp.QuoteMeta(parkName)).MatchString(err.Error()) {
		t.Errorf("Find() = %q, want parkHere's goroutine id and state", err)
	}
}

func TestFindIgnoresAFinishedGoroutine(t *testing.T) {
	stop := blocked(t)
	stop()
	if err := Find(); err != nil {
		t.Errorf("Find() after the goroutine returned = %v, want nil", err)
	}
}

// TestFindWaitsForAGoroutineToFinish: a goroutine still running when the
// check starts but stopped while it looks again is not reported.
func TestFindWaitsForAGoroutineToFinish(t *testing.T) {
	stop := blocked(t)
	// observe stops the goroutine the first time the check looks at it, so
	// the check has seen it running and must look again to pass.
	var once sync.Once
	observe := Option(func(c *config) {
		c.ignore = append(c.ignore, func(g goroutine) bool {
			if g.top() == parkName {
				once.Do(func() { go stop() })
			}
			return false
		})
	})
	if err := Find(MaxWait(time.Minute), observe); err != nil {
		t.Errorf("Find() = %v, want nil once the goroutine returned", err)
	}
}

func TestIgnoreOptions(t *testing.T) {
	blocked(t)
	const caller = "github.com/recoil-go/recoil/internal/leakcheck.blocked.func1"
	for _, tc := range []struct {
		name     string
		opt      Option
		reported bool
	}{
		{"no option", MaxWait(0), true},
		{"IgnoreTopFunction the top", IgnoreTopFunction(parkName), false},
		{"IgnoreTopFunction a caller", IgnoreTopFunction(caller), true},
		{"IgnoreTopFunction a prefix", IgnoreTopFunction(parkName[:len(parkName)-4]), true},
		{"IgnoreAnyFunction the top", IgnoreAnyFunction(parkName), false},
		{"IgnoreAnyFunction a caller", IgnoreAnyFunction(caller), false},
		{"IgnoreAnyFunction the creator", IgnoreAnyFunction("sync.(*WaitGroup).Go"), true},
		{"IgnoreAnyFunction another", IgnoreAnyFunction("net/http.(*Server).Serve"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Find(short, tc.opt)
			if got := reported(err); got != tc.reported {
				t.Errorf("Find(%s) reported parkHere = %v, want %v\n%v", tc.name, got, tc.reported, err)
			}
		})
	}
}

func TestIgnoreCurrent(t *testing.T) {
	blocked(t)
	ignore := IgnoreCurrent()
	if err := Find(short, ignore); reported(err) {
		t.Errorf("Find(IgnoreCurrent()) = %v, want no goroutine running before", err)
	}
	blocked(t)
	if err := Find(short, ignore); !reported(err) {
		t.Errorf("Find(IgnoreCurrent()) = %v, want the goroutine started after", err)
	}
}

// recorder is a TB that keeps what it was told.
type recorder struct {
	errs []string
}

func (*recorder) Helper() {}
func (r *recorder) Error(args ...any) {
	for _, a := range args {
		r.errs = append(r.errs, a.(error).Error())
	}
}

func TestVerifyNone(t *testing.T) {
	ignore := IgnoreCurrent()
	var r recorder
	VerifyNone(&r, ignore)
	if len(r.errs) != 0 {
		t.Errorf("VerifyNone with nothing started reported %q", r.errs)
	}
	blocked(t)
	VerifyNone(&r, ignore, short)
	if len(r.errs) != 1 || !reported(errors.New(r.errs[0])) {
		t.Errorf("VerifyNone with a goroutine left reported %q, want one error naming %s", r.errs, parkName)
	}
}

// fakeM runs tests by calling run.
type fakeM func() int

func (f fakeM) Run() int { return f() }

func TestVerifyTestMain(t *testing.T) {
	stderrWas, exitWas := stderr, exit
	t.Cleanup(func() { stderr, exit = stderrWas, exitWas })
	var out bytes.Buffer
	stderr = &out
	var code int
	exit = func(c int) { code = c }

	ignore := IgnoreCurrent()
	for _, tc := range []struct {
		name     string
		run      int  // what the tests return
		leak     bool // whether they leave a goroutine
		want     int
		wantText string
	}{
		{"passed, nothing left", 0, false, 0, ""},
		{"failed, nothing left", 3, false, 3, ""},
		{"passed, a goroutine left", 0, true, 1, parkName},
		{"failed, a goroutine left", 2, true, 2, ""}, // the failure is the news
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			wait := MaxWait(DefaultMaxWait) // until the runner's goroutines settle
			if tc.leak {
				wait = short
			}
			VerifyTestMain(fakeM(func() int {
				if tc.leak {
					blocked(t)
				}
				return tc.run
			}), ignore, wait)
			if code != tc.want {
				t.Errorf("exit code = %d, want %d", code, tc.want)
			}
			if tc.wantText == "" && out.Len() != 0 {
				t.Errorf("stderr = %q, want nothing", out.String())
			}
			if tc.wantText != "" && !strings.Contains(out.String(), tc.wantText) {
				t.Errorf("stderr = %q, want it to name %s", out.String(), tc.wantText)
			}
		})
	}
}

func TestParse(t *testing.T) {
	dump := `goroutine 1 [running]:
main.main()
	/src/main.go:5 +0x1d

goroutine 7 [chan receive, 2 minutes]:
example.com/p.(*S).loop(0xc000010000, {0x1, 0x2})
	/src/p/s.go:40 +0x45
example.com/p.New.func1(...)
	/src/p/s.go:20
created by example.com/p.New in goroutine 1
	/src/p/s.go:19 +0x8f
`
	gs := parse(dump)
	if len(gs) != 2 {
		t.Fatalf("parse() = %d goroutines, want 2", len(gs))
	}
	g := gs[1]
	if g.id != 7 || g.state != "chan receive, 2 minutes" {
		t.Errorf("header = %d [%s], want 7 [chan receive, 2 minutes]", g.id, g.state)
	}
	if got, want := strings.Join(g.funcs, " "), "example.com/p.(*S).loop example.com/p.New.func1"; got != want {
		t.Errorf("funcs = %q, want %q", got, want)
	}
	if g.has("example.com/p.New") {
		t.Error(`has("example.com/p.New") = true, want false: the creator is not on the stack`)
	}
}

func TestIgnoredByDefault(t *testing.T) {
	for _, tc := range []struct {
		g    goroutine
		want bool
	}{
		{goroutine{state: "chan receive", funcs: []string{"testing.(*T).Run", "main.main"}}, true},
		{goroutine{state: "running", funcs: []string{"testing.(*T).Run"}}, false},
		{goroutine{state: "chan receive", funcs: []string{"testing.(*T).Parallel"}}, true},
		{goroutine{state: "chan receive", funcs: []string{"testing.runFuzzing"}}, true},
		{goroutine{state: "select", funcs: []string{"os/signal.signal_recv", "os/signal.loop"}}, true},
		{goroutine{state: "select", funcs: []string{"os/signal.loop"}}, true},
		{goroutine{state: "chan receive", funcs: []string{"runtime.ensureSigM.func1"}}, false},
		{goroutine{state: "select", funcs: []string{"x", "runtime.ensureSigM"}}, true},
		{goroutine{state: "syscall", funcs: []string{"x", "runtime.goexit"}}, true},
		{goroutine{state: "chan receive", funcs: []string{"runtime.ReadTrace", "runtime/trace.Start.func1"}}, true},
		{goroutine{state: "chan receive", funcs: []string{"example.com/p.loop"}}, false},
	} {
		if got := ignoredByDefault(tc.g); got != tc.want {
			t.Errorf("ignoredByDefault(%v [%s]) = %v, want %v", tc.g.funcs, tc.g.state, got, tc.want)
		}
	}
}
