package audit

import "sort"

// Columns lays the mesh out for a chart, entry points at the left and
// leaves at the right: a service's column is the length of the longest
// path to it (from an entry, or from a service nothing calls), and within
// a column services are ordered by the mean row of their callers, so that
// edges cross as little as one pass can make them.
func (m *Mesh) Columns() [][]string {
	in := map[string][]string{}
	for _, e := range m.Edges {
		in[e.To] = append(in[e.To], e.From)
	}
	depth := map[string]int{}
	var d func(s string) int
	d = func(s string) int {
		if v, ok := depth[s]; ok {
			return v
		}
		depth[s] = 0 // no cycles: Parse refused them
		best := 0
		for _, c := range in[s] {
			best = max(best, d(c)+1)
		}
		depth[s] = best
		return best
	}
	var cols [][]string
	for _, s := range m.Services {
		c := d(s.Name)
		for len(cols) <= c {
			cols = append(cols, nil)
		}
		cols[c] = append(cols[c], s.Name)
	}
	row := map[string]float64{}
	for ci, col := range cols {
		key := map[string]float64{}
		for i, s := range col {
			key[s] = float64(i)
			if ci > 0 && len(in[s]) > 0 {
				sum := 0.0
				for _, c := range in[s] {
					sum += row[c]
				}
				key[s] = sum / float64(len(in[s]))
			}
		}
		sort.SliceStable(col, func(i, j int) bool { return key[col[i]] < key[col[j]] })
		for i, s := range col {
			// rows are centred on the tallest column's middle
			row[s] = float64(i) - float64(len(col)-1)/2
		}
	}
	return cols
}
