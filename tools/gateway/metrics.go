package gateway

import (
	"io"
	"log"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/tools/tally"
)

// The Prometheus metrics, all under one prefix, recoil_gateway_. Counters
// end in _total, durations are in seconds, and no metric has a URL, client
// or key label: the per-key counts are in /stats.
var (
	descAttempts = prometheus.NewDesc("recoil_gateway_attempts_total",
		"Attempts that arrived at the gateway.", nil, nil)
	descAccepted = prometheus.NewDesc("recoil_gateway_accepted_total",
		"Attempts answered with a success.", nil, nil)
	descResponses = prometheus.NewDesc("recoil_gateway_responses_total",
		"Attempts by the status answered and the fault that answered (none, outage, allowance, validator, failure).",
		[]string{"code", "fault"}, nil)
	descStalls = prometheus.NewDesc("recoil_gateway_stalls_total",
		"Streamed answers that stalled.", nil, nil)
	descMalformed = prometheus.NewDesc("recoil_gateway_malformed_hop_headers_total",
		"Attempts whose hop protocol headers did not parse.", nil, nil)
	descNumber = prometheus.NewDesc("recoil_gateway_attempt_number",
		"Attempts by the attempt number they carried in Recoil-Attempt (absent counts as 1; the sum counts numbers above 10 as 11).",
		nil, nil)
	descPeak = prometheus.NewDesc("recoil_gateway_peak_attempts",
		"The most attempts that arrived within any one window (sliding, 1 ms resolution).", nil, nil)
	descWindow = prometheus.NewDesc("recoil_gateway_window_seconds",
		"The span of the window the peak is counted over.", nil, nil)
	descDown = prometheus.NewDesc("recoil_gateway_down",
		"1 while an outage of the timeline is answering, else 0.", nil, nil)
	descClients = prometheus.NewDesc("recoil_gateway_clients",
		"Distinct clients counted.", nil, nil)
	descRequests = prometheus.NewDesc("recoil_gateway_logical_requests",
		"Distinct logical requests counted.", nil, nil)
	descCharges = prometheus.NewDesc("recoil_gateway_charges_total",
		"Charges the charge route made (its side effect).", nil, nil)
	descDuplicates = prometheus.NewDesc("recoil_gateway_duplicate_charges_total",
		"Charges beyond the first of their logical request: double effects.", nil, nil)
	descInFlight = prometheus.NewDesc("recoil_gateway_in_flight",
		"Attempts being answered now: arrived, not yet answered.", nil, nil)
	descDropped = prometheus.NewDesc("recoil_gateway_dropped_after_charge_total",
		"Connections the charge route dropped after its charge, before answering.", nil, nil)
	descPeakInFlight = prometheus.NewDesc("recoil_gateway_peak_in_flight",
		"The most attempts ever being answered at once.", nil, nil)
	descKnee = prometheus.NewDesc("recoil_gateway_knee",
		"The dependency's knee (latency.knee): the attempts in flight past which each one's latency grows with the load and throughput stops growing; 0 for none.", nil, nil)
	descStretch = prometheus.NewDesc("recoil_gateway_latency_stretch",
		"What an attempt arriving now multiplies its latency by: in flight over the knee, at least 1.", nil, nil)
)

// collector reads the gateway's own counters when scraped, so counting an
// attempt costs nothing extra for Prometheus.
type collector struct{ g *Gateway }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAttempts, descAccepted, descResponses, descStalls,
		descMalformed, descNumber, descPeak, descWindow, descDown, descClients, descRequests,
		descCharges, descDuplicates, descDropped, descInFlight, descPeakInFlight, descKnee, descStretch} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	g := c.g
	g.mu.Lock()
	attempts, accepted := g.attempts.Total(), g.accepted.Total()
	peak, _ := g.attempts.Peak()
	knee := g.cfg.Latency.Knee
	down := false
	if g.begun {
		t := max(int64(time.Since(g.epoch)/tally.Resolution), g.attempts.Newest())
		for i := range g.outages {
			down = down || g.outages[i].activeAt(t)
		}
	}
	g.mu.Unlock()

	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter(descAttempts, float64(attempts))
	counter(descAccepted, float64(accepted))
	counter(descStalls, float64(g.stalls.Load()))
	counter(descMalformed, float64(g.hopBad.Load()))
	counter(descCharges, float64(g.charges.effects.Load()))
	counter(descDuplicates, float64(g.charges.duplicates.Load()))
	counter(descDropped, float64(g.charges.dropped.Load()))
	for f := range g.responses {
		for code := range g.responses[f] {
			if n := g.responses[f][code].Load(); n > 0 {
				counter(descResponses, float64(n), strconv.Itoa(code), faultNames[f])
			}
		}
	}
	snap := g.numbers.Snapshot()
	buckets := make(map[float64]uint64, hop.HistogramAttempts)
	var cum, count uint64
	var sum float64
	for i, n := range snap {
		count += n
		sum += float64(i+1) * float64(n)
		if i < hop.HistogramAttempts {
			cum += n
			buckets[float64(i+1)] = cum
		}
	}
	ch <- prometheus.MustNewConstHistogram(descNumber, count, sum, buckets)
	gauge(descPeak, float64(peak))
	gauge(descWindow, g.cfg.Window.Seconds())
	d := 0.0
	if down {
		d = 1
	}
	gauge(descDown, d)
	gauge(descClients, float64(g.clients.len()))
	gauge(descRequests, float64(g.requests.len()))
	inFlight := g.inFlight.Load()
	gauge(descInFlight, float64(inFlight))
	gauge(descPeakInFlight, float64(g.peakIn.Load()))
	gauge(descKnee, float64(knee))
	gauge(descStretch, stretch(inFlight, knee))
}

// stretch is the factor an attempt arriving with inFlight attempts being
// answered (itself included) multiplies its latency by, past a knee of
// knee (none if not positive): as decide applies it.
func stretch(inFlight int64, knee int) float64 {
	if k := int64(knee); k > 0 && inFlight > k {
		return float64(inFlight) / float64(k)
	}
	return 1
}

func (g *Gateway) initMetrics() {
	g.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "recoil_gateway_response_duration_seconds",
		Help:    "Time from an attempt's arrival until its answer was written, injected latency and stalls included.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{g}, g.duration)
	g.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: log.New(io.Discard, "", 0),
	})
}
