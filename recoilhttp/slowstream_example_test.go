package recoilhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/recoilhttp"
)

// A provider that answers at once but sends its first token late: the
// stream succeeds, and the Transport tells the breaker it was slow. With a
// SlowCallRate, enough such streams open the breaker, and calls then fail
// fast instead of queueing behind a provider that has slowed down.
func ExampleSlowStream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: ping\ndata: {}\n\n") // headers and a keep-alive at once
		w.(http.Flusher).Flush()
		time.Sleep(100 * time.Millisecond) // the model takes its time
		io.WriteString(w, "event: content_block_delta\ndata: {\"text\":\"Hi\"}\n\n")
	}))
	defer srv.Close()

	b := breaker.Must(breaker.New(breaker.Settings{SlowCallRate: 0.5, MinRequests: 20}))
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: &recoilhttp.Transport{
		Base:   base,
		Policy: &recoil.Policy{Breaker: b},
		SlowStream: recoilhttp.SlowStream{
			FirstByte:          50 * time.Millisecond, // first token within 50 ms
			MinEventsPerSecond: 5,                     // then at least 5 deltas a second
		},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c := b.Counts()
	fmt.Println(resp.StatusCode, c.State, c.Requests, c.SlowCalls)
	// Output:
	// 200 closed 1 1
}
