// Package bench compares recoil with other Go retry libraries. It is a
// separate module so that the peers never enter recoil's own go.mod; the
// benchmarks are in the _test.go files, and docs/benchmarks.md has the
// figures and the command that produced them.
package bench
