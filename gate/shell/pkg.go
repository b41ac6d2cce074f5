package shell

import "strings"

// subcmd returns the first operand of argv[from:] and its index, skipping
// options; valued lists options whose value is the next word.
func subcmd(argv []arg, from int, valued ...string) (string, int) {
	for i := from; i < len(argv); i++ {
		x := argv[i]
		if !x.lit {
			return "\x00", i
		}
		if x.val == "--" {
			if i+1 < len(argv) {
				return argv[i+1].val, i + 1
			}
			return "", len(argv)
		}
		if strings.HasPrefix(x.val, "-") && len(x.val) > 1 {
			if contains(valued, x.val) {
				i++
			}
			continue
		}
		return x.val, i
	}
	return "", len(argv)
}

func isOneOf(s string, list ...string) bool { return contains(list, s) }

// pkg judges package managers; it reports whether fam is one.
func (a *analyzer) pkg(fam string, argv []arg, sc *scope, cmd string) bool {
	install := func(what string) { a.ask(rulePackageInstall, what+" installs or changes packages", cmd) }
	publish := func(what string) { a.ask(rulePublish, what+" uploads to a package registry", cmd) }
	s, at := subcmd(argv, 1)
	switch fam {
	case "apt", "apt-get", "aptitude", "apt-fast", "nala":
		s, _ = subcmd(argv, 1, "-o", "-c", "-t", "--option", "--config-file", "--target-release")
		if isOneOf(s, "install", "reinstall", "remove", "purge", "upgrade", "dist-upgrade", "full-upgrade", "autoremove",
			"autopurge", "build-dep", "update", "satisfy", "markauto", "safe-upgrade") {
			install(fam + " " + s)
		}
	case "dpkg":
		for _, x := range argv[1:] {
			if isOneOf(x.val, "-i", "--install", "-r", "--remove", "-P", "--purge", "--unpack", "--configure", "-a",
				"--set-selections", "--force-all") {
				install("dpkg " + x.val)
				break
			}
		}
	case "rpm":
		for _, x := range argv[1:] {
			v := x.val
			if isOneOf(v, "--install", "--upgrade", "--freshen", "--erase", "--reinstall") ||
				len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:2], "iUFe") {
				install("rpm " + v)
				break
			}
		}
	case "yum", "dnf", "microdnf", "zypper", "tdnf", "up2date":
		s, _ = subcmd(argv, 1, "-c", "--setopt", "--releasever", "--installroot", "-x", "--exclude", "--repo", "--enablerepo", "--disablerepo")
		if isOneOf(s, "install", "in", "reinstall", "remove", "rm", "erase", "update", "upgrade", "up", "downgrade",
			"groupinstall", "localinstall", "distro-sync", "dup", "dist-upgrade", "autoremove", "patch", "group", "module", "swap") {
			install(fam + " " + s)
		}
	case "pacman", "yay", "paru", "pamac", "pikaur", "aura":
		for _, x := range argv[1:] {
			v := x.val
			if strings.HasPrefix(v, "--sync") || strings.HasPrefix(v, "--upgrade") || strings.HasPrefix(v, "--remove") ||
				v == "install" || v == "remove" || v == "upgrade" {
				install(fam)
				break
			}
			if len(v) > 1 && v[0] == '-' && v[1] != '-' {
				ops := v[1:]
				if strings.ContainsAny(ops, "UR") || strings.Contains(ops, "S") && (strings.ContainsAny(ops, "yu") || !strings.ContainsAny(ops, "silgp")) {
					install(fam + " " + v)
					break
				}
			}
		}
	case "apk":
		s, _ = subcmd(argv, 1, "-X", "--repository", "-p", "--root", "--arch", "--cache-dir", "--keys-dir")
		if isOneOf(s, "add", "del", "upgrade", "fix") {
			install("apk " + s)
		}
	case "brew":
		if isOneOf(s, "install", "reinstall", "upgrade", "uninstall", "remove", "rm", "tap", "link", "bundle", "unlink", "untap", "pin") {
			install("brew " + s)
		}
	case "port", "snap", "flatpak", "choco", "winget", "scoop", "sdk", "asdf", "mise", "rtx", "nvm", "pyenv", "rbenv",
		"volta", "fnm", "n", "rustup", "opam", "cabal", "stack", "luarocks", "pkg", "pkgin", "pkg_add", "xbps-install",
		"emerge", "eopkg", "swupd", "urpmi", "slackpkg", "installpkg", "easy_install", "cpan", "cpanm", "cpanp",
		"gem", "composer", "conda", "mamba", "micromamba", "pixi", "spack", "guix", "nix-env", "nix", "pipx", "dotnet",
		"vcpkg", "conan", "mas", "pecl", "pear", "raco", "julia", "elan", "ghcup", "tlmgr", "helm", "krew":
		return a.pkgTool(fam, s, at, argv, install, publish)
	case "cargo":
		if isOneOf(s, "install", "add", "binstall", "uninstall") {
			install("cargo " + s)
		} else if s == "publish" {
			publish("cargo publish")
		}
	case "pip", "pip-sync", "pipenv", "pdm", "poetry", "rye", "hatch", "uv", "uvx", "twine", "flit":
		a.pyPkg(fam, s, at, argv, install, publish)
	case "npm", "pnpm", "yarn", "yarnpkg", "bun", "cnpm", "tnpm", "npx", "pnpx", "bunx", "corepack", "ni", "nci":
		a.jsPkg(fam, argv, install, publish)
	case "docker", "podman":
		if s == "push" {
			publish(fam + " push")
		}
	default:
		return false
	}
	return true
}

