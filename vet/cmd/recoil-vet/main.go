// Command recoil-vet finds retry loops and retry settings that turn a
// dependency's blip into an outage (package
// github.com/recoil-go/recoil/vet/retryloop).
//
// Run it by go vet, which gives it each package's compiled facts and
// checks test files too:
//
//	go install github.com/recoil-go/recoil/vet/cmd/recoil-vet@latest
//	go vet -vettool=$(which recoil-vet) ./...
//
// or on its own, with package patterns:
//
//	recoil-vet ./...
//	recoil-vet -fix ./...     # apply the mechanical fixes
//
// Invoked by go vet, it receives a single *.cfg file (and -V=full, -flags
// queries) and speaks vet's protocol (unitchecker); given package patterns
// it loads and checks them itself. The exit status is 0 when nothing is
// found, and non-zero when something is found or the packages do not load.
package main

import (
	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() {
	// singlechecker.Main hands a lone *.cfg argument (go vet's protocol) to
	// unitchecker.Run and loads package patterns itself otherwise.
	singlechecker.Main(retryloop.Analyzer)
}
