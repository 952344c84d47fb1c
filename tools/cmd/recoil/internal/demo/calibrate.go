package demo

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// How long the calibrator's runs last, counted from the callers' first
// attempts, which leave together (startGate): a pace run paceWindows
// windows and calibrationSlack, to count the windows after the first (in
// which the connections open) and before the last (which the run's end
// cuts short); a lone caller loneRun, about 25 cycles of 20 ms. What a run
// measures is an average over its span; the machine drifts far more than
// that between the paces before the rows and after (357 µs and 646 µs an
// attempt in one demo), which the prediction's band spans.
//
// The span is counted from the first attempts, not from the run's start:
// a machine busy with other work (or the race detector) takes a second
// or more to start 200 callers, and a run bounded from its start then
// ended before they had sent anything, or with too few windows to count
// ("the calibration run sent nothing", "was too short to measure"): the
// slower the machine, the surer the calibration failed. calibrationLimit
// bounds a run whose callers never all start.
const (
	paceWindows      = 3
	calibrationSlack = 50 * time.Millisecond
	loneRun          = 500 * time.Millisecond
	calibrationLimit = time.Minute
)

// calibrationCallers is how many callers the calibrator saturates the
// machine with (or the row's callers, if more).
const calibrationCallers = 200

// Machine is what the calibrator measured of this machine: how much it can
// carry, and what an attempt costs a lone caller. The simulator models the
// loopback with it — a transport that carries one attempt at a time for
// PerAttempt (sim.Serial), and a gateway that answers in RoundTrip — so
// that what a run can send on this machine (200 callers retrying every
// 20 ms ask for 10,000 attempts a second) bounds the prediction as it
// bounds the count.
type Machine struct {
	// PerAttempt is the machine's time per attempt when it is the
	// bottleneck: the windows counted over the attempts the gateway
	// counted in them from calibrationCallers callers retrying every 20 ms.
	PerAttempt time.Duration
	// RoundTrip is what an attempt adds to a lone caller's 20 ms cycle
	// beyond PerAttempt: the answer's way back and the caller's wake-up
	// after its wait, which a busy machine makes late.
	RoundTrip time.Duration
	// PerAttemptAfter is PerAttempt measured again after the rows' runs;
	// zero if the runs were interrupted or it could not be measured.
	PerAttemptAfter time.Duration
}

// calibrator measures the machine (see Machine) for each group of rows —
// the rows of one number of callers — with runs against a gateway that is
// down throughout, sending attempts exactly as the demo's runs do:
// max(n, calibrationCallers) callers retrying every 20 ms for the pace,
// and one for a lone caller's cycle. It measures nothing twice: the pace
// measured after one group's rows is the pace before the next group's when
// both saturate the machine with as many callers (the same measurement, a
// moment apart), and a lone caller's cycle is measured once, by the first
// group. Each group still has the pace measured before its rows and after.
type calibrator struct {
	cfg    Config
	lone   time.Duration // a lone caller's cycle; zero until measured
	pace   time.Duration // the last pace measured; zero if none, or it failed
	paceOf int           // the callers pace was measured with
}

// before returns the machine the rows of n callers are predicted on,
// measuring what it cannot take from the previous group.
func (c *calibrator) before(ctx context.Context, n int) (Machine, error) {
	per := c.pace
	if per == 0 || c.paceOf != max(n, calibrationCallers) {
		var err error
		if per, err = c.measurePace(ctx, n); err != nil {
			return Machine{}, err
		}
	}
	if c.lone == 0 {
		one, _, err := countDown(ctx, c.cfg, 1, loneRun)
		if err != nil {
			return Machine{}, err
		}
		c.lone = one
	}
	wait, _ := policyspec.Preset(load.PresetImmediate)
	return Machine{PerAttempt: per, RoundTrip: max(0, c.lone-wait.Backoff.Base-per)}, nil
}

// after measures the pace again after the rows of n callers
// (Machine.PerAttemptAfter).
func (c *calibrator) after(ctx context.Context, n int) (time.Duration, error) {
	return c.measurePace(ctx, n)
}