func (a *analyzer) pkgTool(fam, s string, at int, argv []arg, install, publish func(string)) bool {
	next := ""
	if at+1 < len(argv) {
		next = argv[at+1].val
	}
	switch fam {
	case "nix-env":
		for _, x := range argv[1:] {
			v := x.val
			if isOneOf(v, "--install", "--uninstall", "--upgrade", "--set") || len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], "ieu") {
				install("nix-env")
				break
			}
		}
	case "nix":
		if isOneOf(s, "run", "shell", "develop") || s == "profile" && isOneOf(next, "install", "add", "remove", "upgrade") {
			install("nix " + s)
		}
	case "cpan", "cpanm", "cpanp", "easy_install", "installpkg", "emerge", "pkg_add", "xbps-install", "slackpkg", "urpmi", "swupd":
		if len(argv) > 1 {
			install(fam)
		}
	case "rustup":
		if isOneOf(s, "install", "update", "self", "default") || isOneOf(next, "install", "add", "update") {
			install("rustup " + s)
		}
	case "gem":
		if isOneOf(s, "install", "update", "uninstall", "i") {
			install("gem " + s)
		} else if s == "push" {
			publish("gem push")
		}
	case "composer":
		if isOneOf(s, "require", "install", "update", "global", "create-project", "remove", "upgrade", "u", "i") {
			install("composer " + s)
		}
	case "conda", "mamba", "micromamba", "pixi":
		if isOneOf(s, "install", "create", "update", "upgrade", "remove", "uninstall", "add") || s == "env" && isOneOf(next, "create", "update") {
			install(fam + " " + s)
		}
	case "dotnet":
		if s == "add" && next == "package" || s == "tool" && isOneOf(next, "install", "update", "run", "exec") || s == "workload" {
			install("dotnet " + s + " " + next)
		} else if s == "nuget" && next == "push" {
			publish("dotnet nuget push")
		}
	case "pipx":
		if isOneOf(s, "install", "inject", "upgrade", "upgrade-all", "reinstall", "reinstall-all", "run", "runpip", "install-all") {
			install("pipx " + s)
		}
	case "helm", "krew":
		if isOneOf(s, "install", "upgrade") {
			install(fam + " " + s)
		}
	default:
		if isOneOf(s, "install", "add", "reinstall", "upgrade", "update", "uninstall", "remove", "rm", "refresh", "i", "in", "get", "use", "global", "local") ||
			isOneOf(next, "install", "add") {
			install(fam + " " + s)
		}
	}
	return true
}

