package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/recoil-go/recoil/sim/blast"
)

func init() {
	register(command{"blast", "a retry policy's blast radius: the arithmetic of seeds 000 and 001", runBlast})
}

const blastHelp = `usage: recoil blast [flags]

Prints the blast radius of a retry policy, worked out with the models of
seeds 000 and 001 (documented in package sim/blast): the hold time of a call
that fails every attempt, the org allowance it draws, the workers it occupies
by Little's law, the attempts that reach the bottom of retrying layers, and
seed 001's amplification model with and without backoff. Every default is a
seed's value, so with no flags it reproduces the seeds' figures.

Examples:
  recoil blast                              the seeds' figures
  recoil blast -attempts 3 -jitter full     a gentler schedule on seed 000's endpoint
  recoil blast -rate 600 -pool 64           a busier endpoint, a bigger pool
  recoil blast -failure 30% -retries 1      seed 001 at 30 % underlying failure, one retry
  recoil blast -layers 2 -backoff           two retrying layers, backoff configured
  recoil blast -json | jq .without_backoff.tipping

Tipping points: the tipping point is the underlying failure rate at which the
amplified load reaches capacity. "exact" is the root of load(f) = capacity,
found by bisection: 17.08 % without backoff and 36.64 % with it for seed 001.
"slider" is how seed 001 reads it off its failure-rate slider, which moves in
steps of -step (0.5 %): the first stop at which the load reaches capacity,
that is the exact value rounded up to the next step — 17.5 % and 37 %, the
figures the seed prints.

Held time: seed 000 counts a failing call's hold as the sleeping plus one
failure's time (15 s + 0.21 s, "15.2 s"), and the worker figures use that;
the hold with every attempt's failure time (16.05 s) is shown beside it.

Flags:
`

// blastFlags maps an Inputs field to the flag that sets it, so that an
// invalid value is reported against the flag.
var blastFlags = map[string]string{
	"Attempts": "attempts", "Base": "base", "Multiplier": "multiplier",
	"MaxDelay": "max", "Jitter": "jitter", "FailTime": "fail-time",
	"RatePerMinute": "rate", "OtherPerMinute": "other",
	"AllowancePerMinute": "allowance", "Pool": "pool", "Layers": "layers",
	"Offered": "offered", "Capacity": "capacity", "Failure": "failure",
	"Retries": "retries", "Backoff": "backoff", "SliderStep": "step",
}

func runBlast(_ context.Context, args []string, stdout, stderr io.Writer) error {
	in := blast.DefaultInputs()
	fs := newFlags("blast", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), blastHelp)
		fs.PrintDefaults()
	}
	fs.IntVar(&in.Attempts, "attempts", in.Attempts, "attempts per failing call (seed 000)")
	fs.DurationVar(&in.Base, "base", in.Base, "wait before the first retry (seed 000)")
	fs.Float64Var(&in.Multiplier, "multiplier", in.Multiplier, "growth of the wait per retry (seed 000)")
	fs.DurationVar(&in.MaxDelay, "max", in.MaxDelay, "cap on each wait, 0 for none (seed 000: none)")
	fs.TextVar(&in.Jitter, "jitter", in.Jitter, "jitter: none, full (mean wait halves) or equal (three quarters) (seed 000)")
	fs.DurationVar(&in.FailTime, "fail-time", in.FailTime, "time one failing attempt takes (seed 000)")
	fs.Float64Var(&in.RatePerMinute, "rate", in.RatePerMinute, "failing endpoint's requests per minute (seed 000)")
	fs.Float64Var(&in.OtherPerMinute, "other", in.OtherPerMinute, "every other endpoint's requests per minute (seed 000)")
	fs.Float64Var(&in.AllowancePerMinute, "allowance", in.AllowancePerMinute, "org request allowance per minute (seed 000)")
	fs.IntVar(&in.Pool, "pool", in.Pool, "workers shared by every endpoint (seed 000)")
	fs.IntVar(&in.Layers, "layers", in.Layers, "retrying layers, each making retries+1 attempts (seed 001)")
	fs.Float64Var(&in.Offered, "offered", in.Offered, "requests per second arriving (seed 001)")
	fs.Float64Var(&in.Capacity, "capacity", in.Capacity, "attempts per second the system serves before shedding (seed 001)")
	fs.Var((*rateFlag)(&in.Failure), "failure", "underlying failure rate, a fraction or a percentage: 0.2 or 20% (seed 001)")
	fs.IntVar(&in.Retries, "retries", in.Retries, "retries per request, attempts after the first (seed 001)")
	fs.BoolVar(&in.Backoff, "backoff", in.Backoff, "mark the with-backoff amplification as the configured one (seed 001: off)")
	fs.Float64Var(&in.SliderStep, "step", in.SliderStep, "step of the failure-rate slider the tipping point is read on (seed 001)")
	asJSON := fs.Bool("json", false, "print the figures as one JSON object")
	if err := parse(fs, args); err != nil {
		return err
	}
	r, err := blast.Compute(in)
	if err != nil {
		var ie *blast.InputError
		if errors.As(err, &ie) {
			return fmt.Errorf("%w: -%s %v: %s", errUsage, blastFlags[ie.Field], ie.Value, ie.Reason)
		}
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return writeBlast(stdout, &r)
}

