package secret

import (
	"path"
	"strings"
)

// credentialFilePatterns name files that hold credentials wherever they
// are (a work dir's .env as much as home's .netrc). Matched against the
// base name, lower-cased, with path.Match. Source files whose names merely
// start like one (id_map.go, secrets.py) are not matched: the patterns
// name data formats only.
var credentialFilePatterns = []string{
	// Environment files and direnv.
	".env", ".env.*", "*.env", ".envrc",
	// Keys and key stores.
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.keytab",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "id_xmss",
	// Login and package-registry credentials.
	".netrc", "_netrc", ".npmrc", ".yarnrc.yml", ".pypirc", ".git-credentials", ".pgpass", ".my.cnf",
	".boto", ".s3cfg", ".vault-token", ".terraformrc", "terraform.rc", ".dockercfg",
	"htpasswd", ".htpasswd", "kubeconfig",
	// Cloud and service credentials.
	"credentials", "credentials.json", "credentials.toml", "credentials.yaml", "credentials.yml", "credentials.tfrc.json",
	"service-account*.json", "application_default_credentials.json",
	"*.tfvars", "*.tfstate", "*.tfstate.backup",
	"secrets.json", "secrets.yaml", "secrets.yml", "secrets.toml", "secrets.ini", "secrets.env", "secrets.txt",
}

// credentialTemplates are names that match a pattern but, by convention,
// hold placeholders for the real thing.
var credentialTemplates = []string{".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"}

// credentialDirNames are directories all of whose files hold credentials,
// wherever they are.
var credentialDirNames = []string{".ssh", ".aws", ".gnupg", ".azure", ".kube", ".password-store", ".gcloud"}

// credentialPaths are path suffixes (directories, or files inside a
// directory whose other files are harmless) that hold credentials: the
// cloud and tool CLI configs under ~/.config and similar.
var credentialPaths = []string{
	".config/gcloud/", ".config/gh/hosts.yml", ".config/hub", ".docker/config.json",
	".terraform.d/credentials.tfrc.json", ".cargo/credentials", ".gem/credentials",
	".config/rclone/rclone.conf", ".config/doctl/", ".oci/", ".config/op/",
}

// CredentialFile reports whether the file at rel (a path relative to any
// root, slash- or OS-separated) is by its name a credential file: one that
// the file tools do not show without a question and the sandbox masks. It
// judges the name only; a file whose content holds an exported secret is
// found by the secret scan instead (Redactor.Find).
func CredentialFile(rel string) bool {
	p := strings.ToLower(path.Clean("/" + strings.ReplaceAll(rel, "\\", "/")))
	if p == "/" {
		return false
	}
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, dir := range elems[:len(elems)-1] {
		for _, d := range credentialDirNames {
			if dir == d {
				return true
			}
		}
	}
	for _, suffix := range credentialPaths {
		if strings.HasSuffix(suffix, "/") {
			if strings.Contains(p+"/", "/"+suffix) && !strings.HasSuffix(p+"/", "/"+suffix) {
				return true // a file inside the directory
			}
		} else if strings.HasSuffix(p, "/"+suffix) {
			return true
		}
	}
	base := elems[len(elems)-1]
	for _, t := range credentialTemplates {
		if base == t {
			return false
		}
	}
	if strings.HasSuffix(base, ".pub") {
		return false
	}
	return credentialNames.match(base)
}

// credentialNames is credentialFilePatterns compiled once: each pattern
// has at most one "*", so it is an exact name, or a prefix and a suffix.
// path.Match per pattern per call was a third of the path corpus's cost.
var credentialNames = compileNames(credentialFilePatterns)

type namePatterns struct {
	exact map[string]bool
	split [][2]string // prefix, suffix around the one "*"
}

func compileNames(pats []string) namePatterns {
	n := namePatterns{exact: map[string]bool{}}
	for _, p := range pats {
		if strings.ContainsAny(p, "?[\\") || strings.Count(p, "*") > 1 {
			panic("secret: credential pattern " + p + " needs path.Match") // a programming error, caught by the tests
		}
		if pre, suf, ok := strings.Cut(p, "*"); ok {
			n.split = append(n.split, [2]string{pre, suf})
		} else {
			n.exact[p] = true
		}
	}
	return n
}

func (n namePatterns) match(base string) bool {
	if n.exact[base] {
		return true
	}
	for _, ps := range n.split {
		if len(base) >= len(ps[0])+len(ps[1]) && strings.HasPrefix(base, ps[0]) && strings.HasSuffix(base, ps[1]) {
			return true
		}
	}
	return false
}
