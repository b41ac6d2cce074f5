package sandbox

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// etcTree is a small /etc with what a real one holds: secrets at the top
// and deep down, a directory others may not enter, symlinks, a socket.
func etcTree() fstest.MapFS {
	file := func(mode fs.FileMode) *fstest.MapFile { return &fstest.MapFile{Data: []byte("x"), Mode: mode} }
	dir := func(mode fs.FileMode) *fstest.MapFile { return &fstest.MapFile{Mode: fs.ModeDir | mode} }
	return fstest.MapFS{
		"passwd":                          file(0o644),
		"shadow":                          file(0o640),
		"shadow-":                         file(0o600),
		"gshadow":                         file(0o640),
		"sudoers":                         file(0o440),
		"sudoers.d":                       dir(0o750),
		"sudoers.d/admins":                file(0o440),
		"hosts":                           file(0o644),
		"localtime":                       {Data: []byte("/usr/share/zoneinfo/UTC"), Mode: fs.ModeSymlink | 0o777},
		"ssl":                             dir(0o755),
		"ssl/certs":                       dir(0o755),
		"ssl/certs/ca.pem":                file(0o644),
		"ssl/certs/link.pem":              {Data: []byte("ca.pem"), Mode: fs.ModeSymlink | 0o777},
		"ssl/private":                     dir(0o710),
		"ssl/private/key.pem":             file(0o640),
		"ssl/openssl.cnf":                 file(0o644),
		"ssh":                             dir(0o755),
		"ssh/ssh_config":                  file(0o644),
		"ssh/ssh_host_ed25519_key":        file(0o600),
		"ssh/ssh_host_ed25519_key.pub":    file(0o644),
		"apt":                             dir(0o755),
		"apt/sources.list.d":              dir(0o755),
		"apt/sources.list.d/debian.list":  file(0o644),
		"apt/apt.conf.d":                  dir(0o755),
		"apt/apt.conf.d/00proxy":          file(0o644),
		"postgresql/15/main/pg_hba.conf":  file(0o640),
		"postgresql/15/main/environment":  file(0o644),
		"run.sock":                        {Mode: fs.ModeSocket | 0o777},
		"empty":                           dir(0o755),
		"docker/key.json":                 file(0o600),
		"profile.d/colors.sh":             file(0o644),
		"security/opasswd":                file(0o600),
		"security/limits.conf":            file(0o644),
		"security/limits.d/rein.conf":     file(0o644),
		"security/namespace.d/secret.cfg": file(0o600),
	}
}

func TestReadableParts(t *testing.T) {
	t.Parallel()
	got := strings.Join(readableParts(etcTree(), "."), "\n") + "\n"
	golden := filepath.Join("testdata", "readable_parts.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("readable parts of /etc:\n%s\nwant (%s):\n%s", got, golden, want)
	}
	for _, secret := range []string{"shadow", "gshadow", "sudoers", "ssl/private", "ssh/ssh_host_ed25519_key", "docker/key.json", "postgresql/15/main/pg_hba.conf", "security/opasswd"} {
		for _, p := range strings.Fields(got) {
			if p == secret || strings.HasPrefix(secret, p+"/") {
				t.Errorf("%s is readable through the grant %s", secret, p)
			}
		}
	}
}

func TestReadablePartsWhole(t *testing.T) {
	t.Parallel()
	tree := fstest.MapFS{
		"a":   &fstest.MapFile{Mode: 0o644},
		"b/c": &fstest.MapFile{Mode: 0o644},
	}
	if got := readableParts(tree, "."); len(got) != 1 || got[0] != "." {
		t.Errorf("a world-readable tree gives %q, want the whole of it", got)
	}
	if got := readableParts(tree, "missing"); len(got) != 0 {
		t.Errorf("a missing tree gives %q, want nothing", got)
	}
}
