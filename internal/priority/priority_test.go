package priority

import "testing"

func TestRank(t *testing.T) {
	for _, tt := range []struct {
		p     Priority
		retry bool
		want  int
	}{
		{Interactive, false, 0}, {Interactive, true, 1}, {Background, false, 2}, {Background, true, 3},
		{Priority(7), false, 2}, {Priority(7), true, 3},
	} {
		if got := Rank(tt.p, tt.retry); got != tt.want || got >= Ranks {
			t.Errorf("Rank(%v, %v) = %d, want %d (below %d)", tt.p, tt.retry, got, tt.want, Ranks)
		}
	}
	for p, want := range map[Priority]string{Interactive: "interactive", Background: "background", 12: "priority(12)"} {
		if got := p.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", p, got, want)
		}
	}
}
