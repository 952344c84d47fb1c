package idempotency_test

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/recoil-go/recoil/idempotency"
)

func TestHeaderRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
	}{
		{"nil", nil},
		{"empty value", http.Header{"X-Empty": {""}}},
		{"no values", http.Header{"X-None": {}}},
		{"latin-1 filename", http.Header{"Content-Disposition": {"attachment; filename=\"caf\xe9.txt\""}}},
		{"repeated in order", http.Header{"Set-Cookie": {"z=1", "a=2", "m=3"}}},
		{"binary name and value", http.Header{"X-\xff\x00": {"\x00\x01\x80\xff"}}},
		{"long value", http.Header{"X-Long": {string(bytes.Repeat([]byte{0xab}, 70000))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := idempotency.MarshalHeader(tt.h)
			got, err := idempotency.UnmarshalHeader(b)
			if err != nil || !equalHeader(got, tt.h) {
				t.Fatalf("UnmarshalHeader(MarshalHeader(%q)) = %q, %v", tt.h, got, err)
			}
			if again := idempotency.MarshalHeader(got); !bytes.Equal(again, b) {
				t.Fatalf("the encoding of one header differs: %x and %x", b, again)
			}
		})
	}
}

func TestUnmarshalHeaderRejects(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"count past the end", []byte{0x01, 0x05}},
		{"name past the end", []byte{0x01, 0x01, 0x09, 'a'}},
		{"value count past the end", []byte{0x01, 0x01, 0x01, 'a', 0x07}},
		{"bytes after the end", []byte{0x01, 0x00, 0x00}},
		{"a name twice", []byte{0x01, 0x02, 0x01, 'a', 0x00, 0x01, 'a', 0x00}},
		{"varint overflow", []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"not json either", []byte("{\"a\":")},
		{"json of another shape", []byte(`{"a":"b"}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := idempotency.UnmarshalHeader(tt.data)
			if !errors.Is(err, idempotency.ErrHeaderEncoding) {
				t.Fatalf("UnmarshalHeader(%x) = %q, %v; want ErrHeaderEncoding", tt.data, h, err)
			}
		})
	}
}

// equalHeader compares two headers name by name, values in order; nil and
// empty are equal.
func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// FuzzUnmarshalHeader: no input panics or fails to come back as an error
// matching ErrHeaderEncoding, and whatever decodes encodes again to a
// header that decodes the same.
func FuzzUnmarshalHeader(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte(`{"Content-Type":["text/plain"]}`))
	f.Add([]byte("null"))
	f.Add(idempotency.MarshalHeader(http.Header{"Set-Cookie": {"a", "b"}, "X-\xff": {"\xfe"}}))
	f.Add([]byte{0x01, 0x02, 0x01, 'a', 0x00, 0x01, 'b', 0x01, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := idempotency.UnmarshalHeader(data)
		if err != nil {
			if !errors.Is(err, idempotency.ErrHeaderEncoding) {
				t.Fatalf("UnmarshalHeader(%x): %v does not match ErrHeaderEncoding", data, err)
			}
			return
		}
		back, err := idempotency.UnmarshalHeader(idempotency.MarshalHeader(h))
		if err != nil || !equalHeader(back, h) {
			t.Fatalf("round trip of %q = %q, %v", h, back, err)
		}
	})
}
