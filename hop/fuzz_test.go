package hop

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reference parses a numeric header value with strconv, as a check on
// parseUint: ok is whether the value must be accepted, n what it reads as
// before clamping.
func reference(v string) (n int64, ok bool) {
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		return 0, false // a sign, a space, anything but digits
	}
	n, err := strconv.ParseInt(v, 10, 32)
	return n, err == nil
}

func FuzzParseRequest(f *testing.F) {
	f.Add("2", "2950", "1")
	f.Add("", "", "")
	f.Add("0", "0", "0")
	f.Add("1001", "86400001", "1001")
	f.Add("-1", "+5", " 5")
	f.Add("1e3", "1.5", "0x10")
	f.Add("2147483647", "2147483648", "18446744073709551617")
	f.Fuzz(func(t *testing.T, budget, deadline, attempt string) {
		h := http.Header{HeaderBudget: {budget}, HeaderDeadline: {deadline}, HeaderAttempt: {attempt}}
		r, err := ParseRequest(h)

		// Each field is accepted exactly when strconv agrees, and clamped.
		wantErrs := 0
		if n, ok := reference(budget); ok {
			if !r.HasBudget || int64(r.Budget) != min(n, MaxBudget) {
				t.Errorf("budget %q read as %d (has %v), want %d", budget, r.Budget, r.HasBudget, min(n, MaxBudget))
			}
		} else if r.HasBudget || r.Budget != 0 {
			t.Errorf("budget %q accepted as %d, want it absent", budget, r.Budget)
		} else if budget != "" {
			wantErrs++
		}
		if n, ok := reference(deadline); ok {
			want := min(time.Duration(n)*time.Millisecond, MaxDeadline)
			if !r.HasDeadline || r.Deadline != want {
				t.Errorf("deadline %q read as %v (has %v), want %v", deadline, r.Deadline, r.HasDeadline, want)
			}
		} else if r.HasDeadline || r.Deadline != 0 {
			t.Errorf("deadline %q accepted as %v, want it absent", deadline, r.Deadline)
		} else if deadline != "" {
			wantErrs++
		}
		if n, ok := reference(attempt); ok && n > 0 {
			if int64(r.Attempt) != min(n, MaxAttempt) {
				t.Errorf("attempt %q read as %d, want %d", attempt, r.Attempt, min(n, MaxAttempt))
			}
		} else if r.Attempt != 0 {
			t.Errorf("attempt %q accepted as %d, want it absent", attempt, r.Attempt)
		} else if attempt != "" {
			wantErrs++
		}
		checkErrors(t, err, wantErrs)

		// What was read writes and reads back the same.
		out := http.Header{}
		r.Write(out)
		back, err := ParseRequest(out)
		if err != nil || back != r {
			t.Errorf("ParseRequest(Write(%+v)) = %+v, %v, want the same, nil", r, back, err)
		}
		md := Metadata{}
		r.Write(md)
		if back, err := ParseRequest(md); err != nil || back != r {
			t.Errorf("ParseRequest(Metadata after Write(%+v)) = %+v, %v, want the same, nil", r, back, err)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add("2", "no")
	f.Add("", "")
	f.Add("0", "NO")
	f.Add("1001", "yes")
	f.Add("-1", "false")
	f.Add("9223372036854775808", " no")
	f.Fuzz(func(t *testing.T, spent, retry string) {
		h := http.Header{HeaderSpent: {spent}, HeaderRetry: {retry}}
		r, err := ParseResponse(h)

		wantErrs := 0
		if n, ok := reference(spent); ok {
			if int64(r.Spent) != min(n, MaxBudget) {
				t.Errorf("spent %q read as %d, want %d", spent, r.Spent, min(n, MaxBudget))
			}
		} else if r.Spent != 0 {
			t.Errorf("spent %q accepted as %d, want 0", spent, r.Spent)
		} else if spent != "" {
			wantErrs++
		}
		if want := strings.ToLower(retry) == "no" && len(retry) == 2; r.NoRetry != want {
			t.Errorf("retry %q read as NoRetry %v, want %v", retry, r.NoRetry, want)
		} else if !want && retry != "" {
			wantErrs++
		}
		checkErrors(t, err, wantErrs)

		out := http.Header{}
		r.Write(out)
		back, err := ParseResponse(out)
		if err != nil || back != r {
			t.Errorf("ParseResponse(Write(%+v)) = %+v, %v, want the same, nil", r, back, err)
		}
	})
}

// checkErrors checks that err holds n *HeaderErrors, each with a bounded
// message.
func checkErrors(t *testing.T, err error, n int) {
	t.Helper()
	var errs []error
	switch e := err.(type) {
	case nil:
	case interface{ Unwrap() []error }:
		errs = e.Unwrap()
	default:
		errs = []error{err}
	}
	if len(errs) != n {
		t.Fatalf("error %v holds %d errors, want %d", err, len(errs), n)
	}
	for _, e := range errs {
		var he *HeaderError
		if !errors.As(e, &he) || !(errors.Is(e, ErrSyntax) || errors.Is(e, ErrRange)) {
			t.Errorf("error %v, want a *HeaderError with ErrSyntax or ErrRange", e)
		}
		if msg := e.Error(); len(msg) > 4*maxQuoted+100 {
			t.Errorf("error message is %d bytes long, want the value shortened", len(msg))
		}
	}
}
