module github.com/reinhq/rein

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/alecthomas/kong v1.17.0
	github.com/elastic/go-seccomp-bpf v1.6.0
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/net v0.63.0
	golang.org/x/text v0.44.0
	mvdan.cc/sh/v3 v3.14.1
)

require kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.50.0
	golang.org/x/tools v0.52.0 // indirect
)
