// Package storetest is the conformance suite every idempotency.Store runs:
// the memory store's tests, redisstore's and pgstore's call Run with a
// fresh store (its own key prefix or table) per test, so the three are held
// to the same outcomes — one side effect for 100 concurrent duplicates, 422
// on a payload mismatch, the documented outcome of a handler that crashes
// after its side effect, fencing of a lease that was taken over.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/recoil-go/recoil/idempotency"
)

// NewStore returns a store for one test, empty and apart from every other
// test's (a table or a key prefix of its own), and cleans it up with
// t.Cleanup.
type NewStore func(t *testing.T) idempotency.Store

// Run runs the suite against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		run  func(*testing.T, idempotency.Store)
	}{
		{"lifecycle", lifecycle},
		{"scopes", scopes},
		{"bytes kept exactly", exactBytes},
		{"clients apart", clientsApart},
		{"trailers replayed", trailers},
		{"lease taken over", leaseTakenOver},
		{"100 concurrent duplicates", concurrentDuplicates},
		{"payload mismatch", mismatch},
		{"crash after the side effect", crashAfterEffect},
		{"5xx releases the key", releaseOn5xx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newStore(t))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func lifecycle(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	b, err := s.Begin(c, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateNew || b.Token == "" {
		t.Fatalf("Begin on a free key = %+v, %v; want new with a token", b, err)
	}
	tok := b.Token
	if b, err = s.Begin(c, "client-1", "k1", "fp", time.Minute); err != nil || b.State != idempotency.StateRunning || b.RetryIn <= 0 || b.RetryIn > time.Minute {
		t.Fatalf("Begin on a held key = %+v, %v; want running, its lease's remainder in RetryIn", b, err)
	}
	if b, err = s.Begin(c, "client-1", "k1", "other", time.Minute); err != nil || b.State != idempotency.StateMismatch {
		t.Fatalf("Begin with another fingerprint = %+v, %v; want mismatch", b, err)
	}
	if err := s.Complete(c, "client-1", "k1", "not-the-token", &idempotency.Response{Status: 200}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Complete with a wrong token = %v, want ErrLeaseLost", err)
	}
	want := &idempotency.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}, "X-Two": {"a", "b"}}, Body: []byte(`{"id":"ch_1"}` + "\x00\xff")}
	if err := s.Complete(c, "client-1", "k1", tok, want); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := s.Complete(c, "client-1", "k1", tok, &idempotency.Response{Status: 500}); err != nil {
		t.Fatalf("Complete again under the same token = %v, want nil (and no change)", err)
	}
	b, err = s.Begin(c, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateDone {
		t.Fatalf("Begin on a finished key = %+v, %v; want done", b, err)
	}
	if !sameResponse(b.Response, want) {
		t.Fatalf("stored response = %+v, want %+v exactly", b.Response, want)
	}
	if b, err = s.Begin(c, "client-1", "k1", "other", time.Minute); err != nil || b.State != idempotency.StateMismatch {
		t.Fatalf("Begin on a finished key with another fingerprint = %+v, %v; want mismatch", b, err)
	}
	// Release frees a key for the next request.
	b, _ = s.Begin(c, "client-1", "k2", "fp", time.Minute)
	if err := s.Release(c, "client-1", "k2", "not-the-token"); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Release with a wrong token = %v, want ErrLeaseLost", err)
	}
	if err := s.Release(c, "client-1", "k2", b.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if b, err = s.Begin(c, "client-1", "k2", "fp2", time.Minute); err != nil || b.State != idempotency.StateNew {
		t.Fatalf("Begin after Release = %+v, %v; want new (any fingerprint)", b, err)
	}
}

func sameResponse(a, b *idempotency.Response) bool {
	return a != nil && b != nil && a.Status == b.Status && bytes.Equal(a.Body, b.Body) &&
		sameHeader(a.Header, b.Header) && sameHeader(a.Trailer, b.Trailer)
}

// sameHeader reports whether two headers hold the same names with the
// same values in the same order, byte for byte.
func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if !slices.Equal(a[k], v) {
			return false
		}
	}
	return true
}

