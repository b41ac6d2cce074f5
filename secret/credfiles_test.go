package secret_test

import (
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
