package retryloop

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ignorePrefix opens a comment that silences one finding.
const ignorePrefix = "//recoil:ignore"

// parseIgnore parses a comment's text (with its // marker). isIgnore is
// false for any other comment. A //recoil:ignore comment must name one of
// Checks and give a reason; err says what is missing.
func parseIgnore(text string) (check, reason string, isIgnore bool, err error) {
	rest, ok := strings.CutPrefix(text, ignorePrefix)
	if !ok {
		return "", "", false, nil
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false, nil // //recoil:ignoreXYZ is some other directive
	}
	fields := strings.Fields(rest)
	switch {
	case len(fields) == 0:
		return "", "", true, errors.New("//recoil:ignore needs a check and a reason: //recoil:ignore <check> <reason>")
	case !slices.Contains(Checks, fields[0]):
		return "", "", true, fmt.Errorf("//recoil:ignore names unknown check %q (one of %s)", truncate(fields[0], 40), strings.Join(Checks, ", "))
	case len(fields) == 1:
		return fields[0], "", true, fmt.Errorf("//recoil:ignore %s needs a reason: say why this finding is wrong here", fields[0])
	}
	return fields[0], strings.Join(fields[1:], " "), true, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r) + "…"
}
