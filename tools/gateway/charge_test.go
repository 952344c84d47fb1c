package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/recoil-go/recoil/tools/tally"
)

// chargeOnce sends one attempt at the charge route with the given request
// id and idempotency key (either may be empty) and reports whether an
// answer came back.
func chargeOnce(t *testing.T, tr http.RoundTripper, url, id, key string) (string, bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/charges", strings.NewReader(`{"amount":100}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(tally.DefaultClientHeader, "caller-1")
	if id != "" {
		req.Header.Set(tally.DefaultRequestHeader, id)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode == http.StatusOK
}

func TestChargeRoute(t *testing.T) {
	tests := []struct {
		name     string
		charge   Charge
		attempts []struct{ id, key string } // each sent once, in order
		answered int
		want     ChargeStats
	}{
		{
			name:     "a charge per attempt; a retry of a logical request charges again",
			attempts: []struct{ id, key string }{{"r1", ""}, {"r1", ""}, {"r2", ""}, {"", ""}},
			answered: 4,
			want:     ChargeStats{Effects: 4, Duplicates: 1, Doubled: 1},
		},
		{
			name:     "the idempotency key identifies the logical request when no request id is sent",
			attempts: []struct{ id, key string }{{"", "k1"}, {"", "k1"}},
			answered: 2,
			want:     ChargeStats{Effects: 2, Duplicates: 1, Doubled: 1},
		},
		{
			name:     "with idempotency, a retry under the same key is replayed, not charged",
			charge:   Charge{Idempotency: true},
			attempts: []struct{ id, key string }{{"r1", "k1"}, {"r1", "k1"}, {"r2", "k2"}, {"r3", ""}, {"r3", ""}},
			answered: 5,
			want:     ChargeStats{Idempotency: true, Effects: 4, Duplicates: 1, Doubled: 1},
		},
		{
			name:     "every connection dropped after the charge",
			charge:   Charge{DropRate: 1},
			attempts: []struct{ id, key string }{{"r1", ""}, {"r1", ""}},
			answered: 0,
			want:     ChargeStats{Effects: 2, Duplicates: 1, Doubled: 1, Dropped: 2},
		},
		{
			name:     "dropped, but the key's outcome was stored: the retry's replay charges nothing",
			charge:   Charge{DropRate: 1, Idempotency: true},
			attempts: []struct{ id, key string }{{"r1", "k1"}, {"r1", "k1"}, {"r1", "k1"}},
			answered: 0,
			want:     ChargeStats{Idempotency: true, Effects: 1, Dropped: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, url := serve(t, Config{Charge: tt.charge})
			tr := client(t)
			answered := 0
			var first string
			for i, a := range tt.attempts {
				body, ok := chargeOnce(t, tr, url, a.id, a.key)
				if ok {
					answered++
				}
				if i == 0 {
					first = body
				} else if ok && tt.charge.Idempotency && a.key != "" && a.key == tt.attempts[0].key && body != first {
					t.Errorf("retry under key %s = %q, want the replay %q", a.key, body, first)
				}
			}
			got := g.Stats().Charges
			tt.want.Path = DefaultChargePath
			if answered != tt.answered || got != tt.want {
				t.Fatalf("answered %d, charges %+v; want %d, %+v", answered, got, tt.answered, tt.want)
			}
		})
	}
}

func TestChargeConfig(t *testing.T) {
	for _, tt := range []struct {
		timeline, err string
	}{
		{"charge: {drop_rate: 0.2, idempotency: true, path: /pay}", ""},
		{"charge: {drop_rate: 1.5}", "charge.drop_rate"},
		{"charge: {path: pay}", "charge.path"},
		{"charge: {path: /stats}", "charge.path"},
		{"charge: {idempotency: maybe}", "charge.idempotency"},
	} {
		c, err := ParseTimeline("t.yaml", []byte(tt.timeline))
		switch {
		case tt.err == "" && (err != nil || c.Charge != Charge{Path: "/pay", DropRate: 0.2, Idempotency: true}):
			t.Errorf("ParseTimeline(%q) = %+v, %v", tt.timeline, c.Charge, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseTimeline(%q) error = %v, want one naming %s", tt.timeline, err, tt.err)
		}
	}
}

func TestChargeMetrics(t *testing.T) {
	_, url := serve(t, Config{Charge: Charge{DropRate: 1}})
	tr := client(t)
	chargeOnce(t, tr, url, "r1", "")
	chargeOnce(t, tr, url, "r1", "")
	resp, err := tr.RoundTrip(mustGet(t, url+"/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(drain(t, resp))
	for _, want := range []string{"recoil_gateway_charges_total 2", "recoil_gateway_duplicate_charges_total 1", "recoil_gateway_dropped_after_charge_total 2"} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}
