// Package tuplestatus holds, written anew, retry loops around a helper of
// the package that hands back the answer's status as its second result,
// taken in turn from another package's helper that does the same.
package tuplestatus

import (
	"encoding/json"
	"math/rand/v2"
	"time"

	"example.com/webutil"
)

type coin struct{ Supply float64 }

// coinInfo gets one coin's record; status is the answer's, 0 when none
// came.
func coinInfo(id string) (c coin, status int, err error) {
	var body []byte
	body, status, err = webutil.GetRequest("https://api.example.com/coins/" + id)
	if err != nil {
		return
	}
	err = json.Unmarshal(body, &c)
	return
}

// Only a 429 goes round, a constant minute later, without reading
// Retry-After; any other failure gives the coin up.
//
// case: flag nojitter retryafter
func supplies(ids []string) []coin {
	var out []coin
	for _, id := range ids {
		var c coin
		var status int
		var err error
		for tries := 0; tries < 4; tries++ {
			c, status, err = coinInfo(id)
			if err != nil {
				if status == 429 {
					time.Sleep(time.Minute) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 without reading Retry-After`
					continue
				}
				break
			}
			out = append(out, c)
			break
		}
	}
	return out
}

// Only a failure that got no answer goes round, a random time later.
//
// case: clean
func supplyOf(id string) (coin, error) {
	var err error
	for tries := 0; tries < 4; tries++ {
		var c coin
		var status int
		c, status, err = coinInfo(id)
		if err == nil {
			return c, nil
		}
		if status != 0 {
			return coin{}, err
		}
		time.Sleep(rand.N(time.Second))
	}
	return coin{}, err
}
