package hop

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// headers builds an http.Header without canonicalising the keys, as a peer
// could send them.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h[kv[i]] = append(h[kv[i]], kv[i+1])
	}
	return h
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want Request
	}{
		{"absent", headers(), Request{}},
		{"empty values", headers(HeaderBudget, "", HeaderDeadline, "", HeaderAttempt, ""), Request{}},
		{"all", headers(HeaderBudget, "2", HeaderDeadline, "2950", HeaderAttempt, "1"),
			Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1}},
		{"budget zero", headers(HeaderBudget, "0"), Request{Budget: 0, HasBudget: true}},
		{"deadline zero", headers(HeaderDeadline, "0"), Request{Deadline: 0, HasDeadline: true}},
		{"leading zeros", headers(HeaderBudget, "007", HeaderAttempt, "02"), Request{Budget: 7, HasBudget: true, Attempt: 2}},
		{"budget at max", headers(HeaderBudget, "1000"), Request{Budget: MaxBudget, HasBudget: true}},
		{"budget clamped", headers(HeaderBudget, "1001"), Request{Budget: MaxBudget, HasBudget: true}},
		{"budget clamped from int32 max", headers(HeaderBudget, "2147483647"), Request{Budget: MaxBudget, HasBudget: true}},
		{"deadline at max", headers(HeaderDeadline, "86400000"), Request{Deadline: MaxDeadline, HasDeadline: true}},
		{"deadline clamped", headers(HeaderDeadline, "86400001"), Request{Deadline: MaxDeadline, HasDeadline: true}},
		{"attempt clamped", headers(HeaderAttempt, "5000"), Request{Attempt: MaxAttempt}},
		{"first value of several", headers(HeaderBudget, "3", HeaderBudget, "9"), Request{Budget: 3, HasBudget: true}},
		{"metadata", nil, Request{Budget: 4, HasBudget: true, Deadline: time.Second, HasDeadline: true, Attempt: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g Getter = tt.h
			if tt.h == nil {
				g = Metadata{"recoil-retry-budget": {"4"}, "recoil-deadline-ms": {"1000"}, "recoil-attempt": {"2"}}
			}
			got, err := ParseRequest(g)
			if err != nil {
				t.Fatalf("ParseRequest(%v) error = %v, want nil", tt.h, err)
			}
			if got != tt.want {
				t.Errorf("ParseRequest(%v) = %+v, want %+v", tt.h, got, tt.want)
			}
		})
	}
}

// badValue is a header value a parser must reject, and the error it must
// report.
type badValue struct {
	value string
	err   error
}

// malformed are values every numeric header rejects.
var malformed = []badValue{
	{"-1", ErrSyntax},
	{"-0", ErrSyntax},
	{"+5", ErrSyntax},
	{" 5", ErrSyntax},
	{"5 ", ErrSyntax},
	{"\t5", ErrSyntax},
	{"5\n", ErrSyntax},
	{"1e3", ErrSyntax},
	{"1.5", ErrSyntax},
	{"1,2", ErrSyntax},
	{"2, 3", ErrSyntax},
	{"0x10", ErrSyntax},
	{"1_000", ErrSyntax},
	{"abc", ErrSyntax},
	{"NaN", ErrSyntax},
	{"Infinity", ErrSyntax},
	{"\uff15", ErrSyntax}, // fullwidth digit five
	{"\u0663", ErrSyntax}, // Arabic-Indic digit three
	{"5\x00", ErrSyntax},
	{"2147483648", ErrRange},                          // 1<<31
	{"9223372036854775807", ErrRange},                 // MaxInt64
	{"9223372036854775808", ErrRange},                 // MaxInt64+1, overflows int64
	{"18446744073709551617", ErrRange},                // MaxUint64+2, wraps to 1 in uint64
	{"99999999999999999999999999999999999", ErrRange}, // huge
	{strings.Repeat("9", 10000), ErrRange},
	{strings.Repeat("9", 10000) + "x", ErrSyntax},
}

