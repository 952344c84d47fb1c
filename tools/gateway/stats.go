package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
	"github.com/recoil-go/recoil/tools/tally"
)

// Stats is what a Gateway counted, from the receiving side: a plain value,
// the caller's to keep. Counts read
// while attempts are arriving are each exact, but an attempt in progress
// may be in some and not yet in others; read them once the load has
// stopped to compare them with what the clients counted.
type Stats struct {
	// Started is when the first attempt arrived; the zero time if none has.
	// The timeline and the windows count from it.
	Started time.Time
	// Elapsed is the time since Started.
	Elapsed time.Duration
	// Window is the span the peak and the series count over.
	Window time.Duration

	// Attempts is the number of attempts that arrived.
	Attempts int64
	// Accepted is the number answered with a success (a 200, whether or
	// not a stream then stalled).
	Accepted int64
	// Peak is the most attempts within any span of Window: a sliding
	// window at millisecond resolution (see tally.Window).
	Peak int64
	// PeakAt is when the first span holding Peak attempts began, since
	// Started.
	PeakAt time.Duration
	// AttemptNumbers counts attempts by the attempt number they carried
	// in Recoil-Attempt (the hop protocol; hop.Histogram): index 0 counts
	// first attempts, and attempts that carried no number; index i
	// attempt i+1; the last index every attempt above
	// hop.HistogramAttempts.
	AttemptNumbers []uint64
	// MalformedHop counts attempts whose hop headers did not parse.
	MalformedHop uint64
	// Statuses counts attempts by the status they were answered with.
	Statuses map[int]uint64
	// Faults counts attempts by what answered them: "none" (a success),
	// "outage", "allowance", "validator", "failure".
	Faults map[string]uint64
	// Stalls counts streamed answers that stalled.
	Stalls uint64
	// InFlight is how many attempts were being answered when the stats
	// were read (this read's own request aside), and PeakInFlight the
	// most there ever were at once: what Latency.Knee's latency follows.
	InFlight, PeakInFlight int64
	// Charges is what the charge route counted: its side effects, the
	// double ones, the connections dropped after a charge.
	Charges ChargeStats

	// Clients counts attempts per client: the client header's value, or
	// the remote IP.
	Clients map[string]KeyStats
	// Requests counts attempts per logical request: the request header's
	// value, or its idempotency key. Attempts with neither are not in it.
	Requests map[string]KeyStats
	// AttemptsPerRequest counts logical requests by how many attempts of
	// theirs arrived.
	AttemptsPerRequest map[uint64]int
	// UntrackedClients and UntrackedRequests count attempts from clients
	// and logical requests beyond Config.MaxKeys, counted only in total.
	UntrackedClients, UntrackedRequests uint64

	// Series counts attempts and successes per fixed window of Window,
	// from Started, oldest first; at most the newest 3000 windows.
	Series []WindowCount
	// Outages are the timeline's outages, as they stand.
	Outages []OutageStatus
	// Down reports whether an outage is answering now.
	Down bool
}

// WindowCount is one fixed window of Stats.Series.
type WindowCount struct {
	// Start is when the window began, since Stats.Started.
	Start time.Duration
	// Attempts and Accepted count the attempts that arrived in it and the
	// successes among them.
	Attempts, Accepted int64
}

// OutageStatus is where one outage of the timeline stands.
type OutageStatus struct {
	Outage
	// Active reports whether it is answering now.
	Active bool
	// Ended reports whether it is over; End is then when it ended, since
	// Stats.Started. A recovering outage's end is known only once the
	// load has stayed low for long enough.
	Ended bool
	End   time.Duration
}

// Stats returns what the gateway has counted so far.
func (g *Gateway) Stats() Stats { return g.statsAt(time.Now(), tally.SeriesLen, true) }

