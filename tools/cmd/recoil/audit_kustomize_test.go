package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kustomizeDir is the kustomization docs/audit.md renders: a base whose
// VirtualService retries twice on connect-failure and refused-stream, and
// an overlay that patches it to four retries on 5xx and reset, 2 s each.
const kustomizeDir = "../../audit/testdata/kustomize"

// kustomizeBuild returns the command that renders a kustomization on this
// machine — kustomize build, or kubectl's built-in kustomize — or skips
// the test saying how to get one.
func kustomizeBuild(t *testing.T) []string {
	if bin, err := exec.LookPath("kustomize"); err == nil {
		return []string{bin, "build"}
	}
	if bin, err := exec.LookPath("kubectl"); err == nil {
		return []string{bin, "kustomize"}
	}
	t.Skip("neither kustomize nor kubectl is on PATH: go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.1 puts kustomize in $(go env GOPATH)/bin")
	return nil
}

// TestAuditKustomize renders the kustomization with the real kustomize and
// pipes it to recoil audit -, as docs/audit.md does. Under RECOIL_LONG=1:
// it runs a program from outside the repository. Each figure is worked out
// by hand in the comments, and docs/audit.md shows the overlay's output.
func TestAuditKustomize(t *testing.T) {
	if os.Getenv("RECOIL_LONG") == "" {
		t.Skip("RECOIL_LONG=1 renders tools/audit/testdata/kustomize with kustomize and audits the render")
	}
	build := kustomizeBuild(t)
	tests := []struct {
		dir  string
		want []string
	}{
		// The base: attempts 2 on connect-failure,refused-stream — a reset
		// only, 3 attempts; the DestinationRule's 10 retries in flight at
		// 100 calls: 1.1 sustained. 3 × 3 s per try and two waits of up to
		// 25 and 75 ms: 9.1 s, inside the 10 s timeout.
		{"base", []string{
			"clients of reviews → reviews  istio         3    reset       ×1.1  10 in flight  10s, 3s per try  ≤25ms, ≤75ms jittered",
			"reviews (leaf)      1            1 · 1 · 3 · 1           3",
			"hold: at most 9.1s on clients of reviews → reviews",
		}},
		// The overlay's patch: attempts 4 on 5xx,reset — 5 attempts for a
		// 503, a 500 and a reset, 1 for a 429. 5 × 2 s and waits of up to
		// 25, 75, 175 and 250 ms come to 10.525 s: the 10 s timeout bounds
		// the hold (the fifth attempt starts at 8.525 s, inside it).
		{"overlays/prod", []string{
			"clients of reviews → reviews  istio         5  503,500,reset       ×1.1  10 in flight  10s, 2s per try  ≤25ms, ≤75ms, ≤175ms, ≤250ms jittered",
			"reviews (leaf)      1            5 · 5 · 5 · 1           5        5        1.1",
			"hold: at most 10s on clients of reviews → reviews, bounded by timeout 10s",
			"no-budget: clients of reviews → reviews: 5 attempts per call",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := exec.CommandContext(t.Context(), build[0], append(build[1:], filepath.FromSlash(kustomizeDir+"/"+tt.dir))...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, errOut.String())
			}
			auditStdin = &out
			t.Cleanup(func() { auditStdin = os.Stdin })
			args := []string{"audit", "-"}
			c := runCLI(t.Context(), args...)
			c.check(t, args, exitOK, tt.want, nil)
			if tt.dir != "overlays/prod" {
				return
			}
			doc, err := os.ReadFile("../../../docs/audit.md")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(doc), "```\n"+c.stdout+"```\n") {
				t.Errorf("docs/audit.md does not show the output of kustomize build %s | recoil audit -:\n%s", tt.dir, c.stdout)
			}
		})
	}
}
