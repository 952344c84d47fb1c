module github.com/recoil-go/recoil

go 1.26.0
