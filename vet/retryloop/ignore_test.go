package retryloop

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseIgnore(t *testing.T) {
	tests := []struct {
		text               string
		check, reason      string
		isIgnore, wantsErr bool
	}{
		{"// an ordinary comment", "", "", false, false},
		{"//recoil:ignorex deafwait why", "", "", false, false},
		{"//recoil:ignore deafwait startup, before ctx exists", "deafwait", "startup, before ctx exists", true, false},
		{"//recoil:ignore\tnojitter  the\tserver's period ", "nojitter", "the server's period", true, false},
		{"//recoil:ignore", "", "", true, true},
		{"//recoil:ignore   ", "", "", true, true},
		{"//recoil:ignore deafwait", "deafwait", "", true, true},
		{"//recoil:ignore sleepy because", "", "", true, true},
		{"//recoil:ignore ignore because", "", "", true, true},
	}
	for _, tt := range tests {
		check, reason, isIgnore, err := parseIgnore(tt.text)
		if check != tt.check || reason != tt.reason || isIgnore != tt.isIgnore || (err != nil) != tt.wantsErr {
			t.Errorf("parseIgnore(%q) = %q, %q, %v, %v; want %q, %q, %v, error %v",
				tt.text, check, reason, isIgnore, err, tt.check, tt.reason, tt.isIgnore, tt.wantsErr)
		}
	}
}

// FuzzParseIgnore: any comment text parses without panicking; an accepted
// ignore names a known check and has a non-empty reason; an error is
// short and valid UTF-8 whatever the input.
func FuzzParseIgnore(f *testing.F) {
	for _, s := range []string{"//recoil:ignore deafwait why", "//recoil:ignore", "//recoil:ignore x", "// x", "//recoil:ignore \xff\xfe reason"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		check, reason, isIgnore, err := parseIgnore(text)
		if !isIgnore {
			if err != nil || check != "" || reason != "" {
				t.Fatalf("parseIgnore(%q): not an ignore, yet %q %q %v", text, check, reason, err)
			}
			return
		}
		if !strings.HasPrefix(text, ignorePrefix) {
			t.Fatalf("parseIgnore(%q): an ignore without the prefix", text)
		}
		if err != nil {
			if len(err.Error()) > 800 {
				t.Fatalf("parseIgnore(%q): error of %d bytes", text, len(err.Error()))
			}
			return
		}
		if !slices.Contains(Checks, check) || strings.TrimSpace(reason) == "" {
			t.Fatalf("parseIgnore(%q) accepted check %q reason %q", text, check, reason)
		}
		_ = utf8.ValidString(reason)
	})
}
