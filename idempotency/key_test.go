package idempotency_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/recoil-go/recoil/idempotency"
)

func TestParseKey(t *testing.T) {
	long := strings.Repeat("k", idempotency.DefaultMaxKeyLen)
	tests := []struct {
		name   string
		values []string
		max    int
		want   string
		reason string // empty: no error
	}{
		{"quoted, as the draft writes it", []string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`}, 0, "8e03978e-40d5-43e8-bc93-6894a57f9324", ""},
		{"bare token", []string{"recoil-0123abcd"}, 0, "recoil-0123abcd", ""},
		{"spaces around", []string{`  "k1" `}, 0, "k1", ""},
		{"escapes", []string{`"a\"b\\c"`}, 0, `a"b\c`, ""},
		{"quoted with a space inside", []string{`"a b"`}, 0, "a b", ""},
		{"longest", []string{long}, 0, long, ""},
		{"custom bound", []string{`"abcd"`}, 4, "abcd", ""},
		{"none", nil, 0, "", "no key"},
		{"empty", []string{""}, 0, "", "empty"},
		{"blank", []string{"  "}, 0, "", "empty"},
		{"empty quoted", []string{`""`}, 0, "", "empty"},
		{"two field lines", []string{"a", "b"}, 0, "", "more than one field line"},
		{"too long", []string{long + "k"}, 0, "", "longer than 255 bytes"},
		{"too long for a custom bound", []string{`"abcde"`}, 4, "", "longer than 4 bytes"},
		{"unterminated", []string{`"abc`}, 0, "", "no closing quote"},
		{"bad escape", []string{`"a\nb"`}, 0, "", `only \" and \\ may be escaped`},
		{"escape at the end", []string{`"a\`}, 0, "", "unterminated escape"},
		{"parameters", []string{`"a";x=1`}, 0, "", "parameters"},
		{"trailing", []string{`"a" "b"`}, 0, "", "after the closing quote"},
		{"bare with a space", []string{"a b"}, 0, "", "must be a token"},
		{"bare with a comma (a list)", []string{"a,b"}, 0, "", "must be a token"},
		{"control character", []string{"\"a\x01\""}, 0, "", "printable ASCII"},
		{"non-ASCII", []string{`"café"`}, 0, "", "printable ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := idempotency.ParseKey(tt.values, tt.max)
			if tt.reason == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseKey(%q) = %q, %v; want %q", tt.values, got, err, tt.want)
				}
				return
			}
			var ke *idempotency.KeyError
			if !errors.As(err, &ke) || !errors.Is(err, idempotency.ErrKey) || !strings.Contains(ke.Reason, tt.reason) {
				t.Fatalf("ParseKey(%q) = %q, %v; want a *KeyError saying %q", tt.values, got, err, tt.reason)
			}
		})
	}
}

// quote writes key as a Structured Field String.
func quote(key string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, "recoil-0123", `"a\"b"`, `"a";p`, `"`, `\`, "", " a ", "a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		key, err := idempotency.ParseKey([]string{v}, 64)
		if err != nil {
			if !errors.Is(err, idempotency.ErrKey) {
				t.Fatalf("ParseKey(%q): %v does not match ErrKey", v, err)
			}
			return
		}
		if key == "" || len(key) > 64 {
			t.Fatalf("ParseKey(%q) = %q: empty or longer than the bound", v, key)
		}
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("ParseKey(%q) = %q: holds a byte outside printable ASCII", v, key)
			}
		}
		// The key, written as the draft writes it, reads back the same.
		again, err := idempotency.ParseKey([]string{quote(key)}, 64)
		if err != nil || again != key {
			t.Fatalf("ParseKey(quote(%q)) = %q, %v", key, again, err)
		}
	})
}
