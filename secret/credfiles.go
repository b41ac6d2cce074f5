package secret

import (
	"path"
	"path/filepath"
	"strings"
	"sync"
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

// A credPlace is a place that holds credentials: a directory all of whose
// files do (dir), or one file. Anywhere places are credentials wherever
// they are (a work dir's .aws as much as home's); the others only under a
// home directory (home's .docker holds a login, a project's Dockerfiles).
type credPlace struct {
	path     string // slash-separated, relative
	dir      bool
	anywhere bool
}

// credentialPlaces is rein's one list of where credentials live: the file
// tools ask before showing what is in them, the sandbox hides them, no work
// dir may lie in or hold one, and rein warns at start about those in home.
// Name patterns that hold wherever a file is (.env, *.pem) are
// credentialFilePatterns.
var credentialPlaces = []credPlace{
	// Keys, and cloud, cluster and password stores.
	{".ssh", true, true}, {".gnupg", true, true}, {".aws", true, true}, {".azure", true, true},
	{".kube", true, true}, {".password-store", true, true}, {".gcloud", true, true},
	{".config/gcloud", true, true}, {".config/doctl", true, true}, {".oci", true, true}, {".config/op", true, true},
	{".pulumi", true, false}, {".local/share/keyrings", true, false},
	// Tool and registry logins.
	{".config/gh/hosts.yml", false, true}, {".config/gh", true, false}, {".config/hub", false, true},
	{".docker/config.json", false, true}, {".docker", true, false},
	{".terraform.d/credentials.tfrc.json", false, true}, {".terraform.d", true, false},
	{".cargo/credentials", false, true}, {".cargo/credentials.toml", false, true},
	{".gem/credentials", false, true}, {".gem", true, false},
	{".config/rclone/rclone.conf", false, true}, {".config/rclone", true, false},
	{".m2", true, false}, {".ngrok2", true, false}, {"Library/Keychains", true, false},
	{".vault-token", false, true}, {".boto", false, true}, {".s3cfg", false, true},
	{".netrc", false, true}, {".git-credentials", false, true}, {".pgpass", false, true},
	{".npmrc", false, true}, {".pypirc", false, true},
	// rein's own config, and browser profiles (cookies, saved passwords).
	{".config/rein", true, false}, {".mozilla", true, false},
	{".config/google-chrome", true, false}, {".config/chromium", true, false},
}

// CredentialPlaces returns the places of HomeCredentials relative to
// home, slash-separated: for matchers (the shell analyzer's) that look for
// them at any depth of a path.
func CredentialPlaces() []string {
	out := make([]string, len(credentialPlaces))
	for i, c := range credentialPlaces {
		out[i] = c.path
	}
	return out
}

// HomeCredentials returns every place under home where credentials live
// (credentialPlaces), whether or not it exists. No sandbox backend makes
// them readable to a command, and no work dir may be one, lie inside one
// or hold one.
func HomeCredentials(home string) []string {
	out := make([]string, len(credentialPlaces))
	for i, c := range credentialPlaces {
		out[i] = filepath.Join(home, filepath.FromSlash(c.path))
	}
	return out
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
	ps := p + "/"
	for _, c := range anywherePlaces() {
		switch {
		case c.dir && !strings.Contains(c.path, "/"):
			for _, dir := range elems[:len(elems)-1] {
				if dir == c.path {
					return true
				}
			}
		case c.dir:
			if strings.Contains(ps, c.inner) && !strings.HasSuffix(p, c.tail) {
				return true // a file inside the directory
			}
		case strings.HasSuffix(p, c.tail):
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
	return credentialNames().match(base)
}

// anyPlace is an anywhere credPlace with its needles made once: "/" + path
// (tail) and "/" + path + "/" (inner). Made per call, they were most of
// CredentialFile's cost on a large work dir's walk (sandbox's masks).
type anyPlace struct {
	credPlace
	tail, inner string
}

// anywherePlaces are the anywhere credentialPlaces, in order.
var anywherePlaces = sync.OnceValue(func() []anyPlace {
	var out []anyPlace
	for _, c := range credentialPlaces {
		if c.anywhere {
			out = append(out, anyPlace{c, "/" + c.path, "/" + c.path + "/"})
		}
	}
	return out
})

// credentialNames is credentialFilePatterns compiled once: each pattern
// has at most one "*", so it is an exact name, or a prefix and a suffix.
// path.Match per pattern per call was a third of the path corpus's cost.
var credentialNames = sync.OnceValue(func() namePatterns { return compileNames(credentialFilePatterns) })

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