func (a *analyzer) pyPkg(fam, s string, at int, argv []arg, install, publish func(string)) {
	next := ""
	if at+1 < len(argv) {
		next = argv[at+1].val
	}
	switch fam {
	case "pip":
		if s == "config" {
			a.userConfig(fam, argv, s)
			return
		}
		s, _ = subcmd(argv, 1, "-i", "--index-url", "--extra-index-url", "-r", "--requirement", "-c", "--constraint",
			"--proxy", "--cert", "--client-cert", "--cache-dir", "--log", "--timeout", "--retries", "--src", "--prefix",
			"--root", "--target", "-t", "--python")
		if isOneOf(s, "install", "uninstall", "download", "wheel") && s != "download" && s != "wheel" {
			install("pip " + s)
		}
	case "pip-sync":
		install("pip-sync")
	case "uvx":
		install("uvx")
	case "uv":
		if isOneOf(s, "add", "sync", "remove") || s == "pip" && isOneOf(next, "install", "sync", "uninstall") ||
			s == "tool" && isOneOf(next, "install", "run", "upgrade", "uninstall") {
			install("uv " + s)
		} else if s == "publish" {
			publish("uv publish")
		}
		if s == "run" {
			for _, x := range argv {
				if x.val == "--with" || strings.HasPrefix(x.val, "--with=") {
					install("uv run --with")
					break
				}
			}
		}
	case "poetry", "pipenv", "pdm", "rye", "hatch":
		if isOneOf(s, "add", "install", "update", "sync", "remove", "upgrade", "lock") && !(fam == "poetry" && s == "lock") ||
			s == "self" && isOneOf(next, "add", "install", "update") {
			install(fam + " " + s)
		} else if s == "publish" {
			publish(fam + " publish")
		}
	case "twine", "flit":
		if isOneOf(s, "upload", "publish") {
			publish(fam + " " + s)
		}
	}
}

// userConfig refuses package manager settings written to the user's or
// the system's configuration files.
func (a *analyzer) userConfig(fam string, argv []arg, s string) {
	cmd := joinRaw(argv)
	write := s == "set"
	for _, x := range argv {
		if isOneOf(x.val, "set", "delete", "rm", "edit", "unset", "add") {
			write = true
		}
		if isOneOf(x.val, "--location=project", "--site", "--local", "version") || x.val == "project" {
			return
		}
	}
	if write {
		a.deny(ruleWriteOutside, fam+" config writes the user's settings, outside the work dir", cmd)
	}
}

func (a *analyzer) jsPkg(fam string, argv []arg, install, publish func(string)) {
	s, _ := subcmd(argv, 1, "--prefix", "-C", "--dir", "--cwd", "-w", "--workspace", "--filter", "-F", "--registry", "--cache", "--userconfig")
	switch fam {
	case "npx", "pnpx", "bunx":
		install(fam + " (runs a package fetched from the registry)")
		return
	case "corepack":
		if isOneOf(s, "install", "enable", "prepare", "use", "up") {
			install("corepack " + s)
		}
		return
	case "ni", "nci":
		install(fam)
		return
	}
	if s == "publish" {
		publish(fam + " publish")
		return
	}
	if s == "config" || s == "set" || s == "c" {
		a.userConfig(fam, argv, s)
		return
	}
	switch {
	case isOneOf(s, "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
		"ci", "clean-install", "ic", "install-clean", "isntall-clean", "install-ci-test", "cit", "clean-install-test",
		"sit", "install-test", "it", "update", "up", "upgrade", "udpate", "dlx", "exec", "x", "a", "link", "ln",
		"upgrade-interactive", "global", "rebuild", "rb", "unlink", "uninstall", "remove", "rm", "un", "r"):
		if isOneOf(s, "uninstall", "remove", "rm", "un", "r") && fam != "npm" {
			install(fam + " " + s)
			return
		}
		if isOneOf(s, "uninstall", "remove", "rm", "un", "r") {
			return
		}
		install(fam + " " + s)
	case s == "" && (fam == "yarn" || fam == "yarnpkg" || fam == "bun" && len(argv) == 1):
		if fam != "bun" {
			install(fam + " (installs dependencies)")
		}
	}
}
