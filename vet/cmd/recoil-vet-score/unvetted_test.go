package main

import (
	"maps"
	"testing"
)

func TestUnvetted(t *testing.T) {
	listed := "example.com/m/ok\t/w/m/ok\t\n" +
		"example.com/m/dep\t/w/m/dep\tgithub.com/x/y@v1: reading https://proxy/x: 403 Forbidden\n" +
		"example.com/m/broken\t/w/m/broken\tbroken.go:3:1: expected 'package'\n" +
		"example.com/m/crash\t/w/m/crash\t\n" +
		"example.com/m/crashdep\t/w/m/crashdep\t\n" +
		"fmt\t/usr/local/go/src/fmt\t\n" +
		"short line\n"
	problems := []string{
		"example.com/m/crash: /tmp/recoil-vet: exit status 1",
		"example.com/m/crashdep: could not import example.com/m/crash (no package vetx file)",
		"example.com/m/ok/sub: /tmp/recoil-vet: exit status 1",
	}
	got := unvetted(listed, problems)
	want := map[string]string{
		"/w/m/dep":    "not loaded: github.com/x/y@v1: reading https://proxy/x: 403 Forbidden",
		"/w/m/broken": "not loaded: broken.go:3:1: expected 'package'",
		"/w/m/crash":  "not vetted: example.com/m/crash: /tmp/recoil-vet: exit status 1",
	}
	if !maps.Equal(got, want) {
		t.Errorf("unvetted:\n got %q\nwant %q", got, want)
	}
}