func TestParseRequestMalformed(t *testing.T) {
	valid := map[string]string{HeaderBudget: "2", HeaderDeadline: "2950", HeaderAttempt: "1"}
	wantValid := Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1}
	for _, header := range []string{HeaderBudget, HeaderDeadline, HeaderAttempt} {
		cases := malformed
		if header == HeaderAttempt {
			cases = append(slices.Clone(malformed), badValue{"0", ErrRange}) // attempts count from 1
		}
		for _, tt := range cases {
			t.Run(header+"="+tt.value[:min(len(tt.value), 24)], func(t *testing.T) {
				h := http.Header{}
				for k, v := range valid {
					h[k] = []string{v}
				}
				h[header] = []string{tt.value}
				got, err := ParseRequest(h)

				// The malformed field reads as absent; the others are kept.
				want := wantValid
				switch header {
				case HeaderBudget:
					want.Budget, want.HasBudget = 0, false
				case HeaderDeadline:
					want.Deadline, want.HasDeadline = 0, false
				case HeaderAttempt:
					want.Attempt = 0
				}
				if got != want {
					t.Errorf("ParseRequest = %+v, want %+v", got, want)
				}
				var he *HeaderError
				if !errors.As(err, &he) {
					t.Fatalf("ParseRequest error = %v, want a *HeaderError", err)
				}
				if he.Header != header || he.Value != tt.value {
					t.Errorf("HeaderError{Header: %q, Value: %.30q}, want {%q, %.30q}", he.Header, he.Value, header, tt.value)
				}
				if !errors.Is(err, tt.err) {
					t.Errorf("errors.Is(%v, %v) = false, want true", err, tt.err)
				}
				msg := err.Error()
				if !strings.Contains(msg, header) || !strings.HasSuffix(msg, "; ignored") {
					t.Errorf("error %q does not name %s and say it was ignored", msg, header)
				}
				if len(msg) > 200 {
					t.Errorf("error message is %d bytes, want the value shortened: %.80q…", len(msg), msg)
				}
			})
		}
	}
}

func TestParseRequestSeveralMalformed(t *testing.T) {
	h := headers(HeaderBudget, "-1", HeaderDeadline, "1e3", HeaderAttempt, "0")
	got, err := ParseRequest(h)
	if got != (Request{}) {
		t.Errorf("ParseRequest = %+v, want the zero Request", got)
	}
	for _, header := range []string{HeaderBudget, HeaderDeadline, HeaderAttempt} {
		if !strings.Contains(err.Error(), header) {
			t.Errorf("error %q does not name %s", err, header)
		}
	}
	if !errors.Is(err, ErrSyntax) || !errors.Is(err, ErrRange) {
		t.Errorf("error %v, want both ErrSyntax and ErrRange inside", err)
	}
}

func TestHeaderErrorMessage(t *testing.T) {
	tests := []struct {
		err  *HeaderError
		want string
	}{
		{&HeaderError{HeaderBudget, "1e3", ErrSyntax},
			`hop: Recoil-Retry-Budget "1e3": invalid syntax, want decimal digits only; ignored`},
		{&HeaderError{HeaderDeadline, "99999999999", ErrRange},
			`hop: Recoil-Deadline-Ms "99999999999": out of range, want at most 2147483647; ignored`},
		{&HeaderError{HeaderAttempt, "0", ErrRange},
			`hop: Recoil-Attempt "0": out of range, want 1 to 2147483647; ignored`},
		{&HeaderError{HeaderRetry, "maybe", ErrSyntax},
			`hop: Recoil-Retry "maybe": invalid syntax, want "no"; ignored`},
		{&HeaderError{HeaderSpent, "\x1b[31mred", ErrSyntax},
			`hop: Recoil-Retries-Spent "\x1b[31mred": invalid syntax, want decimal digits only; ignored`},
		{&HeaderError{HeaderBudget, "x", nil},
			`hop: Recoil-Retry-Budget "x": malformed; ignored`},
		{&HeaderError{HeaderBudget, "x", errors.New("other")},
			`hop: Recoil-Retry-Budget "x": other; ignored`},
		{&HeaderError{HeaderSpent, strings.Repeat("a", 100), ErrSyntax},
			`hop: Recoil-Retries-Spent "` + strings.Repeat("a", 64) + `"…: invalid syntax, want decimal digits only; ignored`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %s, want %s", got, tt.want)
		}
	}
}

func TestRequestWrite(t *testing.T) {
	tests := []struct {
		name string
		r    Request
		want http.Header
	}{
		{"zero writes nothing", Request{}, http.Header{}},
		{"all", Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1},
			headers(HeaderBudget, "2", HeaderDeadline, "2950", HeaderAttempt, "1")},
		{"Has false ignores values", Request{Budget: 5, Deadline: time.Second}, http.Header{}},
		{"budget zero is written", Request{HasBudget: true}, headers(HeaderBudget, "0")},
		{"negative budget", Request{Budget: -3, HasBudget: true}, headers(HeaderBudget, "0")},
		{"budget clamped", Request{Budget: 1 << 40, HasBudget: true}, headers(HeaderBudget, "1000")},
		{"deadline rounds down", Request{Deadline: 2950*time.Millisecond + 999*time.Microsecond, HasDeadline: true}, headers(HeaderDeadline, "2950")},
		{"sub-millisecond deadline", Request{Deadline: 999 * time.Microsecond, HasDeadline: true}, headers(HeaderDeadline, "0")},
		{"negative deadline", Request{Deadline: -time.Second, HasDeadline: true}, headers(HeaderDeadline, "0")},
		{"deadline clamped", Request{Deadline: 48 * time.Hour, HasDeadline: true}, headers(HeaderDeadline, "86400000")},
		{"negative attempt", Request{Attempt: -1}, http.Header{}},
		{"attempt clamped", Request{Attempt: 1 << 40}, headers(HeaderAttempt, "1000")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := http.Header{}
			tt.r.Write(got)
			if !equalHeader(got, tt.want) {
				t.Errorf("%+v.Write: %v, want %v", tt.r, got, tt.want)
			}
		})
	}
}

