module github.com/recoil-go/recoil

go 1.25

require (
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)