// measurePace measures the pace with max(n, calibrationCallers) callers
// (perAttempt) and keeps it for the next group.
func (c *calibrator) measurePace(ctx context.Context, n int) (time.Duration, error) {
	per, err := perAttempt(ctx, c.cfg, n)
	c.pace, c.paceOf = 0, 0
	if err == nil {
		c.pace, c.paceOf = per, max(n, calibrationCallers)
	}
	return per, err
}

// perAttempt measures Machine.PerAttempt: max(n, calibrationCallers)
// callers retrying every 20 ms against a gateway that is down throughout.
func perAttempt(ctx context.Context, cfg Config, n int) (time.Duration, error) {
	_, windows, err := countDown(ctx, cfg, max(n, calibrationCallers), paceWindows*cfg.Window+calibrationSlack)
	if err != nil {
		return 0, err
	}
	// The windows after the first, in which the connections were opened,
	// and before the one the run's end cut short: the gateway's series
	// goes on, empty, until it is read.
	last := min(len(windows)-1, paceWindows)
	if last < 2 {
		return 0, errors.New("demo: the calibration run was too short to measure")
	}
	var sum int64
	for _, a := range windows[1:last] {
		sum += a
	}
	if sum == 0 {
		return 0, errors.New("demo: the calibration run sent nothing")
	}
	return cfg.Window * time.Duration(last-1) / time.Duration(sum), nil
}

// errCounted ends a calibration run that has counted what it needs.
var errCounted = errors.New("demo: calibration run counted")

// countDown runs n callers of the immediate preset against a gateway that
// is down throughout, until span after their first attempts left (or
// calibrationLimit from the start, if sooner), and returns the time between
// the first attempt sent and the last, over the attempts in between (the
// time per attempt), and the attempts the gateway counted in each window.
func countDown(ctx context.Context, cfg Config, n int, span time.Duration) (time.Duration, []int64, error) {
	pol, err := load.Preset(load.PresetImmediate)
	if err != nil {
		return 0, nil, err
	}
	g, err := gateway.New(gateway.Config{Window: cfg.Window, Outages: []gateway.Outage{{Duration: time.Hour}}})
	if err != nil {
		return 0, nil, err
	}
	url, stop, err := g.Start()
	if err != nil {
		return 0, nil, err
	}
	base := newBase(n)
	defer base.CloseIdleConnections()
	gate := newStartGate(base, n)
	runCtx, cancel := context.WithCancelCause(ctx)
	ended := endAfterOpen(runCtx, cancel, gate, span)
	_, err = load.Run(runCtx, load.Config{
		URL: url + "/v1/charges", Callers: n, Duration: calibrationLimit,
		Policy: pol, Window: cfg.Window, Seed: cfg.Seed, Base: gate,
	})
	cancel(nil)
	<-ended
	if errors.Is(err, errCounted) && ctx.Err() == nil {
		err = nil
	}
	st := g.Stats()
	if serr := stop(); serr != nil {
		return 0, nil, serr
	}
	if err != nil {
		return 0, nil, err
	}
	pace := gate.pace()
	if pace <= 0 {
		return 0, nil, errors.New("demo: the calibration run sent fewer than two attempts")
	}
	var windows []int64
	for _, w := range st.Series {
		windows = append(windows, w.Attempts)
	}
	return pace, windows, nil
}

// endAfterOpen ends ctx with errCounted span after gate opens, or later
// once the gate has sent paceAttempts: a lone caller on a machine so busy
// that one attempt's round trip takes longer than span still sends enough
// to measure (calibrationLimit bounds the run). The channel it returns is
// closed once it no longer will.
func endAfterOpen(ctx context.Context, cancel context.CancelCauseFunc, gate *startGate, span time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-gate.open:
		case <-ctx.Done():
			return
		}
		t := time.NewTimer(span)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		select {
		case <-gate.counted:
			cancel(errCounted)
		case <-ctx.Done():
		}
	}()
	return done
}

// newBase returns the transport a run's callers send their attempts over,
// with a connection per caller.
func newBase(n int) *http.Transport {
	conns := max(n, 64)
	return &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second}
}
