package main

import (
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
)

// TestFaultLines: the gateway's banner names every fault it will inject.
func TestFaultLines(t *testing.T) {
	tests := []struct {
		name string
		cfg  gateway.Config
		want string
	}{
		{"healthy", gateway.Config{}, "no faults"},
		{"outage", gateway.Config{Outages: []gateway.Outage{{Start: time.Second, Duration: 2 * time.Second, Status: 529}}}, "outage from 1s for 2s, answering 529"},
		{"outage rate", gateway.Config{Outages: []gateway.Outage{{Duration: time.Second, Status: 503, Rate: 0.5}}}, "50% of attempts answered 503"},
		{"outage code", gateway.Config{Outages: []gateway.Outage{{Duration: time.Second, Status: 429, Code: "insufficient_quota"}}}, "429 insufficient_quota"},
		{"recovery", gateway.Config{Window: 100 * time.Millisecond, Outages: []gateway.Outage{{Duration: time.Second, Status: 503, Recovery: gateway.Recovery{Below: 20, For: time.Second}}}}, "stay below 20 for 1s"},
		{"fail rate", gateway.Config{FailureRate: 0.05, FailureStatus: 502}, "5% of attempts fail with 502"},
		{"allowance", gateway.Config{Allowance: 600, AllowanceHeader: "X-Api-Key"}, "allowance 600 requests a minute per X-Api-Key header"},
		{"reject field", gateway.Config{RejectField: "strict"}, `the field "strict" is rejected`},
		{"latency", gateway.Config{Latency: gateway.Latency{Dist: gateway.Uniform, Min: 5 * time.Millisecond, Max: 15 * time.Millisecond}}, "latency uniform from 5ms to 15ms"},
		{"tail", gateway.Config{Latency: gateway.Latency{Mean: 40 * time.Millisecond, Tail: gateway.Tail{Rate: 0.03, Min: time.Second, Max: 2 * time.Second}}}, "3% of attempts take 1s to 2s"},
		{"stalls", gateway.Config{Stream: gateway.Stream{StallRate: 0.25, StallAfter: 2, StallFor: 3 * time.Second, StallPing: 500 * time.Millisecond}}, "25% of streamed answers stall after 2 events for 3s, with an SSE ping every 500ms"},
		{"serial", gateway.Config{Serial: 12 * time.Millisecond}, "holding the lane 12ms"},
		{"charge drops", gateway.Config{Charge: gateway.Charge{DropRate: 0.3}}, "30% of charges dropped"},
	}
	for _, tt := range tests {
		got := strings.Join(faultLines(tt.cfg, "the first attempt"), "\n")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: faultLines = %q, want a line with %q", tt.name, got, tt.want)
		}
	}
}
