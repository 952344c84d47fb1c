package sim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
)

// Result is what Run found: one RunResult per sweep value and policy, in
// that order (the policies of the first value, then of the next).
type Result struct {
	Scenario    string        `json:"scenario"`
	Description string        `json:"description,omitempty"`
	Seed        uint64        `json:"seed"`
	Window      time.Duration `json:"-"`
	// Target is the service whose attempts and peak the runs report.
	Target string `json:"target"`
	// SweepPath is the swept field, if any.
	SweepPath string      `json:"sweep,omitempty"`
	Runs      []RunResult `json:"runs"`
}

// RunResult is one run: one policy, at one sweep value.
type RunResult struct {
	Policy     string `json:"policy"`
	SweepValue string `json:"sweep_value,omitempty"`
	// End is the virtual instant the run ended: when nothing was left to do,
	// or the scenario's duration.
	End time.Duration `json:"-"`
	// Events is the number of events simulated.
	Events uint64 `json:"events"`
	// Calls, Succeeded, Failed and Unfinished count clients' logical calls
	// begun after the warmup.
	Calls      int64 `json:"calls"`
	Succeeded  int64 `json:"succeeded"`
	Failed     int64 `json:"failed"`
	Unfinished int64 `json:"unfinished"`
	// Resubmitted counts calls begun again by closed-loop callers.
	Resubmitted int64 `json:"resubmitted,omitempty"`
	// Attempts and Peak are the target's arrivals, in all and in the
	// busiest window.
	Attempts int64 `json:"attempts"`
	Peak     int64 `json:"peak"`
	// Goodput is successful calls per second, after the warmup.
	Goodput float64 `json:"goodput_per_s"`
	// Latency is that of every finished call, successful or not.
	Latency  Percentiles     `json:"latency"`
	Clients  []ClientResult  `json:"clients"`
	Services []ServiceResult `json:"services"`
}

// ClientResult is one client's calls in a run.
type ClientResult struct {
	Name       string `json:"name"`
	Endpoint   string `json:"endpoint"`
	Calls      int64  `json:"calls"`
	Succeeded  int64  `json:"succeeded"`
	Failed     int64  `json:"failed"`
	Unfinished int64  `json:"unfinished"`
	// Resubmitted counts calls a closed-loop caller gave up on and began
	// again (ClientSpec.Resubmit); the call counts once, and its latency
	// runs from the first beginning to the end of the last.
	Resubmitted int64 `json:"resubmitted,omitempty"`
	// FailedBy counts why calls stopped without success, resubmitted ones
	// included.
	FailedBy map[string]int64 `json:"failed_by,omitempty"`
	// LikelyWon prices the calls a guard stopped, by the reason in
	// FailedBy ("circuit open", "retry budget exhausted"): the answers
	// their refused attempts would likely have had, at the success rate
	// the target showed at the time (over its last 20 or more attempts).
	// It is what each guard cost, to set beside what it saved.
	LikelyWon map[string]float64 `json:"likely_won,omitempty"`
	// Attempts counts the client's own attempts; Throttled, those answered
	// 429, over an allowance or for a spent quota.
	Attempts  int64       `json:"attempts"`
	Throttled int64       `json:"throttled"`
	Goodput   float64     `json:"goodput_per_s"`
	Latency   Percentiles `json:"latency"`
	// MostAttempts is the most attempts one call made, on every target
	// together; counted for calls under a policy that falls back or
	// hedges, zero otherwise.
	MostAttempts int64 `json:"most_attempts,omitempty"`
	// Hedges counts the hedges the calls started, RefusedHedges those the
	// budget, limiter, breaker or deadline refused, and Wasted the
	// attempts dropped in flight when another answered or decided the
	// call (recoil.Summary's, added up).
	Hedges        int64 `json:"hedges,omitempty"`
	RefusedHedges int64 `json:"refused_hedges,omitempty"`
	Wasted        int64 `json:"wasted,omitempty"`
}