func TestRequestWriteKeepsOtherHeaders(t *testing.T) {
	h := headers("Authorization", "secret", HeaderDeadline, "10")
	Request{Budget: 1, HasBudget: true}.Write(h)
	want := headers("Authorization", "secret", HeaderDeadline, "10", HeaderBudget, "1")
	if !equalHeader(h, want) {
		t.Errorf("after Write: %v, want %v", h, want)
	}
}

func TestRequestRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{},
		{Budget: 0, HasBudget: true},
		{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1},
		{Budget: MaxBudget, HasBudget: true, Deadline: MaxDeadline, HasDeadline: true, Attempt: MaxAttempt},
		{Deadline: 0, HasDeadline: true},
		{Attempt: 3},
	} {
		for _, s := range []interface {
			Getter
			Setter
		}{http.Header{}, Metadata{}} {
			r.Write(s)
			got, err := ParseRequest(s)
			if err != nil || got != r {
				t.Errorf("ParseRequest(%T after Write(%+v)) = %+v, %v, want the same, nil", s, r, got, err)
			}
		}
	}
}

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name    string
		h       http.Header
		want    Response
		wantErr error
	}{
		{"absent", headers(), Response{}, nil},
		{"spent", headers(HeaderSpent, "2"), Response{Spent: 2}, nil},
		{"spent zero", headers(HeaderSpent, "0"), Response{}, nil},
		{"spent clamped", headers(HeaderSpent, "1000000"), Response{Spent: MaxBudget}, nil},
		{"no retry", headers(HeaderRetry, "no"), Response{NoRetry: true}, nil},
		{"no retry upper case", headers(HeaderRetry, "NO"), Response{NoRetry: true}, nil},
		{"no retry mixed case", headers(HeaderRetry, "No"), Response{NoRetry: true}, nil},
		{"both", headers(HeaderSpent, "3", HeaderRetry, "no"), Response{Spent: 3, NoRetry: true}, nil},
		{"retry yes", headers(HeaderRetry, "yes"), Response{}, ErrSyntax},
		{"retry false", headers(HeaderRetry, "false"), Response{}, ErrSyntax},
		{"retry padded", headers(HeaderRetry, " no"), Response{}, ErrSyntax},
		{"retry list", headers(HeaderRetry, "no, no"), Response{}, ErrSyntax},
		{"retry bad, spent kept", headers(HeaderSpent, "1", HeaderRetry, "n0"), Response{Spent: 1}, ErrSyntax},
		{"spent bad, retry kept", headers(HeaderSpent, "-1", HeaderRetry, "no"), Response{NoRetry: true}, ErrSyntax},
		{"spent overflow", headers(HeaderSpent, "18446744073709551616"), Response{}, ErrRange},
		{"metadata", nil, Response{Spent: 2, NoRetry: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g Getter = tt.h
			if tt.h == nil {
				g = Metadata{"recoil-retries-spent": {"2"}, "recoil-retry": {"no"}}
			}
			got, err := ParseResponse(g)
			if got != tt.want {
				t.Errorf("ParseResponse(%v) = %+v, want %+v", tt.h, got, tt.want)
			}
			if tt.wantErr == nil && err != nil || !errors.Is(err, tt.wantErr) {
				t.Errorf("ParseResponse(%v) error = %v, want %v", tt.h, err, tt.wantErr)
			}
		})
	}
}

func TestParseResponseMalformedSpent(t *testing.T) {
	for _, tt := range malformed {
		got, err := ParseResponse(headers(HeaderSpent, tt.value))
		var he *HeaderError
		if got != (Response{}) || !errors.As(err, &he) || he.Header != HeaderSpent || !errors.Is(err, tt.err) {
			t.Errorf("ParseResponse(%s: %.30q) = %+v, %v, want {}, a HeaderError for %s with %v",
				HeaderSpent, tt.value, got, err, HeaderSpent, tt.err)
		}
	}
}