// rateFlag is a failure rate given as a fraction (0.2) or a percentage (20%).
type rateFlag float64

func (f *rateFlag) String() string { return strconv.FormatFloat(float64(*f), 'g', -1, 64) }

func (f *rateFlag) Set(s string) error {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return fmt.Errorf("want a fraction such as 0.2 or a percentage such as 20%%")
	}
	if pct {
		v /= 100
	}
	*f = rateFlag(v)
	return nil
}

// writeBlast prints r as the text report.
func writeBlast(w io.Writer, r *blast.Report) error {
	in := r.Inputs
	p := &printer{w: w}
	conf := r.Policies[len(r.Policies)-1]

	p.f("recoil blast: the blast radius of a retry policy, by the arithmetic of seeds 000 and 001\n\n")

	p.f("Schedule (seed 000)\n")
	p.f("  %d attempts, waits from %v growing ×%s per retry%s, %s; one failing attempt takes %v\n",
		in.Attempts, in.Base, num(in.Multiplier, -2), maxNote(in.MaxDelay), jitterNote(in.Jitter), in.FailTime)
	if len(conf.CeilingsS) > 0 {
		p.f("  waits before retries 1…%d: %s", len(conf.CeilingsS), secondsList(conf.CeilingsS))
		if in.Jitter != blast.JitterNone {
			p.f(" at most; %s on average", secondsList(conf.WaitsS))
		}
		p.f("\n")
	}
	p.f("  asleep %s", secs(conf.SleepingS, time.Millisecond))
	if conf.SleepingMaxS != conf.SleepingS {
		p.f(" on average (at most %s)", secs(conf.SleepingMaxS, time.Millisecond))
	}
	p.f("; worker held %s — the sleeping plus one failure's %v, as seed 000 counts it\n",
		secs(conf.HeldS, 100*time.Millisecond), in.FailTime)
	p.f("  (held %s if every one of the %d attempts takes %v)\n\n",
		secs(conf.HeldEveryAttemptS, 10*time.Millisecond), conf.Attempts, in.FailTime)

	p.f("Allowance (seed 000): the failing endpoint at %s/min, %s/min elsewhere, %s/min for the organisation\n",
		num(in.RatePerMinute, 0), num(in.OtherPerMinute, 0), num(in.AllowancePerMinute, 0))
	t := table{{"policy", "attempts", "draw/min", "total/min", "headroom/min", ""}}
	for _, q := range r.Policies {
		t = append(t, []string{q.Name, strconv.Itoa(q.Attempts), num(q.DrawPerMinute, 0),
			num(q.TotalPerMinute, 0), num(q.HeadroomPerMinute, 0), allowanceNote(q)})
	}
	t.write(p)
	p.f("  rejected attempts the provider admitted count against the allowance exactly as successes do\n\n")

	p.f("Workers (seed 000, Little's law): %s/s × time held, against a pool of %d\n", num(conf.ArrivalPerS, 2), in.Pool)
	t = table{{"policy", "held", "workers", "held, every attempt", "workers", ""}}
	for _, q := range r.Policies {
		t = append(t, []string{q.Name, secs(q.HeldS, 100*time.Millisecond), num(q.Workers, 2),
			secs(q.HeldEveryAttemptS, 10*time.Millisecond), num(q.WorkersEveryAttempt, 2), poolNote(q, in)})
	}
	t.write(p)
	p.f("  (held as seed 000 counts it; \"every attempt\" adds each attempt's failure time)\n")
	p.f("\n")

	l := r.Layers
	p.f("Layers (seed 001): %d attempts at each of %d layers\n", l.AttemptsPerLayer, l.Layers)
	sent := make([]string, len(l.Sent))
	for i, s := range l.Sent {
		sent[i] = num(s, 0)
	}
	p.f("  attempts sent by layer 1…%d for one request: %s — %s reach the bottom\n\n", l.Layers, strings.Join(sent, ", "), num(l.Reach, 0))

	p.f("Amplification (seed 001): %s/s offered, capacity %s/s, %s underlying failure, retries per request %d\n",
		num(in.Offered, 0), num(in.Capacity, 0), pct(in.Failure), in.Retries)
	writeAmplification(p, r)
	p.f("\n")

	p.f("Tipping points: the underlying failure rate at which amplified load reaches capacity\n")
	t = table{{"", "exact", fmt.Sprintf("slider (%s steps)", pct(in.SliderStep)), ""}}
	for _, a := range []blast.Amplification{r.WithoutBackoff, r.WithBackoff} {
		if a.Tipping.Exists {
			t = append(t, []string{backoffName(a), pct(a.Tipping.Exact), pct(a.Tipping.Slider), ""})
		} else {
			t = append(t, []string{backoffName(a), "none", "none", "load stays below capacity even at 100%"})
		}
	}
	t.write(p)
	p.f("  below a tipping point retries recover real work; above it they are the outage\n")
	p.f("  (the slider reading is the exact crossing rounded up to the slider's next stop, as seed 001 shows it)\n")
	return p.err
}

