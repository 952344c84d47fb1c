package audit

import (
	"slices"
	"strconv"
	"strings"
)

// Failure classes: what the failing service answers, which decides
// whether each layer retries it. The audit multiplies each apart, since a
// layer that retries a 503 may not retry a 500.
const (
	// Class503 is an overloaded or unavailable service: HTTP 503 (gRPC
	// UNAVAILABLE on a gRPC edge).
	Class503 = "503"
	// Class500 is a server error: HTTP 500 (gRPC INTERNAL or UNKNOWN).
	Class500 = "500"
	// ClassReset is no answer at all: the connection refused, reset or
	// the stream refused (a gRPC client sees UNAVAILABLE).
	ClassReset = "reset"
	// Class429 is a refusal to go faster: HTTP 429 (gRPC
	// RESOURCE_EXHAUSTED).
	Class429 = "429"
)

// Classes are the failure classes, in the order reports list them.
var Classes = []string{Class503, Class500, ClassReset, Class429}

// Edge protocols: which of Envoy's retry conditions apply. Envoy's gRPC
// conditions (unavailable, internal, resource-exhausted, cancelled,
// deadline-exceeded) read a gRPC status, which only a gRPC answer has.
const (
	ProtocolHTTP = "http"
	ProtocolGRPC = "grpc"
)

// envoyConditionClasses are the failure classes each of Envoy's retry_on
// conditions retries (the router filter's x-envoy-retry-on and
// x-envoy-retry-grpc-on). retriable-status-codes is read with the codes.
var envoyConditionClasses = map[string][]string{
	"5xx":                        {Class503, Class500, ClassReset},
	"gateway-error":              {Class503},
	"reset":                      {ClassReset},
	"reset-before-request":       {ClassReset},
	"connect-failure":            {ClassReset},
	"refused-stream":             {ClassReset},
	"http3-post-connect-failure": {ClassReset},
	"envoy-ratelimited":          {Class429},
}

// envoyGRPCConditionClasses are the gRPC conditions, which retry only a
// gRPC answer's status.
var envoyGRPCConditionClasses = map[string][]string{
	"unavailable":        {Class503},
	"internal":           {Class500},
	"resource-exhausted": {Class429},
}

// statusClass is the failure class of an HTTP status code, or "".
func statusClass(code int) string {
	switch code {
	case 503:
		return Class503
	case 500:
		return Class500
	case 429:
		return Class429
	}
	return ""
}

// envoyClasses returns the classes a route's retry_on conditions and
// retriable_status_codes retry on an edge of the given protocol.
func envoyClasses(conditions []string, codes []int, protocol string) []string {
	set := map[string]bool{}
	for _, c := range conditions {
		for _, k := range envoyConditionClasses[c] {
			set[k] = true
		}
		if protocol == ProtocolGRPC {
			for _, k := range envoyGRPCConditionClasses[c] {
				set[k] = true
			}
		}
		if c == "retriable-status-codes" {
			for _, code := range codes {
				if k := statusClass(code); k != "" {
					set[k] = true
				}
			}
		}
	}
	return inOrder(set)
}

// grpcStatusClasses maps gRPC status codes, by name or number, to the
// classes a gRPC client retrying them retries: UNAVAILABLE is what a
// client sees of an overloaded server and of a refused connection alike.
var grpcStatusClasses = map[string][]string{
	"UNAVAILABLE": {Class503, ClassReset}, "14": {Class503, ClassReset},
	"INTERNAL": {Class500}, "13": {Class500},
	"UNKNOWN": {Class500}, "2": {Class500},
	"RESOURCE_EXHAUSTED": {Class429}, "8": {Class429},
}

// grpcClasses returns the classes a gRPC retryPolicy's status codes (or
// a hedging policy's non-fatal ones) retry.
func grpcClasses(codes []string) []string {
	set := map[string]bool{}
	for _, c := range codes {
		for _, k := range grpcStatusClasses[strings.ToUpper(strings.TrimSpace(c))] {
			set[k] = true
		}
	}
	return inOrder(set)
}

func inOrder(set map[string]bool) []string {
	out := []string{}
	for _, k := range Classes {
		if set[k] {
			out = append(out, k)
		}
	}
	return out
}

// splitConditions splits a retry_on (or Istio retryOn) list; Istio also
// takes bare status codes, which it adds to retriable_status_codes.
func splitConditions(s string, istio bool) (conds []string, codes []int) {
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if n, err := strconv.Atoi(c); err == nil && istio {
			codes = append(codes, n)
			continue
		}
		conds = append(conds, c)
	}
	if len(codes) > 0 && !slices.Contains(conds, "retriable-status-codes") {
		conds = append(conds, "retriable-status-codes")
	}
	return conds, codes
}
