package secret

import (
	"path"
	"strings"
)

// credentialFilePatterns name files that hold credentials wherever they
// are (a work dir's .env as much as home's .netrc). Matched against the
// base name, case-insensitively.
var credentialFilePatterns = []string{
	".env", ".env.*", "*.env", ".envrc",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_*",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".my.cnf",
	"credentials", "credentials.json", "credentials.toml", "credentials.yaml", "credentials.yml",
	"service-account*.json", "application_default_credentials.json", "*.tfvars", "secrets.*",
	"htpasswd", ".htpasswd", "kubeconfig",
}

// credentialDirNames are directories all of whose files hold
// credentials (cloud CLI configs), wherever they are.
var credentialDirNames = []string{".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", "gcloud", ".gcloud"}

// CredentialFile reports whether the file at rel (a path relative to any
// root, slash- or OS-separated) is by its name a credential file: one that
// the file tools do not show without a question and the sandbox masks. It
// judges the name only; a file whose content holds an exported secret is
// found by the secret scan instead.
func CredentialFile(rel string) bool {
	p := strings.ToLower(path.Clean("/" + strings.ReplaceAll(rel, "\\", "/")))
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(elems) == 0 || elems[len(elems)-1] == "" {
		return false
	}
	for _, dir := range elems[:len(elems)-1] {
		for _, d := range credentialDirNames {
			if dir == d {
				return true
			}
		}
	}
	base := elems[len(elems)-1]
	if base == ".env.example" || base == ".env.sample" || base == ".env.template" || strings.HasSuffix(base, ".pub") {
		return false
	}
	for _, pat := range credentialFilePatterns {
		if ok, _ := path.Match(pat, base); ok {
			return true
		}
	}
	return false
}