// writeAmplification prints seed 001's model side by side without and with
// backoff.
func writeAmplification(p *printer, r *blast.Report) {
	no, bo := r.WithoutBackoff, r.WithBackoff
	t := table{{"", backoffName(no), backoffName(bo), ""}}
	for k := range no.Rounds {
		name := "first attempts/s"
		if k > 0 {
			name = fmt.Sprintf("retry round %d/s", k)
		}
		t = append(t, []string{name, num(no.Rounds[k].Attempts, -1), num(bo.Rounds[k].Attempts, -1),
			"window " + num(bo.Rounds[k].Window, 0) + " with backoff"})
	}
	row := func(name string, f func(a blast.Amplification) string) {
		t = append(t, []string{name, f(no), f(bo), ""})
	}
	row("load the system sees/s", func(a blast.Amplification) string { return num(a.Load, 0) })
	row("times more load than arrived", func(a blast.Amplification) string { return "×" + num(a.Factor, -3) })
	row("failure rate, retries counted", func(a blast.Amplification) string { return num(a.Failure, 3) })
	row("  of which no fault caused", func(a blast.Amplification) string { return num(a.Manufactured, 3) })
	row("share of attempts taken", func(a blast.Amplification) string { return num(a.Share, 3) })
	row("attempts served successfully/s", func(a blast.Amplification) string { return num(a.Served, 0) })
	row("capacity left over/s", func(a blast.Amplification) string { return num(a.Spare, 0) })
	row("load exceeds capacity", func(a blast.Amplification) string { return yesNo(a.Overloaded) })
	row("goodput with retries/s", func(a blast.Amplification) string { return num(a.Goodput, 0) })
	row("goodput without retries/s", func(a blast.Amplification) string { return num(a.GoodputNoRetries, 0) })
	row("work retries recover/s", func(a blast.Amplification) string { return num(a.Recovered, 0) })
	t.write(p)
}

// table is rows of cells: the first column is aligned left, the middle ones
// right, and the last, a note, follows unaligned.
type table [][]string

func (t table) write(p *printer) {
	var width []int
	for _, row := range t {
		for i, c := range row[:len(row)-1] {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range t {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range row[:len(row)-1] {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		if note := row[len(row)-1]; note != "" {
			b.WriteString("  " + note)
		}
		p.f("%s\n", strings.TrimRight(b.String(), " "))
	}
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func backoffName(a blast.Amplification) string {
	s := "no backoff"
	if a.Backoff {
		s = "with backoff"
	}
	if a.Configured {
		s += " (configured)"
	}
	return s
}

func allowanceNote(q blast.Policy) string {
	if q.OverAllowance {
		return fmt.Sprintf("over by %s/min: healthy endpoints take 429s", num(-q.HeadroomPerMinute, 0))
	}
	return ""
}

func poolNote(q blast.Policy, in blast.Inputs) string {
	if q.OverPool {
		return fmt.Sprintf("more than the pool of %d: the queue grows and every endpoint waits", in.Pool)
	}
	return "fits in the pool"
}

func maxNote(d time.Duration) string {
	if d <= 0 {
		return ", no cap"
	}
	return fmt.Sprintf(", capped at %v", d)
}

func jitterNote(j blast.Jitter) string {
	if j == blast.JitterNone {
		return "no jitter"
	}
	return j.String() + " jitter"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// secs prints s seconds as a duration rounded to unit from one second up,
// to the millisecond below: seed 000 prints 15.2s, 1.2s and 210ms.
func secs(s float64, unit time.Duration) string {
	d := time.Duration(math.Round(s * float64(time.Second)))
	if d >= time.Second {
		return d.Round(unit).String()
	}
	return d.Round(time.Millisecond).String()
}

func secondsList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = time.Duration(math.Round(x * float64(time.Second))).String()
	}
	return strings.Join(parts, ", ")
}

// pct prints a fraction as a percentage with up to two decimals: 17.08%, 37%.
func pct(x float64) string { return num(100*x, -2) + "%" }

// num prints x with thousands separators and the given number of decimals;
// a negative count means at most that many, trailing zeros dropped.
func num(x float64, decimals int) string {
	trim := decimals < 0
	if trim {
		decimals = -decimals
	}
	s := strconv.FormatFloat(math.Abs(x), 'f', decimals, 64)
	if trim && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if x < 0 && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}
