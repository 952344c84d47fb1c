package main

import (
	"fmt"
	"strconv"

	"github.com/recoil-go/recoil/tools/gateway"
)

// faultLines says, a line each, every fault a gateway configured as cfg
// injects: outages (with their rate and recovery), random failures, the
// allowance, the validator's rejected field, latency, stalls, a
// serialised lane and dropped charges. origin says where an outage's times
// count from ("the first attempt"). A healthy gateway gets one line saying so.
func faultLines(cfg gateway.Config, origin string) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, o := range cfg.Outages {
		share := "answering"
		if o.Rate > 0 && o.Rate < 1 {
			share = fmt.Sprintf("%s of attempts answered", percent(o.Rate))
		}
		line := fmt.Sprintf("outage from %v for %v, %s %d%s", o.Start, o.Duration, share, o.Status, withCode(o.Code))
		if o.Recovery.Below > 0 {
			line += fmt.Sprintf(", then until attempts per %v stay below %d for %v", cfg.Window, o.Recovery.Below, o.Recovery.For)
		}
		add("%s (from %s)", line, origin)
	}
	if cfg.FailureRate > 0 {
		status := cfg.FailureStatus
		if status == 0 {
			status = gateway.DefaultFailureStatus
		}
		add("%s of attempts fail with %d", percent(cfg.FailureRate), status)
	}
	if cfg.Allowance > 0 {
		key := "client"
		if cfg.AllowanceHeader != "" {
			key = cfg.AllowanceHeader + " header"
		}
		add("allowance %d requests a minute per %s; beyond it, 429 with Retry-After", cfg.Allowance, key)
	}
	if cfg.RejectField != "" {
		add("a request whose JSON has the field %q is rejected with a provider-style 400", cfg.RejectField)
	}
	if l := latencyWords(cfg.Latency); l != "" {
		add("latency %s", l)
	}
	if s := cfg.Stream; s.StallRate > 0 {
		line := fmt.Sprintf("%s of streamed answers stall after %d events", percent(s.StallRate), s.StallAfter)
		if s.StallFor > 0 {
			line += fmt.Sprintf(" for %v", s.StallFor)
		} else {
			line += " until the client goes away"
		}
		if s.StallPing > 0 {
			line += fmt.Sprintf(", with an SSE ping every %v", s.StallPing)
		}
		add("%s", line)
	}
	if cfg.Serial > 0 {
		add("serialised: one attempt at a time, each holding the lane %v before it is counted and answered", cfg.Serial)
	}
	if c := cfg.Charge; c.DropRate > 0 {
		add("%s of charges dropped after the charge is made, before the answer", percent(c.DropRate))
	}
	if len(out) == 0 {
		add("no faults: every attempt succeeds")
	}
	return out
}

// latencyWords describes a latency setting; "" for none.
func latencyWords(l gateway.Latency) string {
	var s string
	switch l.Dist {
	case gateway.Uniform:
		s = fmt.Sprintf("uniform from %v to %v", l.Min, l.Max)
	case gateway.Exponential:
		s = fmt.Sprintf("exponential, mean %v", l.Mean)
		if l.Min > 0 {
			s += fmt.Sprintf(", at least %v", l.Min)
		}
		if l.Max > 0 {
			s += fmt.Sprintf(", at most %v", l.Max)
		}
	default:
		if l.Mean > 0 {
			s = l.Mean.String()
		}
	}
	if l.Tail.Rate > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("%s of attempts take %v to %v", percent(l.Tail.Rate), l.Tail.Min, l.Tail.Max)
	}
	if l.Knee > 0 && s != "" {
		s += fmt.Sprintf(", longer beyond %d attempts in flight", l.Knee)
	}
	return s
}

// percent writes a fraction as a percentage: 0.3 is "30%".
func percent(f float64) string { return strconv.FormatFloat(f*100, 'g', 4, 64) + "%" }