// ServiceResult is one service in a run.
type ServiceResult struct {
	Name    string `json:"name"`
	Workers int    `json:"workers,omitempty"`
	// Arrivals counts attempts that reached it (reads, for a record).
	Arrivals int64 `json:"arrivals"`
	// ArrivalsBy and ThrottledBy break arrivals and 429s down by endpoint.
	ArrivalsBy  map[string]int64 `json:"arrivals_by,omitempty"`
	ThrottledBy map[string]int64 `json:"throttled_by,omitempty"`
	// Served counts attempts that got a worker; Writes, a record's writes.
	Served    int64 `json:"served"`
	Writes    int64 `json:"writes,omitempty"`
	Succeeded int64 `json:"succeeded"`
	Throttled int64 `json:"throttled"`
	// Failures counts attempts answered with anything but success, by kind:
	// "500", "400", "429", "down", "overloaded" (an outage answering 503
	// or 529), "429 quota", "404", "401", "dropped", "queue full",
	// "502", "503", "expired", "conflict", "cancelled" (the caller left and
	// the worker stopped: ServiceSpec.CancelOnAbandon).
	Failures map[string]int64 `json:"failures,omitempty"`
	// Abandoned counts attempts a worker served for a caller who had
	// stopped waiting: the caller's attempt timed out (and it may have
	// re-sent) while the attempt queued or was being served, so the work
	// was done, and billed, for nobody. A layer's attempt counts when the
	// layer above gave up on it while it waited on its own call below.
	Abandoned int64 `json:"abandoned,omitempty"`
	// Peak is the most arrivals in one window, in the window from PeakAt.
	Peak   int64         `json:"peak"`
	PeakAt time.Duration `json:"-"`
	// MaxQueue, MeanQueue and MeanBusy describe the queue and the workers,
	// time-averaged after the warmup.
	MaxQueue  int     `json:"max_queue"`
	MeanQueue float64 `json:"mean_queue"`
	MeanBusy  float64 `json:"mean_busy"`
	// Wait is the time attempts waited in the queue for a worker.
	Wait    Percentiles    `json:"queue_wait"`
	Outages []OutageResult `json:"outages,omitempty"`
	// Series is the time series; WriteCSV writes it.
	Series []Sample `json:"-"`
}

// OutageResult says when an outage ended: on time, or later if the load
// kept the service down.
type OutageResult struct {
	Start       time.Duration `json:"-"`
	End         time.Duration `json:"-"`
	Recovered   bool          `json:"recovered"`
	RecoveredAt time.Duration `json:"-"`
	// Class is the outage's class as the scenario wrote it; "" for a
	// transient one.
	Class string `json:"-"`
}

// Sample is one point of a service's time series: the interval Dt ending at
// T, what arrived, was throttled and succeeded in it, and the queue and busy
// workers at T. The series covers the warmup, which the statistics leave out.
type Sample struct {
	T         time.Duration
	Dt        time.Duration
	Arrivals  int64
	Throttled int64
	Succeeded int64
	// Delivered counts the calls of clients aiming at the service that
	// ended in success in the interval: the callers' goodput, where
	// Succeeded counts the answers, those given to nobody included.
	Delivered int64
	Queue     int
	Busy      int
}

