package proxy

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/fleet"
	"github.com/recoil-go/recoil/recoilprom"
)

// Metrics is the proxy's Prometheus metrics: recoil's retry metrics per
// route (package recoilprom: attempts by outcome and by target, retries,
// waits, stop reasons, budget refusals) and the proxy's own — calls by
// route and status class, the calls it answered itself by why (the storm
// it refused to pass on), and whether the fleet's state is shared. Routes
// are labelled by protocol and model name, never by URL or key. Make one
// with NewMetrics and give it to New in Options; it is safe for concurrent
// use.
type Metrics struct {
	rec        *recoilprom.Metrics
	calls      *prometheus.CounterVec
	refused    *prometheus.CounterVec
	sdkRetries *prometheus.CounterVec
	reg        prometheus.Registerer
	mu         sync.Mutex
	observers  map[string]*recoilprom.Observer
	fleetOnce  sync.Once
}

// NewMetrics returns the proxy's metrics, registered with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		rec: recoilprom.NewMetrics(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "recoil_proxy_calls_total", Help: "Logical calls the proxy answered, by route and status class.",
		}, []string{"route", "status"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "recoil_proxy_refused_total",
			Help: "Calls the proxy answered itself without sending them on, by route and why (sdk-retry: an SDK's retry of a request whose budget was spent).",
		}, []string{"route", "why"}),
		sdkRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "recoil_proxy_sdk_retries_total", Help: "Calls that were an SDK's retry of an earlier one (X-Stainless-Retry-Count above 0, or a repeated Idempotency-Key).",
		}, []string{"route"}),
		reg:       reg,
		observers: map[string]*recoilprom.Observer{},
	}
	for _, c := range []prometheus.Collector{m.rec, m.calls, m.refused, m.sdkRetries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// metricName is a route's name as recoilprom labels policies: letters,
// digits, '_', '-' and '.', at most 64 bytes.
func metricName(route string) string {
	route = strings.ReplaceAll(route, "/"+Wildcard, "/any")
	b := []byte(route)
	for i, c := range b {
		ok := c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			b[i] = '.'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

func (m *Metrics) instrument(route string, p *recoil.Policy) {
	name := metricName(route)
	m.mu.Lock()
	defer m.mu.Unlock()
	obs, ok := m.observers[name]
	if !ok {
		var err error
		if obs, err = m.rec.Policy(name); err != nil {
			return // a name recoilprom refuses: the route goes unmeasured, the proxy still serves
		}
		m.observers[name] = obs
	}
	obs.Instrument(p)
}

func (m *Metrics) fleet(fl *fleet.Client) {
	m.fleetOnce.Do(func() {
		_ = m.rec.Fleet("proxy", fl)
		_ = m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "recoil_proxy_fleet_shared",
			Help: "1 while the fleet's allowances and budgets are shared through Redis, 0 while this replica decides from its local share.",
		}, func() float64 {
			if fl.Shared() {
				return 1
			}
			return 0
		}))
	})
}

var statusClass = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

func (m *Metrics) call(c *call) {
	route := "none"
	if c.rt != nil {
		route = metricName(c.rt.name)
	}
	cls := "other"
	if i := c.status/100 - 1; i >= 0 && i < len(statusClass) {
		cls = statusClass[i]
	}
	if c.status == 499 {
		cls = "cancelled"
	}
	m.calls.WithLabelValues(route, cls).Inc()
	if c.refused != "" {
		m.refused.WithLabelValues(route, c.refused).Inc()
	}
	if c.sdkRetry {
		m.sdkRetries.WithLabelValues(route).Inc()
	}
}
