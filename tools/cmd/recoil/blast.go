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

	"github.com/recoil-go/recoil/tools/sim/blast"
)

func init() {
	register(command{"blast", "a retry policy's blast radius: hold time, allowance, workers, amplification, tipping point", runBlast})
}

var blastHelp = help{
	usage: "recoil blast [flags]",
	about: `
Prints the blast radius of a retry policy, worked out with the models of
package sim/blast: the hold time of a call that fails every attempt, the
organisation's request allowance it draws, the workers it occupies by
Little's law, the attempts that reach the bottom of retrying layers, and the
amplification of load by retries with and without backoff, up to the tipping
point. The defaults are a worked example: a five-attempt wrapper retrying
anything that is not a 2xx (1 s doubling, no jitter) on a validator's 400
that takes 210 ms, for an endpoint at 140 requests a minute beside 1,450 a
minute of other traffic, under a 2,000-a-minute allowance and 24 workers;
and 1,000 requests a second against a capacity of 1,200 a second, 20 %
underlying failure, two retries per request at each of three layers.
-attempts and -retries describe one policy: give either, and the other
follows it.`,
	examples: `  recoil blast                              the worked example
  recoil blast -attempts 3 -jitter full     a gentler schedule on the same endpoint
  recoil blast -failure 30% -retries 1 -layers 2 -backoff
  recoil blast -json | jq .without_backoff.tipping`,
	notes: `
Tipping points: the tipping point is the underlying failure rate at which the
amplified load reaches capacity. "exact" is the root of load(f) = capacity,
found by bisection: 17.08 % without backoff and 36.64 % with it for the
defaults. "slider" reads it off a failure-rate slider that moves in steps of
-step (0.5 %): the first stop at which the load reaches capacity, that is the
exact value rounded up to the next step — 17.5 % and 37 %.

Held time: a failing call's hold is counted as the sleeping plus one
failure's time (15 s + 0.21 s, "15.2 s"), and the worker figures use that;
the hold with every attempt's failure time (16.05 s) is shown beside it.`,
	exit: "0 done; 2 usage error.",
}

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
	fs := newFlags("blast", stdout, blastHelp)
	fs.IntVar(&in.Attempts, "attempts", in.Attempts, "attempts per failing call, 1 to 100")
	fs.DurationVar(&in.Base, "base", in.Base, "wait before the first retry")
	fs.Float64Var(&in.Multiplier, "multiplier", in.Multiplier, "growth of the wait per retry, 1 to 100")
	fs.DurationVar(&in.MaxDelay, "max", in.MaxDelay, "cap on each wait, 0 for none")
	fs.TextVar(&in.Jitter, "jitter", in.Jitter, "jitter: none, full (mean wait halves) or equal (three quarters)")
	fs.DurationVar(&in.FailTime, "fail-time", in.FailTime, "time one failing attempt takes")
	fs.Float64Var(&in.RatePerMinute, "rate", in.RatePerMinute, "failing endpoint's requests per minute")
	fs.Float64Var(&in.OtherPerMinute, "other", in.OtherPerMinute, "every other endpoint's requests per minute")
	fs.Float64Var(&in.AllowancePerMinute, "allowance", in.AllowancePerMinute, "organisation's request allowance per minute")
	fs.IntVar(&in.Pool, "pool", in.Pool, "workers shared by every endpoint")
	fs.IntVar(&in.Layers, "layers", in.Layers, "retrying layers, each making retries+1 attempts, 1 to 64")
	fs.Float64Var(&in.Offered, "offered", in.Offered, "requests per second arriving")
	fs.Float64Var(&in.Capacity, "capacity", in.Capacity, "attempts per second the system serves before shedding")
	fs.Var((*rateFlag)(&in.Failure), "failure", "underlying failure rate, a fraction or a percentage: 0.2 or 20%")
	fs.IntVar(&in.Retries, "retries", in.Retries, "retries per request, attempts after the first, 0 to 40; -attempts less one when only -attempts is given")
	fs.BoolVar(&in.Backoff, "backoff", in.Backoff, "mark the with-backoff amplification as the configured one; set by -jitter full or equal, which spread the waits")
	fs.Float64Var(&in.SliderStep, "step", in.SliderStep, "step of the failure-rate slider the tipping point is read on, more than 0 and at most 1")
	asJSON := fs.Bool("json", false, "print the figures as one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := alignAttempts(fs, &in); err != nil {
		return err
	}
	// The library reads a zero multiplier or step as its default; given on
	// the command line, zero is a mistake to report.
	if err := fs.noZero(map[string]string{
		"multiplier": "must be between 1 and 100",
		"step":       "must be more than 0 and at most 1",
	}); err != nil {
		return err
	}
	r, err := blast.Compute(in)
	if err != nil {
		var ie *blast.InputError
		if errors.As(err, &ie) {
			if ie.Field == "Retries" && !fs.given("retries") { // it followed -attempts
				return usagef("-attempts %d: the layers and the amplification take at most %d attempts (-retries %s)", in.Attempts, maxRetries+1, ie.Reason)
			}
			return usagef("-%s %v: %s", blastFlags[ie.Field], ie.Value, ie.Reason)
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

// maxRetries is the most -retries the amplification model takes.
const maxRetries = 40

// alignAttempts makes -attempts and -retries describe one policy: given one
// of them, the other follows it (retries are the attempts after the first);
// given both, they must agree. Given neither, each keeps its worked example's
// value (five attempts for the schedule, two retries for the amplification).
// With -jitter full or equal and no -backoff, the amplification with backoff
// is the configured one: jittered waits spread the retries of calls that
// failed together, which is what the model's backoff windows stand for.
func alignAttempts(fs *flags, in *blast.Inputs) error {
	switch a, r := fs.given("attempts"), fs.given("retries"); {
	case a && r && in.Attempts != in.Retries+1:
		return usagef("-attempts %d and -retries %d disagree: -retries counts the attempts after the first (-attempts %d is -retries %d); give one of them",
			in.Attempts, in.Retries, in.Attempts, in.Attempts-1)
	case a && !r && in.Attempts >= 1: // an -attempts out of range is reported as given
		in.Retries = in.Attempts - 1
	case r && !a && in.Retries >= 0:
		in.Attempts = in.Retries + 1
	}
	if !fs.given("backoff") && in.Jitter != blast.JitterNone {
		in.Backoff = true
	}
	return nil
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

	p.f("recoil blast: the blast radius of a retry policy\n\n")

	p.f("Schedule\n")
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
	p.f("; worker held %s — the sleeping plus one failure's %v\n",
		secs(conf.HeldS, 100*time.Millisecond), in.FailTime)
	p.f("  (held %s if every one of the %d attempts takes %v)\n\n",
		secs(conf.HeldEveryAttemptS, 10*time.Millisecond), conf.Attempts, in.FailTime)

	p.f("Allowance: the failing endpoint at %s/min, %s/min elsewhere, %s/min for the organisation\n",
		num(in.RatePerMinute, 0), num(in.OtherPerMinute, 0), num(in.AllowancePerMinute, 0))
	t := table{{"policy", "attempts", "draw/min", "total/min", "headroom/min", ""}}
	for _, q := range r.Policies {
		t = append(t, []string{q.Name, strconv.Itoa(q.Attempts), num(q.DrawPerMinute, 0),
			num(q.TotalPerMinute, 0), num(q.HeadroomPerMinute, 0), allowanceNote(q)})
	}
	t.write(p)
	p.f("  rejected attempts the provider admitted count against the allowance exactly as successes do\n\n")

	p.f("Workers (Little's law): %s/s × time held, against a pool of %d\n", num(conf.ArrivalPerS, 2), in.Pool)
	t = table{{"policy", "held", "workers", "held, every attempt", "workers", ""}}
	for _, q := range r.Policies {
		t = append(t, []string{q.Name, secs(q.HeldS, 100*time.Millisecond), num(q.Workers, 2),
			secs(q.HeldEveryAttemptS, 10*time.Millisecond), num(q.WorkersEveryAttempt, 2), poolNote(q, in)})
	}
	t.write(p)
	p.f("  (held: the sleeping plus one failure's time; \"every attempt\" adds each attempt's failure time)\n")
	p.f("\n")

	l := r.Layers
	p.f("Layers: %d attempts at each of %d layers\n", l.AttemptsPerLayer, l.Layers)
	sent := make([]string, len(l.Sent))
	for i, s := range l.Sent {
		sent[i] = num(s, 0)
	}
	p.f("  attempts sent by layer 1…%d for one request: %s — %s reach the bottom\n\n", l.Layers, strings.Join(sent, ", "), num(l.Reach, 0))

	p.f("Amplification: %s/s offered, capacity %s/s, %s underlying failure, retries per request %d\n",
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
	p.f("  (the slider reading is the exact crossing rounded up to the slider's next stop)\n")
	return p.err
}

// writeAmplification prints the amplification model side by side without
// and with backoff.
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
	if bo.Goodput < no.Goodput {
		p.f("  with backoff the figures are one second's: later retry rounds land in later, longer windows, so the\n")
		p.f("  %s/s of goodput it shows less is work recovered after this second, not lost\n", num(no.Goodput-bo.Goodput, 0))
	}
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
// to the millisecond below: 15.2s, 1.2s and 210ms.
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