// WriteJSON writes the result as one indented JSON object (time series left
// out; see WriteCSV).
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteCSV writes every service's time series, one row per sample.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	sweep := "sweep"
	if r.SweepPath != "" {
		sweep = r.SweepPath
	}
	_ = cw.Write([]string{"policy", sweep, "service", "t_s", "dt_s", "arrivals", "throttled", "succeeded", "queue", "busy", "delivered"})
	for _, run := range r.Runs {
		for _, s := range run.Services {
			for _, p := range s.Series {
				_ = cw.Write([]string{run.Policy, run.SweepValue, s.Name,
					ffloat(p.T.Seconds(), 3), ffloat(p.Dt.Seconds(), 3),
					strconv.FormatInt(p.Arrivals, 10), strconv.FormatInt(p.Throttled, 10), strconv.FormatInt(p.Succeeded, 10),
					strconv.Itoa(p.Queue), strconv.Itoa(p.Busy), strconv.FormatInt(p.Delivered, 10)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func ffloat(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// WriteText writes the result as tables no wider than DefaultWidth: one
// row per run, then the clients and the services of every run.
func (r *Result) WriteText(w io.Writer) error { return r.WriteTextWidth(w, DefaultWidth) }

// WriteTextWidth is WriteText with lines no wider than width (0: as wide
// as the tables are). A table too wide is split into parts that each
// repeat the columns that say whose row it is.
func (r *Result) WriteTextWidth(w io.Writer, width int) error {
	ew := &errWriter{w: w}
	head := r.Scenario
	if r.Description != "" {
		head += " — " + oneLine(r.Description)
	}
	fmt.Fprintln(ew, textfmt.Wrap(head, width, ""))
	fmt.Fprintf(ew, "seed %d · peak window %v · attempts counted at %s\n\n", r.Seed, r.Window, r.Target)
	r.runsTable().write(ew, width)
	fmt.Fprintln(ew)
	r.clientsTable().write(ew, width)
	if t := r.routedTable(); t != nil {
		fmt.Fprintln(ew)
		t.write(ew, width)
	}
	fmt.Fprintln(ew)
	r.servicesTable().write(ew, width)
	return ew.err
}

// keyed starts a table whose rows begin with the run's sweep value (when
// the result sweeps one) and policy, then the columns in more.
func (r *Result) keyed(title string, more ...string) (*table, func(run *RunResult) []string) {
	t := &table{title: title, keys: 1 + len(more)}
	ax := r.SweepAxis()
	if r.SweepPath != "" {
		t.keys++
		t.head = append(t.head, ax.Noun)
	}
	t.head = append(t.head, "policy")
	t.head = append(t.head, more...)
	return t, func(run *RunResult) []string {
		if r.SweepPath != "" {
			return []string{ax.Value(run.SweepValue), run.Policy}
		}
		return []string{run.Policy}
	}
}

// latency writes a percentile of calls' latency; a call that took no time
// at all (every attempt refused at once) leaves the cell empty.
func latency(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return fmtDur(d)
}

func (r *Result) runsTable() *table {
	t, key := r.keyed("runs")
	t.keys = len(t.head)
	t.head = append(t.head, "calls", "ok", "failed", "unfinished", "attempts", "per call",
		"peak", "p50", "p99", "max", "goodput/s")
	for i := range r.Runs {
		run := &r.Runs[i]
		per := ""
		if run.Calls > 0 {
			per = ffloat(float64(run.Attempts)/float64(run.Calls), 2)
		}
		t.add(append(key(run), count(run.Calls), count(run.Succeeded), count(run.Failed), count(run.Unfinished),
			count(run.Attempts), per, count(run.Peak),
			latency(run.Latency.P50), latency(run.Latency.P99), latency(run.Latency.Max), ffloat(run.Goodput, 2))...)
	}
	t.notes = []string{
		"calls: begun after the warmup; unfinished: still going at the end. attempts: those that reached " + r.Target +
			"; per call: attempts per call begun (under 1 when calls ended before reaching " + r.Target + ")" +
			"; peak: the most of them in one " + fmtDur(r.Window) + " window.",
		"p50, p99, max: how long calls took, failed ones included (empty: no time at all, every attempt refused at once)." +
			" goodput/s: calls answered per second.",
	}
	return t
}

func (r *Result) clientsTable() *table {
	t, key := r.keyed("clients", "client")
	t.head = append(t.head, "calls", "ok", "failed", "resubmitted", "attempts", "429s", "p50", "p90", "p99", "max", "stopped by", "guards' cost")
	for i := range r.Runs {
		run := &r.Runs[i]
		for _, c := range run.Clients {
			t.add(append(key(run), c.Name, count(c.Calls), count(c.Succeeded), count(c.Failed), count(c.Resubmitted),
				count(c.Attempts), count(c.Throttled), latency(c.Latency.P50), latency(c.Latency.P90),
				latency(c.Latency.P99), latency(c.Latency.Max), textfmt.Counts(c.FailedBy), textfmt.GuardCost(c.LikelyWon))...)
		}
	}
	t.notes = []string{"attempts: the client's own, on every service; 429s: those answered 429, whatever the reason" +
		" (a quota or the allowance). stopped by: why calls that failed stopped, with how many." +
		" guards' cost: of the calls an open breaker or a spent retry budget turned away, how many would likely" +
		" have been answered, at the success rate the target showed at the time."}
	return t
}

// routedTable is, when some client's calls fell back or hedged, what they
// did: the share of the calls that finished that were answered, their
// attempts on every target together — per call, and the most one call
// made — and their hedges; nil otherwise.
func (r *Result) routedTable() *table {
	routed := false
	for i := range r.Runs {
		for _, c := range r.Runs[i].Clients {
			routed = routed || c.MostAttempts > 0 || c.Hedges > 0 || c.RefusedHedges > 0
		}
	}
	if !routed {
		return nil
	}
	t, key := r.keyed("fallback and hedging (attempts on every target)", "client")
	t.head = append(t.head, "calls", "answered of finished", "attempts", "per call", "most in a call", "hedges", "refused hedges", "wasted")
	for i := range r.Runs {
		run := &r.Runs[i]
		for _, c := range run.Clients {
			answered, per, most := "-", "-", "-"
			if done := c.Succeeded + c.Failed; done > 0 {
				answered = ffloat(100*float64(c.Succeeded)/float64(done), 2) + "%"
			}
			if c.Calls > 0 {
				per = ffloat(float64(c.Attempts)/float64(c.Calls), 2)
			}
			if c.MostAttempts > 0 {
				most = count(c.MostAttempts)
			}
			t.add(append(key(run), c.Name, count(c.Calls), answered, count(c.Attempts), per, most,
				count(c.Hedges), count(c.RefusedHedges), count(c.Wasted))...)
		}
	}
	return t
}

func (r *Result) servicesTable() *table {
	// The abandoned column appears when some service served an attempt
	// for a caller who had stopped waiting.
	abandoned := false
	for i := range r.Runs {
		for _, s := range r.Runs[i].Services {
			abandoned = abandoned || s.Abandoned > 0
		}
	}
	t, key := r.keyed("services", "service")
	t.head = append(t.head, "arrivals", "peak", "peak at", "ok", "failures")
	if abandoned {
		t.head = append(t.head, "abandoned")
	}
	t.head = append(t.head, "429s by endpoint", "max queue", "mean queue", "busy workers", "queue wait p50", "queue wait p99", "recovered at")
	for i := range r.Runs {
		run := &r.Runs[i]
		for _, s := range run.Services {
			busy := ffloat(s.MeanBusy, 2)
			if s.Workers > 0 {
				busy += " of " + strconv.Itoa(s.Workers)
			}
			row := append(key(run), s.Name, count(s.Arrivals), count(s.Peak), fmtDur(s.PeakAt), count(s.Succeeded), textfmt.Counts(s.Failures))
			if abandoned {
				row = append(row, count(s.Abandoned))
			}
			t.add(append(row, textfmt.Counts(s.ThrottledBy), strconv.Itoa(s.MaxQueue), ffloat(s.MeanQueue, 2), busy,
				fmtDur(s.Wait.P50), fmtDur(s.Wait.P99), recovered(s.Outages))...)
		}
	}
	t.notes = []string{"arrivals: attempts that reached the service; peak: the most in one " + fmtDur(r.Window) +
		" window, starting at peak at. failures: attempts answered with anything but success, by kind." +
		" busy workers: the mean number serving. recovered at: when each outage ended, or not by the end."}
	if abandoned {
		t.notes = append(t.notes, "abandoned: attempts served for a caller who had stopped waiting: work done, and billed, for nobody.")
	}
	return t
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

func recovered(os []OutageResult) string {
	var parts []string
	for _, o := range os {
		switch {
		case !o.Recovered:
			parts = append(parts, "not by the end")
		default:
			parts = append(parts, fmtDur(o.RecoveredAt))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fmtDur formats a duration as every recoil table does.
func fmtDur(d time.Duration) string { return textfmt.Duration(d) }

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// Percentiles summarises a distribution of durations: nearest-rank
// percentiles read from a log-linear histogram, within 0.8 % of the true
// values; the count, mean and maximum are exact.
type Percentiles struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"-"`
	P50   time.Duration `json:"-"`
	P90   time.Duration `json:"-"`
	P99   time.Duration `json:"-"`
	Max   time.Duration `json:"-"`
}