func TestResponseWrite(t *testing.T) {
	tests := []struct {
		r    Response
		want http.Header
	}{
		{Response{}, http.Header{}},
		{Response{Spent: -1}, http.Header{}},
		{Response{Spent: 2}, headers(HeaderSpent, "2")},
		{Response{Spent: 5000}, headers(HeaderSpent, "1000")},
		{Response{NoRetry: true}, headers(HeaderRetry, "no")},
		{Response{Spent: 1, NoRetry: true}, headers(HeaderSpent, "1", HeaderRetry, "no")},
	}
	for _, tt := range tests {
		got := http.Header{}
		tt.r.Write(got)
		if !equalHeader(got, tt.want) {
			t.Errorf("%+v.Write: %v, want %v", tt.r, got, tt.want)
		}
		back, err := ParseResponse(got)
		want := Response{Spent: clamp(tt.r.Spent, MaxBudget), NoRetry: tt.r.NoRetry}
		if err != nil || back != want {
			t.Errorf("ParseResponse after %+v.Write = %+v, %v, want %+v, nil", tt.r, back, err, want)
		}
	}
}

func TestMetadata(t *testing.T) {
	md := Metadata{}
	Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1}.Write(md)
	Response{Spent: 2, NoRetry: true}.Write(md)
	md.Set("X-Other", "v")
	want := Metadata{
		"recoil-retry-budget":  {"2"},
		"recoil-deadline-ms":   {"2950"},
		"recoil-attempt":       {"1"},
		"recoil-retries-spent": {"2"},
		"recoil-retry":         {"no"},
		"x-other":              {"v"},
	}
	if !equalHeader(http.Header(md), http.Header(want)) {
		t.Errorf("metadata after Write = %v, want %v", md, want)
	}
	for _, key := range []string{"X-Other", "x-other", "X-OTHER"} {
		if got := md.Get(key); got != "v" {
			t.Errorf("Get(%q) = %q, want %q", key, got, "v")
		}
	}
	if got := md.Get("absent"); got != "" {
		t.Errorf(`Get("absent") = %q, want ""`, got)
	}
	if got := Metadata(nil).Get(HeaderBudget); got != "" {
		t.Errorf("nil Metadata Get = %q, want \"\"", got)
	}
	if got := (Metadata{"recoil-attempt": {}}).Get(HeaderAttempt); got != "" {
		t.Errorf("Get of a key with no values = %q, want \"\"", got)
	}
}

func TestParseAllocs(t *testing.T) {
	h := http.Header{}
	Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1}.Write(h)
	Response{Spent: 2, NoRetry: true}.Write(h)
	md := Metadata(h.Clone())
	for k, v := range md {
		delete(md, k)
		md[lower(k)] = v
	}
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"ParseRequest(http.Header)", func() { _, _ = ParseRequest(h) }},
		{"ParseResponse(http.Header)", func() { _, _ = ParseResponse(h) }},
		{"ParseRequest(Metadata)", func() { _, _ = ParseRequest(md) }},
		{"ParseResponse(Metadata)", func() { _, _ = ParseResponse(md) }},
	} {
		if got := testing.AllocsPerRun(100, tt.f); got != 0 {
			t.Errorf("%s: %v allocs, want 0", tt.name, got)
		}
	}
}

func equalHeader(a, b http.Header) bool {
	return maps.EqualFunc(a, b, slices.Equal[[]string])
}

// WriteHeader writes what Write writes, into an HTTP header map.
func TestWriteHeaderMatchesWrite(t *testing.T) {
	for _, r := range []Request{
		{},
		{Budget: 2, HasBudget: true, Attempt: 1},
		{Budget: 5000, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 3},
		{Deadline: 48 * time.Hour, HasDeadline: true},
		{Attempt: 7000},
	} {
		a, b := http.Header{}, http.Header{}
		r.Write(a)
		r.WriteHeader(b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%+v: WriteHeader wrote %v, Write %v", r, b, a)
		}
	}
}

func TestAccountBudget(t *testing.T) {
	tests := []struct {
		in    Request
		own   int
		trust bool
		want  int
	}{
		{Request{}, 0, false, DefaultHopBudget},            // an edge, configured with nothing
		{Request{}, 5, false, 5},                           // an edge with a budget of its own
		{Request{}, -1, false, 0},                          // negative means zero
		{Request{Budget: 1, HasBudget: true}, 5, false, 1}, // lowered by the caller
		{Request{Budget: 9, HasBudget: true}, 5, false, 5}, // never raised by an untrusted one
		{Request{Budget: 9, HasBudget: true}, 5, true, 9},  // a trusted caller's as it is
		{Request{Budget: 0, HasBudget: true}, 0, false, 0}, // a budget of 0 is a budget
	}
	for _, tt := range tests {
		if got := tt.in.AccountBudget(tt.own, tt.trust); got != tt.want {
			t.Errorf("%+v.AccountBudget(%d, %v) = %d, want %d", tt.in, tt.own, tt.trust, got, tt.want)
		}
	}
}
