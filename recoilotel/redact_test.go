package recoilotel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"testing"

	"github.com/recoil-go/recoil/recoilotel"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://api.example.com/v1/messages", "https://api.example.com/v1/messages"},
		{"https://user:pw@api.example.com/", "https://REDACTED:REDACTED@api.example.com/"},
		{"https://maps.example.com/geo?key=AIza123&q=paris", "https://maps.example.com/geo?key=REDACTED&q=paris"},
		{"https://b.s3.example.com/o?X-Amz-Signature=abc&X-Amz-Credential=c%2Fd&v=1", "https://b.s3.example.com/o?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&v=1"},
		{"https://x.example.com/?API%5FKEY=k&sig=s&flag", "https://x.example.com/?API%5FKEY=REDACTED&sig=REDACTED&flag"},
		{"https://x.example.com/?monkey=1&keys=2", "https://x.example.com/?monkey=1&keys=2"},
		{"http://[::1]:8080/p?access_token=t#frag", "http://[::1]:8080/p?access_token=REDACTED#frag"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := recoilotel.RedactURL(u); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if u.String() != tt.in {
			t.Errorf("RedactURL(%q) changed its argument to %q", tt.in, u.String())
		}
	}
}

// FuzzRedactURL: whatever URL a caller sends, url.full parses again and
// carries no password and no value of a key or signing parameter.
func FuzzRedactURL(f *testing.F) {
	f.Add("https://u:p@h.example/a?key=k&x=1")
	f.Add("http://h/?Signature=s;x=1&sig")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if _, err := url.Parse(u.String()); err != nil {
			return // a URL Go itself cannot print back; nothing of ours
		}
		before := u.String()
		got := recoilotel.RedactURL(u)
		if u.String() != before {
			t.Fatalf("RedactURL changed its argument: %q to %q", before, u.String())
		}
		r, err := url.Parse(got)
		if err != nil {
			t.Fatalf("RedactURL(%q) = %q, which does not parse: %v", raw, got, err)
		}
		if u.User != nil {
			if p, _ := r.User.Password(); r.User.Username() != "REDACTED" || p != "REDACTED" {
				t.Fatalf("RedactURL(%q) = %q: user info kept", raw, got)
			}
		}
		for k, vs := range r.Query() {
			if !recoilotel.Redacted(k) {
				continue
			}
			for _, v := range vs {
				if v != "REDACTED" && v != "" {
					t.Fatalf("RedactURL(%q) = %q: %s=%q kept", raw, got, k, v)
				}
			}
		}
	})
}

func TestErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, "timeout"},
		{&url.Error{Op: "Get", URL: "http://h", Err: context.Canceled}, "canceled"},
		{&url.Error{Op: "Get", URL: "http://h", Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, "*net.OpError"},
		{errors.New("EOF"), "_OTHER"},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), "_OTHER"},
		{&net.DNSError{Err: "no such host", IsTimeout: true}, "timeout"},
	}
	for _, tt := range tests {
		if got := recoilotel.ErrorType(tt.err); got != tt.want {
			t.Errorf("errorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
