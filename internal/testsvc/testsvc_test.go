package testsvc

import (
	"fmt"
	"strings"
	"testing"
)

type fakeTB struct{ skipped, failed string }

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Skipf(format string, args ...any)  { f.skipped = fmt.Sprintf(format, args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestUnreachable(t *testing.T) {
	tests := []struct {
		name, require string
		wantSkip      bool
	}{
		{"skips by default", "", true},
		{"fails when required", "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("RECOIL_REQUIRE_SERVICES", tt.require)
			// Port 1 on loopback refuses connections.
			t.Setenv("RECOIL_REDIS_ADDR", "127.0.0.1:1")
			var f fakeTB
			Redis(&f)
			if tt.wantSkip && (f.skipped == "" || f.failed != "") {
				t.Fatalf("skipped=%q failed=%q, want a skip", f.skipped, f.failed)
			}
			if !tt.wantSkip && (f.failed == "" || f.skipped != "") {
				t.Fatalf("skipped=%q failed=%q, want a failure", f.skipped, f.failed)
			}
			msg := f.skipped + f.failed
			if !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "RECOIL_REDIS_ADDR") {
				t.Errorf("message %q does not name the address and the variable", msg)
			}
		})
	}
}

func TestPostgresBadURL(t *testing.T) {
	t.Setenv("RECOIL_POSTGRES_URL", "::not a url")
	var f fakeTB
	Postgres(&f)
	if f.failed == "" {
		t.Fatalf("a malformed RECOIL_POSTGRES_URL did not fail")
	}
}

func TestSkipUnlessLong(t *testing.T) {
	for _, tt := range []struct {
		env      string
		wantSkip bool
	}{{"", true}, {"0", true}, {"1", testing.Short()}} {
		t.Setenv("RECOIL_LONG", tt.env)
		var f fakeTB
		SkipUnlessLong(&f, "a long sweep")
		if got := f.skipped != ""; got != tt.wantSkip || Long() == tt.wantSkip {
			t.Errorf("RECOIL_LONG=%q: skipped %q, Long %v; want skipped %v", tt.env, f.skipped, Long(), tt.wantSkip)
		}
		if tt.wantSkip && !strings.Contains(f.skipped, "RECOIL_LONG=1") {
			t.Errorf("skip message %q does not say how to run it", f.skipped)
		}
	}
}