// statsAt returns the stats at now, with at most series windows and the
// per-request counts only if requests is set.
func (g *Gateway) statsAt(now time.Time, series int, requests bool) Stats {
	s := Stats{Window: g.cfg.Window}
	g.mu.Lock()
	s.Attempts, s.Accepted = g.attempts.Total(), g.accepted.Total()
	if g.begun {
		s.Started = g.epoch
		s.Elapsed = now.Sub(g.epoch)
		peak, start := g.attempts.Peak()
		s.Peak, s.PeakAt = peak, time.Duration(start)*tally.Resolution
		t := max(int64(s.Elapsed/tally.Resolution), g.attempts.Newest())
		last := t / g.k
		for n := max(last-int64(series)+1, 0); n <= last && series > 0; n++ {
			s.Series = append(s.Series, WindowCount{
				Start:    time.Duration(n*g.k) * tally.Resolution,
				Attempts: g.attempts.SeriesAt(n),
				Accepted: g.accepted.SeriesAt(n),
			})
		}
		for i := range g.outages {
			o := &g.outages[i]
			st := OutageStatus{Outage: o.Outage, Active: o.activeAt(t)}
			switch {
			case o.below == 0 && t >= o.minEnd:
				st.Ended, st.End = true, time.Duration(o.minEnd)*tally.Resolution
			case o.ended:
				st.Ended, st.End = true, time.Duration(o.end)*tally.Resolution
			}
			s.Down = s.Down || st.Active
			s.Outages = append(s.Outages, st)
		}
	} else {
		for _, o := range g.outages {
			s.Outages = append(s.Outages, OutageStatus{Outage: o.Outage})
		}
	}
	g.mu.Unlock()

	s.AttemptNumbers = g.numbers.Snapshot()
	s.MalformedHop = g.hopBad.Load()
	s.Statuses = make(map[int]uint64)
	s.Faults = make(map[string]uint64)
	for f := range g.responses {
		for code := range g.responses[f] {
			if n := g.responses[f][code].Load(); n > 0 {
				s.Statuses[code] += n
				s.Faults[faultNames[f]] += n
			}
		}
	}
	s.Stalls = g.stalls.Load()
	s.InFlight, s.PeakInFlight = g.inFlight.Load(), g.peakIn.Load()
	s.Charges = g.chargeStats()
	s.Clients = g.clients.snapshot()
	s.AttemptsPerRequest = make(map[uint64]int)
	if requests {
		s.Requests = g.requests.snapshot()
		for _, e := range s.Requests {
			s.AttemptsPerRequest[e.Attempts]++
		}
	} else {
		g.requests.each(func(_ string, e KeyStats) { s.AttemptsPerRequest[e.Attempts]++ })
	}
	s.UntrackedClients = g.clients.untracked.Load()
	s.UntrackedRequests = g.requests.untracked.Load()
	return s
}

// MarshalJSON writes the stats in the convention of every recoil -json
// output (package internal/textfmt): durations in float milliseconds in
// fields ending in _ms, map keys as strings. It is the /stats format.
// windowJSON, recoveryJSON, outageJSON and peakJSON are how Stats.MarshalJSON
// writes a window, an outage and the peak: durations in milliseconds.
type windowJSON struct {
	StartMS  float64 `json:"start_ms"`
	Attempts int64   `json:"attempts"`
	Accepted int64   `json:"accepted"`
}
type recoveryJSON struct {
	Below int     `json:"below"`
	ForMS float64 `json:"for_ms"`
}
type outageJSON struct {
	StartMS    float64       `json:"start_ms"`
	DurationMS float64       `json:"duration_ms"`
	Status     int           `json:"status"`
	Rate       float64       `json:"rate"`
	Recovery   *recoveryJSON `json:"recovery,omitempty"`
	Active     bool          `json:"active"`
	Ended      bool          `json:"ended"`
	EndMS      *float64      `json:"end_ms"`
}
type peakJSON struct {
	Attempts int64   `json:"attempts"`
	StartMS  float64 `json:"start_ms"`
	WindowMS float64 `json:"window_ms"`
	How      string  `json:"how"`
}

