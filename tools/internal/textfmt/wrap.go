package textfmt

import (
	"strings"
	"unicode/utf8"
)

// Wrap breaks s into lines of at most width characters at spaces (0: one
// line), the lines after the first begun with indent, which counts toward
// their width; runs of spaces and line breaks in s become one space. A word
// longer than width has a line of its own. The result has no final newline.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		wl := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case width > 0 && n+1+wl > width:
			b.WriteString("\n" + indent)
			n = utf8.RuneCountInString(indent)
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += wl
	}
	return b.String()
}