// scopes: a key in one scope is a key of its own in every other, and no
// two scope and key pairs spell one stored key, whatever bytes they hold.
func scopes(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	for _, scope := range []string{"a", "b", ""} {
		if b, err := s.Begin(c, scope, "same", "fp", time.Minute); err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(scope %q) = %+v, %v; want new: scopes are apart", scope, b, err)
		}
	}
	for _, pair := range [][2][2]string{
		{{"a\x00b", "c"}, {"a", "b\x00c"}},
		{{"a:b", "c"}, {"a", "b:c"}},
		{{"1:a", "b"}, {"1", "a:b"}},
		{{"ab", "c"}, {"a", "bc"}},
	} {
		first, second := pair[0], pair[1]
		b, err := s.Begin(c, first[0], first[1], "fp-first", time.Minute)
		if err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(%q, %q) = %+v, %v; want new", first[0], first[1], b, err)
		}
		if err := s.Complete(c, first[0], first[1], b.Token, &idempotency.Response{Status: 201, Body: []byte("first")}); err != nil {
			t.Fatal(err)
		}
		if b, err := s.Begin(c, second[0], second[1], "fp-second", time.Minute); err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(%q, %q) after (%q, %q) finished = %+v, %v; want new: the pairs are two keys", second[0], second[1], first[0], first[1], b, err)
		}
	}
}

// exactBytes: scope, key and every byte of the response come back as
// they went in — a binary body, header values that are not UTF-8 (a
// Latin-1 filename), a name that is not either, repeated fields in their
// order, and a trailer.
func exactBytes(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	body := make([]byte, 512)
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := &idempotency.Response{
		Status: 200,
		Header: http.Header{
			"Content-Disposition": {"attachment; filename=\"caf\xe9 \xff.txt\""},
			"Set-Cookie":          {"z=1", "a=2", "m=3"},
			"X-Caf\xe9":           {"\x80\x00\x01", ""},
			"Trailer":             {"X-Checksum"},
		},
		Body:    body,
		Trailer: http.Header{"X-Checksum": {"\xfe\xed", "second"}, "Grpc-Status": {"0"}},
	}
	for _, k := range []struct{ scope, key string }{{"\xff\xfe scope", "\x80key"}, {"caf\xe9", "k"}} {
		b, err := s.Begin(c, k.scope, k.key, "fp", time.Minute)
		if err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(%q, %q) = %+v, %v; want new: any bytes are a scope and a key", k.scope, k.key, b, err)
		}
		if err := s.Complete(c, k.scope, k.key, b.Token, want); err != nil {
			t.Fatalf("Complete(%q, %q): %v", k.scope, k.key, err)
		}
		b, err = s.Begin(c, k.scope, k.key, "fp", time.Minute)
		if err != nil || b.State != idempotency.StateDone {
			t.Fatalf("Begin(%q, %q) on the finished key = %+v, %v; want done", k.scope, k.key, b, err)
		}
		if !sameResponse(b.Response, want) {
			t.Fatalf("stored (%q, %q) = %#v, want %#v byte for byte", k.scope, k.key, *b.Response, *want)
		}
	}
}

// eventually polls cond every 10 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("after %v: %s", timeout, what)
		case <-tick.C:
		}
	}
}

func leaseTakenOver(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	first, err := s.Begin(c, "", "k", "fp", 200*time.Millisecond)
	if err != nil || first.State != idempotency.StateNew {
		t.Fatalf("Begin = %+v, %v", first, err)
	}
	var second idempotency.Begun
	eventually(t, 5*time.Second, "the key was never taken over after its lease", func() bool {
		second, err = s.Begin(c, "", "k", "fp", time.Minute)
		return err == nil && second.State == idempotency.StateNew
	})
	if second.Token == first.Token {
		t.Fatal("the new holder got the old token")
	}
	if err := s.Complete(c, "", "k", first.Token, &idempotency.Response{Status: 200, Body: []byte("stale")}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Complete by the holder whose lease was taken over = %v, want ErrLeaseLost", err)
	}
	if err := s.Complete(c, "", "k", second.Token, &idempotency.Response{Status: 200, Body: []byte("fresh")}); err != nil {
		t.Fatalf("Complete by the new holder: %v", err)
	}
	if b, _ := s.Begin(c, "", "k", "fp", time.Minute); b.State != idempotency.StateDone || string(b.Response.Body) != "fresh" {
		t.Fatalf("stored = %+v, want the new holder's response", b)
	}
}