func (s Stats) MarshalJSON() ([]byte, error) {
	v := struct {
		Started            *time.Time          `json:"started"`
		ElapsedMS          float64             `json:"elapsed_ms"`
		WindowMS           float64             `json:"window_ms"`
		Attempts           int64               `json:"attempts"`
		Accepted           int64               `json:"accepted"`
		Peak               peakJSON            `json:"peak"`
		AttemptNumbers     []uint64            `json:"attempt_numbers"`
		MalformedHop       uint64              `json:"malformed_hop"`
		Statuses           map[string]uint64   `json:"statuses"`
		Faults             map[string]uint64   `json:"faults"`
		Stalls             uint64              `json:"stalls"`
		InFlight           int64               `json:"in_flight"`
		PeakInFlight       int64               `json:"peak_in_flight"`
		Charges            ChargeStats         `json:"charges"`
		Clients            map[string]KeyStats `json:"clients"`
		LogicalRequests    int                 `json:"logical_requests"`
		AttemptsPerRequest map[string]int      `json:"attempts_per_request"`
		Requests           map[string]KeyStats `json:"requests,omitempty"`
		UntrackedClients   uint64              `json:"untracked_clients"`
		UntrackedRequests  uint64              `json:"untracked_requests"`
		Series             []windowJSON        `json:"series"`
		Outages            []outageJSON        `json:"outages"`
		Down               bool                `json:"down"`
	}{
		ElapsedMS:          textfmt.Millis(s.Elapsed),
		WindowMS:           textfmt.Millis(s.Window),
		Attempts:           s.Attempts,
		Accepted:           s.Accepted,
		Peak:               peakJSON{s.Peak, textfmt.Millis(s.PeakAt), textfmt.Millis(s.Window), "sliding window, 1 ms resolution"},
		AttemptNumbers:     s.AttemptNumbers,
		MalformedHop:       s.MalformedHop,
		Statuses:           make(map[string]uint64, len(s.Statuses)),
		Faults:             s.Faults,
		Stalls:             s.Stalls,
		InFlight:           s.InFlight,
		PeakInFlight:       s.PeakInFlight,
		Charges:            s.Charges,
		Clients:            s.Clients,
		AttemptsPerRequest: make(map[string]int, len(s.AttemptsPerRequest)),
		Requests:           s.Requests,
		UntrackedClients:   s.UntrackedClients,
		UntrackedRequests:  s.UntrackedRequests,
		Series:             make([]windowJSON, 0, len(s.Series)),
		Outages:            outagesJSON(s.Outages),
		Down:               s.Down,
	}
	if !s.Started.IsZero() {
		v.Started = &s.Started
	}
	for code, n := range s.Statuses {
		v.Statuses[strconv.Itoa(code)] = n
	}
	for a, n := range s.AttemptsPerRequest {
		v.AttemptsPerRequest[strconv.FormatUint(a, 10)] = n
		v.LogicalRequests += n
	}
	for _, w := range s.Series {
		v.Series = append(v.Series, windowJSON{textfmt.Millis(w.Start), w.Attempts, w.Accepted})
	}
	return json.Marshal(v)
}

// outagesJSON returns the outages as Stats.MarshalJSON writes them.
func outagesJSON(outages []OutageStatus) []outageJSON {
	out := make([]outageJSON, 0, len(outages))
	for _, o := range outages {
		j := outageJSON{StartMS: textfmt.Millis(o.Start), DurationMS: textfmt.Millis(o.Duration), Status: o.Status, Rate: o.Rate, Active: o.Active, Ended: o.Ended}
		if o.Recovery.Below > 0 {
			j.Recovery = &recoveryJSON{o.Recovery.Below, textfmt.Millis(o.Recovery.For)}
		}
		if o.Ended {
			end := textfmt.Millis(o.End)
			j.EndMS = &end
		}
		out = append(out, j)
	}
	return out
}

// defaultSeries is how many windows /stats returns unless asked.
const defaultSeries = 150

func (g *Gateway) serveStats(w http.ResponseWriter, r *http.Request) {
	series, requests, ok := statsQuery(w, r)
	if !ok {
		return
	}
	writeStats(w, g.statsAt(time.Now(), series, requests))
}

// writeStats answers a stats request with v as JSON, never cached.
func writeStats(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = jsonType
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// statsQuery reads a stats request's query: how many windows of the series
// (?series=N, at most tally.SeriesLen) and whether to list each logical
// request (?requests=1). A series that is not a count is answered 400 and
// ok is false.
func statsQuery(w http.ResponseWriter, r *http.Request) (series int, requests, ok bool) {
	q := r.URL.Query()
	series = defaultSeries
	if v := q.Get("series"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "series: want a count of windows", http.StatusBadRequest)
			return 0, false, false
		}
		series = min(n, tally.SeriesLen)
	}
	requests = q.Get("requests") == "1" || q.Get("requests") == "true"
	return series, requests, true
}
