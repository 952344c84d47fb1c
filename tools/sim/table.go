package sim

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
)

// DefaultWidth is the widest line WriteText writes: a table wider than
// this is split into parts that each repeat the row's key columns, and a
// description is wrapped.
const DefaultWidth = 120

// table is a text table: a header and rows of cells, written left-aligned
// two spaces apart. A table wider than the width it is written at is cut
// into parts of whole columns, each repeating the first keys columns, so
// that a column added to a table never pushes a line past the width.
type table struct {
	title string   // a line above the table ("clients"); "" for none
	keys  int      // the leading columns that say whose row it is
	head  []string // the columns' names, in words
	rows  [][]string
	notes []string // what a column means, when its name cannot say it all
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write writes t, split into parts no wider than width (0: one part, as
// wide as it is). An empty cell stays empty.
func (t *table) write(w io.Writer, width int) {
	widths := make([]int, len(t.head))
	for c, h := range t.head {
		widths[c] = utf8.RuneCountInString(h)
	}
	for _, row := range t.rows {
		for c, cell := range row {
			if c < len(widths) {
				widths[c] = max(widths[c], utf8.RuneCountInString(cell))
			}
		}
	}
	parts := splitColumns(widths, t.keys, width)
	var b strings.Builder
	for i, cols := range parts {
		if t.title != "" {
			b.WriteString(t.title)
			if len(parts) > 1 {
				b.WriteString(" (" + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(parts)) + ")")
			}
			b.WriteByte('\n')
		} else if i > 0 {
			b.WriteByte('\n')
		}
		writeLine(&b, t.head, cols, widths)
		for _, row := range t.rows {
			writeLine(&b, row, cols, widths)
		}
		if i < len(parts)-1 {
			b.WriteByte('\n')
		}
	}
	for _, n := range t.notes {
		b.WriteString(textfmt.Wrap(n, width, "  ") + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// splitColumns groups the columns after the first keys into parts that,
// with the key columns before them, fit in width.
//
// It takes the fewest parts that fit, and of the ways to cut into that many,
// one whose widest part is narrowest, so that parts are of like width rather
// than a full one and a last column alone.
func splitColumns(widths []int, keys, width int) [][]int {
	parts := packColumns(widths, keys, width)
	if width <= 0 || len(parts) == 1 {
		return parts
	}
	for w := width - 1; w > 0; w-- {
		p := packColumns(widths, keys, w)
		if len(p) != len(parts) {
			break
		}
		parts = p
	}
	return parts
}

// packColumns puts the columns after the first keys into parts greedily,
// each part as wide as width allows.
func packColumns(widths []int, keys, width int) [][]int {
	const gap = 2
	keys = min(keys, len(widths))
	keyW := 0
	var keyCols []int
	for c := range keys {
		keyW += widths[c] + gap
		keyCols = append(keyCols, c)
	}
	var parts [][]int
	cur, curW := append([]int(nil), keyCols...), keyW
	for c := keys; c < len(widths); c++ {
		if width > 0 && len(cur) > keys && curW+widths[c] > width {
			parts = append(parts, cur)
			cur, curW = append([]int(nil), keyCols...), keyW
		}
		cur = append(cur, c)
		curW += widths[c] + gap
	}
	return append(parts, cur)
}

func writeLine(b *strings.Builder, cells []string, cols, widths []int) {
	line := make([]byte, 0, 128)
	for i, c := range cols {
		cell := ""
		if c < len(cells) {
			cell = cells[c]
		}
		line = append(line, cell...)
		if i < len(cols)-1 {
			for range widths[c] - utf8.RuneCountInString(cell) + 2 {
				line = append(line, ' ')
			}
		}
	}
	b.WriteString(strings.TrimRight(string(line), " "))
	b.WriteByte('\n')
}
