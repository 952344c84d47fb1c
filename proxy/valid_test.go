package proxy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// validCases are JSON texts at the grammar's edges, valid and not.
var validCases = []string{
	``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{"a" : [1, 2.5, -0, 1e9, 1E+2, 1e-2]}`,
	`"x"`, `"\u00e9\n\t\"\\\/\b\f\r"`, `"\u00G0"`, `"\x"`, `"\u12"`, "\"a\x01\"", "\"\x7f\xff\xfe\"",
	`0`, `-0`, `01`, `-`, `1.`, `.5`, `1.e3`, `1e`, `1e+`, `+1`, `-01`, `1.5e-07`, `1x`,
	`true`, `false`, `null`, `tru`, `truex`, `nul`, `True`, `[true,false,null]`,
	`{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`, `[1 2]`,
	`[`, `]`, `{`, `}`, `[}`, `{]`, `[[[]]]`, `[[[]]`, `{"a":{"b":{"c":[{}]}}}`,
	`{} {}`, `1 2`, `"a" "b"`, "\ufeff{}", "{}\x00", "\t\r\n{}\t\r\n", `{"model":"gpt-4o","messages":[]}`,
	benchBody, benchAnswer,
}

// validJSON agrees with json.Valid on every case, on each case cut short
// at every byte, and on seeded random corruptions of the cases.
func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", s, got, want)
		}
	}
	for _, s := range validCases {
		for i := range len(s) + 1 {
			check(s[:i])
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	check(deep)
	check("[" + deep + "]")
	check(strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth))
	check(strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1))
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("{}[]\",:\\-+.eE0123456789tfnrul \t\n\x01\x80aA/u")
	seeds := validCases
	for range 20000 {
		b := []byte(seeds[r.IntN(len(seeds))]) // a copy: the cases stay as they are
		for range 1 + r.IntN(3) {
			switch op := r.IntN(3); {
			case len(b) == 0 || op == 0:
				i := r.IntN(len(b) + 1)
				b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
			case op == 1:
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			default:
				i := r.IntN(len(b))
				b = append(b[:i], b[i+1:]...)
			}
		}
		check(string(b))
	}
}

// FuzzValidJSON holds validJSON to json.Valid on any input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON checks a chat request with a long prompt, as every
// body is checked before a provider is called: validJSON against
// json.Valid.
func BenchmarkValidJSON(b *testing.B) {
	prompt := strings.Repeat(`The quick brown fox jumps over the lazy dog, \"quoted\"\n. `, 2000)
	body := []byte(`{"model":"gpt-4o","max_tokens":256,"messages":[{"role":"system","content":"` + prompt + `"},{"role":"user","content":"Summarise.","n":[1,2.5,-3e2,true,null]}]}`)
	for _, tc := range []struct {
		name  string
		valid func([]byte) bool
	}{{"encoding/json", json.Valid}, {"validJSON", validJSON}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !tc.valid(body) {
					b.Fatal("not valid")
				}
			}
		})
	}
}
