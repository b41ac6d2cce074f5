package sandbox

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseHelperArgs(t *testing.T) {
	t.Parallel()
	ok := []string{"-netns", "4:123"}
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"minimal", append(ok, "--", "/bin/sh", "-c", "true"), ""},
		{"grants and limits", append(ok, "-rx", "/usr", "-rw", "/w", "-dev", "/dev/null", "-cgroup", "/sys/fs/cgroup/pids/x", "-nproc", "9", "-fsize", "10", "-status-fd", "3", "--", "/bin/sh"), ""},
		{"relative grant", append(ok, "-r", "etc", "--", "/bin/sh"), "not absolute"},
		{"unclean grant", append(ok, "-rw", "/w/../etc", "--", "/bin/sh"), "not absolute"},
		{"no program", ok, "no program"},
		{"relative program", append(ok, "--", "sh"), "not an absolute path"},
		{"network", append(ok, "-net", "host", "--", "/bin/sh"), "network policy"},
		{"no netns", []string{"--", "/bin/sh"}, "DEV:INO"},
		{"bad netns", []string{"-netns", "4:x", "--", "/bin/sh"}, "DEV:INO"},
		{"status on stdout", append(ok, "-status-fd", "1", "--", "/bin/sh"), "above stderr"},
		{"same fd twice", append(ok, "-status-fd", "3", "-ruleset-fd", "3", "--", "/bin/sh"), "distinct"},
		{"ruleset and grants", append(ok, "-ruleset-fd", "4", "-rx", "/usr", "--", "/bin/sh"), "both"},
		{"negative limit", append(ok, "-nproc", "-1", "--", "/bin/sh"), "negative"},
		{"relative cgroup", append(ok, "-cgroup", "pids", "--", "/bin/sh"), "cgroup"},
		{"unknown flag", append(ok, "-x", "--", "/bin/sh"), "flag provided but not defined"},
		{"kept descriptors", append(ok, "-status-fd", "3", "-keep-fd", "5", "-keep-fd", "6", "--", "/bin/sh"), ""},
		{"keep stderr", append(ok, "-keep-fd", "2", "--", "/bin/sh"), "above stderr"},
		{"keep the status pipe", append(ok, "-status-fd", "3", "-keep-fd", "3", "--", "/bin/sh"), "distinct"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseHelperArgs(c.args)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("parseHelperArgs(%q) = %v, want error %q", c.args, err, c.wantErr)
			}
		})
	}
}

// FuzzHelperArgs: whatever the arguments, the parser either refuses them
// or yields a config whose paths are absolute and clean and which
// helperArgs writes back to the same config.
func FuzzHelperArgs(f *testing.F) {
	f.Add("-netns\x004:5\x00-rx\x00/usr\x00-rw\x00/w\x00--\x00/bin/sh\x00-c\x00true")
	f.Add("-netns\x001:1\x00-status-fd\x003\x00-nproc\x0010\x00-fsize\x001\x00-cgroup\x00/c\x00--\x00/x")
	f.Add("-r\x00/etc/../x\x00--\x00/bin/sh")
	f.Add("--\x00")
	f.Add("-netns\x001:1\x00-keep-fd\x005\x00-keep-fd\x006\x00--\x00/x")
	f.Add("-netns=0:0\x00-dev=/dev/null\x00-ls\x00/etc\x00/bin/sh\x00--\x00-x")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		cfg, err := parseHelperArgs(args)
		if err != nil {
			return
		}
		for _, g := range cfg.grants {
			if !filepath.IsAbs(g.path) || filepath.Clean(g.path) != g.path {
				t.Fatalf("grant path %q is not absolute and clean", g.path)
			}
			if !slices.Contains(grantKinds, g.kind) {
				t.Fatalf("unknown grant kind %q", g.kind)
			}
		}
		if len(cfg.argv) == 0 || !strings.HasPrefix(cfg.argv[0], "/") {
			t.Fatalf("program %q", cfg.argv)
		}
		again, err := parseHelperArgs(helperArgs(cfg))
		if err != nil {
			t.Fatalf("helperArgs(%+v) = %q does not parse: %v", cfg, helperArgs(cfg), err)
		}
		if !reflect.DeepEqual(again, cfg) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v", cfg, again)
		}
	})
}

