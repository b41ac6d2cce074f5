module github.com/reinhq/rein

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/alecthomas/kong v1.17.0
)

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
