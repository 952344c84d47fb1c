// Package namedfold holds, written anew, loops around a helper whose
// results are named and returned bare: one that sets its error on a
// status that is not 200 folds the status into it, one that leaves the
// error nil there does not.
package namedfold

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"example.com/webutil"
)

type quote struct{ Price float64 }

// fetchQuote gets the day's quote; any status but 200 is an error.
func fetchQuote(day string) (q quote, err error) {
	body, status, err := webutil.GetRequest("https://api.example.com/history?date=" + day)
	if err != nil {
		return
	}
	if status != 200 {
		err = errors.New("non-200 status")
		return
	}
	err = json.Unmarshal(body, &q)
	return
}

// fetchQuoteLoose gets the day's quote; a status but 200 is no quote and
// no error.
func fetchQuoteLoose(day string) (q quote, ok bool, err error) {
	body, status, err := webutil.GetAny("https://api.example.com/history?date=" + day)
	if err != nil {
		return
	}
	if status != 200 {
		return
	}
	ok = true
	err = json.Unmarshal(body, &q)
	return
}

// Day by day; any failure, a 404 or a 429 as much as a reset, is asked
// again three seconds later, five times in all.
//
// case: flag unclassified nojitter retryafter
func history(days []string, out chan<- quote) {
	errs := 0
	for i := 0; i < len(days); { // want `unclassified: retry loop around fetchQuote retries on every error`
		q, err := fetchQuote(days[i])
		if err != nil {
			if errs < 5 {
				time.Sleep(3 * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
				errs++
				continue
			}
			return
		}
		out <- q
		i++
	}
}

// Day by day; only a failure that got no answer is asked again, a random
// time later; an answer that is not a quote is skipped.
//
// case: clean
func historyLoose(days []string, out chan<- quote) {
	errs := 0
	for i := 0; i < len(days); {
		q, ok, err := fetchQuoteLoose(days[i])
		if err != nil {
			if errs < 5 {
				time.Sleep(rand.N(3 * time.Second))
				errs++
				continue
			}
			return
		}
		if ok {
			out <- q
		}
		i++
	}
}
