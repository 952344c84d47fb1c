package gateway

import (
	"net/http"
	"sync"
	"time"
)

// MaxSerial is the longest Config.Serial may be: a lane held longer than
// this by every attempt is no longer a transport being modelled but a
// gateway that answers nothing.
const MaxSerial = 10 * time.Second

// A serialising front end (Config.Serial): every attempt passes through one
// lane that carries one attempt at a time — a stdio pipe to one process, a
// single connection, a worker pool of one — holding it for Serial before
// the attempt reaches the dependency. Attempts that find the lane busy wait
// their turn in the order they arrived (FIFO). The dependency counts an
// attempt when it leaves the lane, so the receiving side sees at most one
// attempt per Serial however many callers there are, as a published
// experiment's stdio transport made its four callers arrive one after
// another.
//
// The lane is a single server with a constant service time: an attempt's
// hold begins when it arrived or when the hold before it ended, whichever
// is later, and ends Serial after that. The end is scheduled from the
// previous end, not from when the next attempt's goroutine was woken, so
// the machine's wake-up delays do not add up: a lane kept busy delivers
// one attempt per Serial, as a pipe of that throughput does, and not one
// per Serial plus the scheduler's latency.
//
// An attempt whose client goes away while it waits for the lane, or while
// it holds it, is neither served nor counted, and frees the lane at once;
// after Close the lane is held for no time, so queued attempts drain.

// lane is the single lane of a serialising gateway.
type lane struct {
	hold time.Duration

	mu      sync.Mutex
	busy    bool
	free    time.Time     // when the last hold ended, or is scheduled to
	waiting []*laneWaiter // FIFO
}

// laneWaiter is an attempt waiting for the lane; ready is closed when the
// lane is handed to it.
type laneWaiter struct {
	ready  chan struct{}
	handed bool // under lane.mu
}

func newLane(hold time.Duration) *lane {
	if hold <= 0 {
		return nil
	}
	return &lane{hold: hold}
}

// acquire waits for the lane, in FIFO order, and reports false if done was
// closed first (the lane then is not held).
func (l *lane) acquire(done <-chan struct{}) bool {
	l.mu.Lock()
	if !l.busy {
		l.busy = true
		l.mu.Unlock()
		return true
	}
	w := &laneWaiter{ready: make(chan struct{})}
	l.waiting = append(l.waiting, w)
	l.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-done:
	}
	l.mu.Lock()
	handed := w.handed
	if !handed {
		for i, o := range l.waiting {
			if o == w {
				l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
				break
			}
		}
	}
	l.mu.Unlock()
	if handed { // the lane was given to it as it left: pass it on
		l.release()
	}
	return false
}

// begin starts the hold of the attempt that has the lane and arrived at
// now, and returns when it ends: hold after its arrival or after the
// previous hold's end, whichever is later.
func (l *lane) begin(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.free.After(now) {
		now = l.free
	}
	l.free = now.Add(l.hold)
	return l.free
}

// cut ends the current hold early, at now.
func (l *lane) cut(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free = now
}

// release hands the lane to the attempt that has waited longest, or frees
// it.
func (l *lane) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiting) == 0 {
		l.busy = false
		return
	}
	w := l.waiting[0]
	l.waiting[0] = nil
	l.waiting = l.waiting[1:]
	w.handed = true
	close(w.ready)
}

// queued returns how many attempts wait for the lane.
func (l *lane) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting)
}

// serialise takes r, which reached the gateway at now, through the lane
// when Config.Serial is set: it waits its turn, holds the lane for Serial
// and frees it. It returns the instant the attempt reached the dependency
// — when its hold was scheduled to end, not when this goroutine was woken
// after it, a delay that is the machine's and not the lane's — and false if
// the client went away first: the attempt is then neither served nor
// counted. Without a lane it returns now at once.
func (g *Gateway) serialise(r *http.Request, now time.Time) (time.Time, bool) {
	l := g.lane
	if l == nil {
		return now, true
	}
	done := r.Context().Done()
	if !l.acquire(done) {
		return now, false
	}
	defer l.release()
	end := l.begin(now)
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case <-t.C:
		// It left the lane when its hold ended, however late a busy
		// machine woke this goroutine: counted then, the attempts are
		// one Serial apart, as the lane delivers them.
		return end, true
	case <-g.quit: // closed: carry it at once
		now = time.Now()
		l.cut(now)
		return now, true
	case <-done:
		l.cut(time.Now())
		return now, false
	}
}
