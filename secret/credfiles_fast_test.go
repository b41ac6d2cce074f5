package secret

import (
	"path"
	"strings"
	"testing"
)

// The compiled name patterns decide as path.Match over the list does.
func TestCredentialNamesAsPathMatch(t *testing.T) {
	t.Parallel()
	names := []string{".env", ".env.local", "prod.env", "a.pem", "x.key", "id_rsa", "id_rsa.pub", "service-account.json",
		"service-account-prod.json", "service-accountjson", "secrets.json", "secrets.py", "main.go", "env", ".envrc", "a.tfstate.backup",
		"credentials", "credentials.json.bak", "", "*", ".env.", "service-account*.json", "keystore", "x.keystore"}
	for _, p := range credentialFilePatterns {
		names = append(names, p, p+"x", "x"+p)
	}
	for _, n := range names {
		want := false
		for _, p := range credentialFilePatterns {
			if ok, _ := path.Match(p, n); ok {
				want = true
				break
			}
		}
		if got := credentialNames().match(n); got != want {
			t.Errorf("%q: compiled %v, path.Match %v", n, got, want)
		}
	}
}

func FuzzCredentialNames(f *testing.F) {
	for _, n := range []string{".env", "service-account-1.json", "a.pem", "x"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		if strings.Contains(n, "/") {
			return // a base name: CredentialFile splits on "/"
		}
		want := false
		for _, p := range credentialFilePatterns {
			if ok, _ := path.Match(p, n); ok {
				want = true
				break
			}
		}
		if got := credentialNames().match(n); got != want {
			t.Errorf("%q: compiled %v, path.Match %v", n, got, want)
		}
	})
}
