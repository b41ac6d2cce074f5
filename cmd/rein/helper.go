package main

import (
	"debug/buildinfo"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
)

// helperName is the file name of the sandbox helper built alone
// (cmd/rein-helper), looked for beside the rein binary.
const helperName = "rein-helper"

// sandboxHelper is the binary the sandboxes re-execute as their helper:
// rein-helper beside this program when it was built from the same sources,
// else this program itself (whose main hands helper invocations to
// sandbox.HelperMain). Both do the same; rein-helper starts in a fraction
// of the time, since it does not initialise the model SDKs, the JSON
// Schema library and the terminal interface. "" when the running binary
// cannot be found (no reaper for the local executor).
var sandboxHelper = sync.OnceValue(func() string {
	self := reinBinary()
	if self == "" {
		return ""
	}
	own, ok := debug.ReadBuildInfo()
	if !ok {
		return self
	}
	return chooseHelper(self, own)
})

// chooseHelper returns rein-helper beside self when it is a regular
// executable file whose build information matches own (sameBuild), else
// self.
func chooseHelper(self string, own *debug.BuildInfo) string {
	p := filepath.Join(filepath.Dir(self), helperName)
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return self
	}
	theirs, err := buildinfo.ReadFile(p)
	if err != nil || !sameBuild(own, theirs) {
		return self
	}
	return p
}

// sameBuild reports whether helper is the rein-helper command of the build
// rein comes from: the same Go, the same main module (version and sum),
// the same build settings, and every module the helper links at the
// version rein links. An older rein-helper left beside a newer rein (whose
// helper may confine differently) fails it, and rein uses itself. A
// development build carries no version of its own ("(devel)"), so two
// builds from different edits of one tree pass: install both together.
func sameBuild(rein, helper *debug.BuildInfo) bool {
	if rein.GoVersion != helper.GoVersion || !sameModule(&rein.Main, &helper.Main) ||
		helper.Path != path.Join(path.Dir(rein.Path), helperName) {
		return false
	}
	if !slices.Equal(rein.Settings, helper.Settings) {
		return false
	}
	for _, d := range helper.Deps {
		i := slices.IndexFunc(rein.Deps, func(r *debug.Module) bool { return r.Path == d.Path })
		if i < 0 || !sameModule(rein.Deps[i], d) {
			return false
		}
	}
	return true
}

// sameModule reports whether a and b are one version of one module,
// replacements included.
func sameModule(a, b *debug.Module) bool {
	if a.Path != b.Path || a.Version != b.Version || a.Sum != b.Sum {
		return false
	}
	if a.Replace == nil || b.Replace == nil {
		return a.Replace == b.Replace
	}
	return sameModule(a.Replace, b.Replace)
}

// reinBinary is this program, whose main hands a helper invocation to
// sandbox.HelperMain. "" when the running binary cannot be found.
func reinBinary() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}
