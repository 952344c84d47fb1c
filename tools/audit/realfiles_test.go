package audit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// realFile is one entry of testdata/realfiles/files.txt.
type realFile struct {
	kind, repo, commit, path, extract string
}

func realFiles(t *testing.T) []realFile {
	f, err := os.Open("testdata/realfiles/files.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []realFile
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if len(fs) < 4 {
			t.Fatalf("files.txt: %q: want kind repository commit path [extract]", sc.Text())
		}
		rf := realFile{kind: fs[0], repo: fs[1], commit: fs[2], path: fs[3]}
		if len(fs) > 4 {
			rf.extract = fs[4]
		}
		out = append(out, rf)
	}
	return out
}

// goServiceConfig is the raw string literal of a Go file that holds a
// service config, as a user copying it out of the code would take it.
var goServiceConfig = regexp.MustCompile("(?s)`([^`]*methodConfig[^`]*)`")

// TestRealFiles scores the audit on real configuration files from public
// repositories (testdata/realfiles/files.txt, by reference; fetch.sh
// brings them): the share it reads without edits — every route, or a
// DestinationRule, read and none refused — must be at least 95 %. It also
// logs how many ConfigKind gives the kind they are listed as, which is how
// a directory or standard input chooses their reader. It runs
// under RECOIL_LONG=1 with RECOIL_AUDIT_CORPUS naming the fetched files'
// directory.
func TestRealFiles(t *testing.T) {
	if os.Getenv("RECOIL_LONG") == "" {
		t.Skip("RECOIL_LONG=1 runs the score on real files")
	}
	dir := os.Getenv("RECOIL_AUDIT_CORPUS")
	if dir == "" {
		t.Skip("RECOIL_AUDIT_CORPUS is not set: fetch the files with tools/audit/testdata/realfiles/fetch.sh DIR and name DIR")
	}
	files := realFiles(t)
	read, misread := 0, 0
	perKind := map[string][2]int{}
	for _, rf := range files {
		data, err := os.ReadFile(filepath.Join(dir, rf.repo, rf.path))
		if err != nil {
			t.Fatalf("%s %s: %v (fetch the files first)", rf.repo, rf.path, err)
		}
		if rf.extract == "go-string" {
			m := goServiceConfig.FindSubmatch(data)
			if m == nil {
				t.Fatalf("%s %s: no service config literal", rf.repo, rf.path)
			}
			data = m[1]
		}
		if k := ConfigKind(data); k != rf.kind {
			t.Logf("kind: %s %s: ConfigKind says %q, a directory would read it so", rf.repo, rf.path, k)
			misread++
		}
		c, err := ReadConfig(rf.kind, rf.path, data)
		n := perKind[rf.kind]
		n[1]++
		switch {
		case err != nil:
			t.Logf("not read: %s %s: %v", rf.repo, rf.path, err)
		case len(c.Routes) == 0 && len(c.Rules) == 0:
			t.Logf("not read: %s %s: nothing in it", rf.repo, rf.path)
		default:
			read++
			n[0]++
			t.Logf("read: %s %s: %d routes, %d rules, first %s", rf.repo, rf.path, len(c.Routes), len(c.Rules), firstRoute(c))
		}
		perKind[rf.kind] = n
	}
	for _, k := range []string{KindEnvoy, KindIstio, KindGRPC} {
		t.Logf("%-5s %d of %d", k, perKind[k][0], perKind[k][1])
	}
	t.Logf("kind as a directory or standard input would choose it: %d of %d", len(files)-misread, len(files))
	share := float64(read) / float64(len(files))
	t.Logf("read without edits: %d of %d (%.1f%%)", read, len(files), 100*share)
	if share < 0.95 {
		t.Errorf("read %d of %d real files (%.1f%%), want at least 95%%", read, len(files), 100*share)
	}
}

func firstRoute(c *Config) string {
	if len(c.Routes) == 0 {
		return "(rules only)"
	}
	r := c.Routes[0]
	return fmt.Sprintf("%s: %d attempts on %v", r.Label(), r.Retry.Attempts, r.Retry.On)
}
