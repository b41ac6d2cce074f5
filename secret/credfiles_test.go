package secret_test

import (
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/secret"
)

func TestCredentialFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path string
		want bool
	}{
		// Environment files, in any directory, any case, either separator.
		{".env", true}, {".env.local", true}, {".env.production", true}, {"prod.env", true}, {"config/.env", true},
		{".ENV", true}, {`app\.env`, true}, {"./a/../.env", true}, {".envrc", true},
		// Keys.
		{"server.pem", true}, {"tls/server.key", true}, {"id_rsa", true}, {"keys/id_ed25519", true}, {"id_ecdsa_sk", true},
		{"cert.p12", true}, {"release.jks", true}, {"putty.ppk", true}, {"http.keytab", true},
		// Registry and login files.
		{".netrc", true}, {"_netrc", true}, {".npmrc", true}, {".pypirc", true}, {".git-credentials", true}, {".pgpass", true},
		{".my.cnf", true}, {".vault-token", true}, {".s3cfg", true}, {".htpasswd", true}, {".yarnrc.yml", true},
		// Cloud CLIs and services.
		{"credentials.json", true}, {"service-account-prod.json", true}, {"application_default_credentials.json", true},
		{"infra/prod.tfvars", true}, {"terraform.tfstate", true}, {"config/secrets.yml", true}, {"kubeconfig", true},
		{".aws/credentials", true}, {".aws/config", true}, {"home/.ssh/config", true}, {".ssh/known_hosts", true},
		{".gnupg/pubring.kbx", true}, {".kube/config", true}, {".azure/accessTokens.json", true},
		{".config/gcloud/credentials.db", true}, {".config/gh/hosts.yml", true}, {".docker/config.json", true},
		{".password-store/mail.gpg", true}, {".cargo/credentials.toml", true},
		// Not credentials: templates, public keys, source files named alike,
		// directories named like a CLI's that hold code.
		{".env.example", false}, {".env.sample", false}, {"config/.env.template", false}, {".env.dist", false},
		{"id_rsa.pub", false}, {".ssh.pub", false}, {"id_map.go", false}, {"id_test.go", false}, {"identity.py", false},
		{"secrets.py", false}, {"secrets.go", false}, {"secret/redact.go", false}, {"credentials.go", false},
		{"environment.md", false}, {"src/env.ts", false}, {"envelope.txt", false}, {"README.md", false},
		{".docker/Dockerfile", false}, {"gcloud/deploy.sh", false}, {".config/gcloud", false}, {"docs/keys.md", false},
		{"", false}, {".", false}, {"/", false}, {"a/", false},
	} {
		if got := secret.CredentialFile(tt.path); got != tt.want {
			t.Errorf("CredentialFile(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestOneCredentialList: the places the sandbox hides, the work-dir check
// refuses and the start-up warning names are one list, which holds every
// place each of them used to list on its own; and a place that holds
// credentials anywhere is a credential to the file tools too.
func TestOneCredentialList(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	got := map[string]bool{}
	for _, p := range secret.HomeCredentials(home) {
		got[p] = true
	}
	// The lists that were: the sandbox's, the start-up warning's, and the
	// directory names and path suffixes CredentialFile matched.
	for _, rel := range []string{
		".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc", ".git-credentials",
		".config/gh", ".config/op", ".config/rclone", ".password-store", ".local/share/keyrings", ".pgpass",
		".npmrc", ".pypirc", ".cargo/credentials.toml", ".cargo/credentials", ".config/rein", ".mozilla",
		".config/google-chrome", ".config/chromium", ".pulumi", ".oci", ".terraform.d", ".m2", ".gem",
		".gcloud", ".config/gh/hosts.yml", ".config/hub", ".docker/config.json",
		".terraform.d/credentials.tfrc.json", ".gem/credentials", ".config/rclone/rclone.conf", ".config/doctl",
	} {
		if !got[filepath.Join(home, rel)] {
			t.Errorf("%s is not in secret.HomeCredentials", rel)
		}
	}
	for _, rel := range []string{".ssh/id_rsa", "proj/.aws/credentials", "x/.config/gcloud/adc.json", ".docker/config.json",
		".config/gh/hosts.yml", "a/.netrc", ".config/op/config", "deep/.oci/config", "p/.password-store/x.gpg"} {
		if !secret.CredentialFile(rel) {
			t.Errorf("CredentialFile(%q) = false for a place in the one list", rel)
		}
	}
	// Home-only places are not credentials inside a project.
	for _, rel := range []string{"proj/.docker/Dockerfile", "proj/.m2/settings.example.xml", "proj/.gem/specs.txt", "site/.mozilla/readme.md"} {
		if secret.CredentialFile(rel) {
			t.Errorf("CredentialFile(%q) = true; only home's is a credential place", rel)
		}
	}
}