func TestEnvCodec(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "EMPTY=", "WEIRD=a=b\nc", "LD_PRELOAD=/w/evil.so"}
	enc := encodeEnv(env)
	for _, kv := range enc {
		if !strings.HasPrefix(kv, envPrefix) {
			t.Errorf("encoded %q escapes the prefix: the helper would see it as its own variable", kv)
		}
	}
	noisy := append([]string{"HOME=/root", "LD_PRELOAD=x"}, enc...)
	slices.Reverse(noisy)
	got, err := decodeEnv(noisy)
	if err != nil || !slices.Equal(got, env) {
		t.Errorf("decodeEnv = %q, %v; want %q", got, err, env)
	}
	for _, bad := range [][]string{
		{envPrefix + "1=A=1"},                     // gap at 0
		{envPrefix + "0=A=1", envPrefix + "0=B"},  // repeated
		{envPrefix + "x=A"},                       // not a number
		{envPrefix + "01=A", envPrefix + "0=B=1"}, // leading zero
		{envPrefix + "-1=A"},
		{envPrefix + "0"},
	} {
		if got, err := decodeEnv(bad); err == nil {
			t.Errorf("decodeEnv(%q) = %q, want an error", bad, got)
		}
	}
}

// FuzzEnvCodec: any environment survives the trip to the helper, in
// order, whatever else the helper's environment holds.
func FuzzEnvCodec(f *testing.F) {
	f.Add("PATH=/bin\x00HOME=/h", "LD_PRELOAD=/x.so")
	f.Add("", "")
	f.Add("A=\x00A=\x00=\x00"+envPrefix+"0=x", "GODEBUG=x")
	f.Fuzz(func(t *testing.T, joined, other string) {
		var env []string
		if joined != "" {
			env = strings.Split(joined, "\x00")
		}
		enc := encodeEnv(env)
		if !strings.HasPrefix(other, envPrefix) {
			enc = append(enc, other)
		}
		got, err := decodeEnv(enc)
		if err != nil {
			t.Fatalf("decodeEnv: %v", err)
		}
		if !slices.Equal(got, env) {
			t.Fatalf("round trip: %q, want %q", got, env)
		}
	})
}

func TestSandboxEnv(t *testing.T) {
	t.Parallel()
	sandboxEnv := func(env []string, tmp string) []string { return landlockInside(tmp).forInside(env) }
	got := sandboxEnv([]string{"HOME=/root", "TMPDIR=/tmp", "GOCACHE=/c", "A=1"}, "/p")
	want := []string{"GOCACHE=/c", "A=1", "HOME=/p/home", "TMPDIR=/p", "GOPATH=/p/go", "XDG_CACHE_HOME=/p/cache"}
	if !slices.Equal(got, want) {
		t.Errorf("sandboxEnv = %q, want %q", got, want)
	}
	got = sandboxEnv(nil, "/p")
	want = []string{"HOME=/p/home", "TMPDIR=/p", "GOCACHE=/p/cache/go-build", "GOPATH=/p/go", "XDG_CACHE_HOME=/p/cache"}
	if !slices.Equal(got, want) {
		t.Errorf("sandboxEnv(nil) = %q, want %q", got, want)
	}
}

func TestHelperStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status string
		res    Result
		want   string // "" means no error
	}{
		{"S", Result{}, ""},
		{"SEexec /bin/sh: no such file", Result{ExitCode: 127}, "exec /bin/sh"},
		{"ELandlock ABI 5, need at least 6", Result{ExitCode: 126}, "ABI 5"},
		{"", Result{ExitCode: 80, Stderr: "rein: unknown command\nusage"}, "did not act as the sandbox helper"},
		{"", Result{TimedOut: true}, "before the timeout"},
		{"SS", Result{}, "did not act"},
	} {
		err := helperStatus([]byte(c.status), "/bin/rein", c.res)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("status %q: %v, want nil", c.status, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("status %q: %v, want ErrStart with %q", c.status, err, c.want)
		}
	}
}
