package sim

// A serialising transport: a client whose attempts all pass through one
// channel that carries one attempt at a time — a pipe to a child process,
// or a machine too busy to send more — so that each attempt waits for the
// others' (ClientSpec.Serial). Each attempt holds the channel for the
// transport's Time, then goes on to the service as usual; those that find
// it busy wait their turn in order. The service counts an attempt when it
// arrives, after its wait: the receiving side sees the attempts at most one
// per Time, however many callers there are.

// serial is one client's serialising transport.
type serial struct {
	time    sampler // how long each attempt holds the transport
	busy    bool
	waiting fifo // jobs waiting for the transport
}

// serialSend takes a client's attempt, job ji of call ci, into the
// client's transport: it is sent now if the transport is free and queued
// otherwise. It reports false if the client has no serialising transport.
func (w *world) serialSend(ci, ji int32) bool {
	c := w.calls.get(ci)
	if c.owner >= 0 {
		return false
	}
	s := w.clients[c.client].serial
	if s == nil {
		return false
	}
	if s.busy {
		s.waiting.push(ji)
		return true
	}
	w.serialStart(s, ji)
	return true
}

// serialStart gives the free transport s to job ji.
func (w *world) serialStart(s *serial, ji int32) {
	s.busy = true
	w.schedule(w.now+s.time.draw(w.rnd), evSerial, ji, 0)
}

// serialLeave: job ji has been carried. The transport takes the next
// attempt still waited for — one whose caller stopped waiting while it was
// queued (its attempt timed out) is never sent — and ji goes on to its
// service.
func (w *world) serialLeave(ji int32) {
	j := w.jobs.get(ji)
	s := w.clients[w.calls.get(j.call).client].serial
	s.busy = false
	for s.waiting.size > 0 {
		next := s.waiting.pop()
		nj := w.jobs.get(next)
		if w.live(nj) {
			w.serialStart(s, next)
			break
		}
		nj.acct = nil
		w.jobs.release(next)
	}
	if n := &w.nodes[j.node]; !n.latency.zero() {
		w.schedule(w.now+n.latency.draw(w.rnd), evReach, ji, 0)
		return
	}
	w.reach(ji)
}

// Serial is a client's serialising transport (ClientSpec.Serial): its
// attempts pass through one at a time, each holding it for Time before it
// goes on to the service. In a file:
//
//	serial: {time: 12ms}
//
// The zero value holds each attempt for no time at all, which changes
// nothing.
type Serial struct {
	// Time is how long each attempt holds the transport.
	Time Dist `yaml:"time" json:"time"`

	Pos Pos `yaml:"-" json:"-"`
}

func (s *Serial) validate(v *validator, record bool) {
	s.Time.validate(v)
	if record {
		v.errf(s.Pos, "serial", "a record's reads and writes are not sent through a serialising transport")
	}
}
