package fs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/reinhq/rein/tool"
	rfs "github.com/reinhq/rein/tool/fs"
)

// run calls read_file with the given JSON arguments.
func run(t *testing.T, fsys iofs.FS, chunk int, args string) (string, error) {
	t.Helper()
	return rfs.ReadFile(fsys, chunk).Run(t.Context(), json.RawMessage(args))
}

func readArgs(path string, offset int) string {
	b, err := json.Marshal(rfs.ReadArgs{Path: path, Offset: offset})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// text258 is 258 characters, many of them multi-byte.
var text258 = strings.Repeat("abcdefghé漢😀\n", 21) + "xyzé漢😀" // 12*21 + 6

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := rfs.ReadFile(fstest.MapFS{}, 0).Spec()
	if spec.Name != "read_file" {
		t.Errorf("Name = %q, want read_file", spec.Name)
	}
	if spec.Effect != tool.ReadOnly {
		t.Errorf("Effect = %v, want %v", spec.Effect, tool.ReadOnly)
	}
	if !json.Valid(spec.Schema) {
		t.Errorf("Schema is not valid JSON: %s", spec.Schema)
	}
	if want := fmt.Sprintf("at most %d characters", rfs.DefaultChunk); !strings.Contains(spec.Description, want) {
		t.Errorf("Description = %q, want it to mention %q (chunk <= 0 means the default)", spec.Description, want)
	}
	if d := rfs.ReadFile(fstest.MapFS{}, 200).Spec().Description; !strings.Contains(d, "offset=200") {
		t.Errorf("Description with chunk 200 = %q, want it to show offset=200", d)
	}
}

func TestReadChunks(t *testing.T) {
	t.Parallel()
	if n := utf8.RuneCountInString(text258); n != 258 {
		t.Fatalf("test text has %d characters, want 258", n)
	}
	runes := []rune(text258)
	fsys := fstest.MapFS{
		"a.txt":       {Data: []byte(text258)},
		"short.txt":   {Data: []byte("hello")},
		"exact.txt":   {Data: []byte(string(runes[:200]))},
		"multi.txt":   {Data: []byte("é漢😀é漢😀")},
		"dir/sub.txt": {Data: []byte("nested")},
	}
	tests := []struct {
		name  string
		chunk int
		args  string
		want  string
	}{
		{"first chunk", 200, readArgs("a.txt", 0),
			string(runes[:200]) + "\n[cut: characters 0-200 of 258. Read on with offset=200]"},
		{"read on", 200, readArgs("a.txt", 200),
			string(runes[200:]) + "\n[end of file: characters 200-258 of 258]"},
		{"middle chunk", 100, readArgs("a.txt", 100),
			string(runes[100:200]) + "\n[cut: characters 100-200 of 258. Read on with offset=200]"},
		{"last character", 200, readArgs("a.txt", 257),
			"😀\n[end of file: characters 257-258 of 258]"},
		{"offset omitted", 200, `{"path":"a.txt"}`,
			string(runes[:200]) + "\n[cut: characters 0-200 of 258. Read on with offset=200]"},
		{"dot slash prefix", 200, readArgs("./short.txt", 0), "hello"},
		{"whole file, no notice", 200, readArgs("short.txt", 0), "hello"},
		{"exactly one chunk, no notice", 200, readArgs("exact.txt", 0), string(runes[:200])},
		{"default chunk reads it all", 0, readArgs("a.txt", 0), text258},
		{"negative chunk means default", -5, readArgs("a.txt", 0), text258},
		{"multi-byte never split", 2, readArgs("multi.txt", 0),
			"é漢\n[cut: characters 0-2 of 6. Read on with offset=2]"},
		{"multi-byte offset in characters", 2, readArgs("multi.txt", 2),
			"😀é\n[cut: characters 2-4 of 6. Read on with offset=4]"},
		{"multi-byte end", 2, readArgs("multi.txt", 4),
			"漢😀\n[end of file: characters 4-6 of 6]"},
		{"nested", 200, readArgs("dir/sub.txt", 0), "nested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := run(t, fsys, tt.chunk, tt.args)
			if err != nil {
				t.Fatalf("read_file %s: %v", tt.args, err)
			}
			if got != tt.want {
				t.Errorf("read_file %s =\n%q\nwant\n%q", tt.args, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("read_file %s returned invalid UTF-8: a character was split", tt.args)
			}
		})
	}
}

// TestReadOnAll follows the cut notices to the end and gets the file back.
func TestReadOnAll(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"a.txt": {Data: []byte(text258)}}
	for _, chunk := range []int{1, 7, 100, 200, 257, 258} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			offset := 0
			for range 300 {
				out, err := run(t, fsys, chunk, readArgs("a.txt", offset))
				if err != nil {
					t.Fatalf("offset %d: %v", offset, err)
				}
				body, notice, _ := strings.Cut(out, "\n[cut: ")
				if notice == "" {
					body, _, _ = strings.Cut(out, "\n[end of file: ")
					b.WriteString(body)
					break
				}
				b.WriteString(body)
				if _, err := fmt.Sscanf(notice[strings.Index(notice, "offset="):], "offset=%d]", &offset); err != nil {
					t.Fatalf("cannot read the next offset from %q: %v", notice, err)
				}
			}
			if b.String() != text258 {
				t.Errorf("reading on in chunks of %d gave\n%q\nwant\n%q", chunk, b.String(), text258)
			}
		})
	}
}

func TestEmptyFile(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"empty.txt": {Data: nil}}
	got, err := run(t, fsys, 200, readArgs("empty.txt", 0))
	if err != nil || got != "[the file is empty]" {
		t.Errorf("read_file of an empty file = %q, %v; want %q", got, err, "[the file is empty]")
	}
	if _, err := run(t, fsys, 200, readArgs("empty.txt", 5)); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("offset 5 into an empty file: %v, want a past-the-end error", err)
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A sparse file just over the limit costs no disk space.
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "big.txt"), rfs.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	mapfs := fstest.MapFS{
		"a.txt":      {Data: []byte(text258)},
		"latin1.txt": {Data: []byte("caf\xe9")},
		"dir/x.txt":  {Data: []byte("x")},
	}
	tests := []struct {
		name    string
		fsys    iofs.FS
		args    string
		argsErr bool     // whether the error is tool.ErrArgs
		want    []string // substrings of the message
	}{
		{"missing file", mapfs, readArgs("nope.txt", 0), false, []string{"nope.txt does not exist"}},
		{"missing dir", mapfs, readArgs("nodir/x.txt", 0), false, []string{"nodir/x.txt does not exist"}},
		{"directory", mapfs, readArgs("dir", 0), false, []string{"dir is a directory, not a file"}},
		{"dot is a directory", mapfs, readArgs(".", 0), false, []string{"is a directory"}},
		{"offset at the end", mapfs, readArgs("a.txt", 258), false,
			[]string{"offset 258 is past the end of a.txt (258 characters); read from an offset below 258"}},
		{"offset far past the end", mapfs, readArgs("a.txt", 1000), false,
			[]string{"offset 1000", "a.txt", "258 characters", "below 258"}},
		{"negative offset", mapfs, readArgs("a.txt", -1), true, []string{`"offset" is -1`, "cannot be negative"}},
		{"empty path", mapfs, readArgs("", 0), true, []string{`"path" is required`}},
		{"no path", mapfs, `{}`, true, []string{`"path" is required`}},
		{"empty args", mapfs, ``, true, []string{`"path" is required`}},
		{"absolute path", mapfs, readArgs("/etc/passwd", 0), true, []string{"must be relative"}},
		{"dot dot", mapfs, readArgs("../a.txt", 0), true, []string{"must be relative"}},
		{"dot slash dot dot", mapfs, readArgs("./../a.txt", 0), true, []string{"must be relative"}},
		{"inner dot dot", mapfs, readArgs("dir/../../a.txt", 0), true, []string{"must be relative"}},
		{"trailing slash", mapfs, readArgs("dir/", 0), true, []string{"must be relative"}},
		{"non-UTF-8", mapfs, readArgs("latin1.txt", 0), false, []string{"latin1.txt is not UTF-8 text"}},
		{"too big", os.DirFS(dir), readArgs("big.txt", 0), false,
			[]string{fmt.Sprintf("big.txt is %d bytes; read_file reads files up to %d bytes", rfs.MaxFileBytes+1, rfs.MaxFileBytes)}},
		{"unknown field", mapfs, `{"path":"a.txt","bogus":1}`, true, []string{`unknown field "bogus"`}},
		{"duplicate path", mapfs, `{"path":"a.txt","path":"../a.txt"}`, true, []string{`key "path" appears twice`}},
		{"array args", mapfs, `["a.txt"]`, true, []string{"expected a JSON object, got array"}},
		{"string args", mapfs, `"a.txt"`, true, []string{"expected a JSON object, got string"}},
		{"null args", mapfs, `null`, true, []string{"expected a JSON object, got null"}},
		{"malformed args", mapfs, `{"path":"a.txt"`, true, []string{"expected a JSON object, got invalid JSON"}},
		{"offset as string", mapfs, `{"path":"a.txt","offset":"5"}`, true, []string{`"offset" must be a whole number`}},
		{"path as number", mapfs, `{"path":5}`, true, []string{`"path" must be a string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := run(t, tt.fsys, 200, tt.args)
			if err == nil {
				t.Fatalf("read_file %s = %q, want an error", tt.args, got)
			}
			if got != "" {
				t.Errorf("read_file %s returned %q with its error, want no output", tt.args, got)
			}
			if errors.Is(err, tool.ErrArgs) != tt.argsErr {
				t.Errorf("read_file %s: errors.Is(err, tool.ErrArgs) = %v, want %v (err: %v)", tt.args, !tt.argsErr, tt.argsErr, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("read_file %s: error %q, want it to contain %q", tt.args, err, w)
				}
			}
		})
	}
}

// plainErrFS fails every call with an error that wraps nothing.
type plainErrFS struct{}

var errPlain = errors.New("disk on fire")

func (plainErrFS) Open(string) (iofs.File, error) { return nil, errPlain }

// TestFSErrorsKept checks that a failure of the file system itself reaches the
// caller intact, whether or not the file system wraps it in a PathError.
func TestFSErrorsKept(t *testing.T) {
	t.Parallel()
	perm := &iofs.PathError{Op: "open", Path: "a.txt", Err: iofs.ErrPermission}
	tests := []struct {
		name string
		fsys iofs.FS
		want error
	}{
		{"plain error", plainErrFS{}, errPlain},
		{"path error", errFS{perm}, iofs.ErrPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := run(t, tt.fsys, 200, readArgs("a.txt", 0))
			if !errors.Is(err, tt.want) {
				t.Fatalf("read_file over a failing FS: %v, want errors.Is %v", err, tt.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "cannot read a.txt: ") || strings.Contains(msg, "%!") {
				t.Errorf("read_file over a failing FS: message %q", msg)
			}
		})
	}
}

type errFS struct{ err error }

func (f errFS) Open(string) (iofs.File, error) { return nil, f.err }

// TestEscapeAttempts plays an agent trying to read a secret outside its work
// directory through os.Root, the way `rein run` opens it.
func TestEscapeAttempts(t *testing.T) {
	t.Parallel()
	const secret = "TOP-SECRET-7f3a9c"
	outside := t.TempDir()
	secretFile := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secretFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	work := filepath.Join(parent, "work")
	mkdir(t, filepath.Join(work, "sub", "deeper"))
	// A sibling secret reachable with "../" from the work dir.
	write(t, filepath.Join(parent, "sibling.txt"), secret)
	write(t, filepath.Join(work, "ok.txt"), "fine")
	write(t, filepath.Join(work, "sub", "deeper", "nested.txt"), "deep")
	relToSecret, err := filepath.Rel(work, secretFile)
	if err != nil {
		t.Fatal(err)
	}

	symlink(t, secretFile, filepath.Join(work, "abs-link.txt"))            // absolute target outside
	symlink(t, relToSecret, filepath.Join(work, "rel-link.txt"))           // relative target outside
	symlink(t, outside, filepath.Join(work, "outdir"))                     // directory outside
	symlink(t, "..", filepath.Join(work, "up"))                            // the parent directory
	symlink(t, "../../sibling.txt", filepath.Join(work, "sub", "up2.txt")) // climbs out from a subdirectory
	symlink(t, "/", filepath.Join(work, "rootdir"))                        // the host's root
	symlink(t, "abs-link.txt", filepath.Join(work, "chain.txt"))           // inside, then outside
	symlink(t, "loop-b", filepath.Join(work, "loop-a"))                    // a cycle
	symlink(t, "loop-a", filepath.Join(work, "loop-b"))
	// Links that stay inside the root.
	symlink(t, "ok.txt", filepath.Join(work, "inside-link.txt"))
	symlink(t, "sub", filepath.Join(work, "subdir-link"))
	symlink(t, "../ok.txt", filepath.Join(work, "sub", "back.txt"))

	root, err := os.OpenRoot(work)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	rf := rfs.ReadFile(root.FS(), 200)

	attempts := []string{
		"abs-link.txt",
		"rel-link.txt",
		"chain.txt",
		"outdir/secret.txt",
		"./outdir/secret.txt",
		"up/sibling.txt",
		"up/work/../sibling.txt",
		"sub/up2.txt",
		"rootdir" + secretFile,
		"loop-a",
		"../sibling.txt",
		"./../sibling.txt",
		"sub/../../sibling.txt",
		"sub/deeper/../../../sibling.txt",
		secretFile,
		"/" + relToSecret,
		"//" + secretFile,
		"./" + secretFile,
		"..",
		"sub/..",
		"../" + filepath.Base(outside) + "/secret.txt",
	}
	for _, path := range attempts {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			for _, offset := range []int{0, 1} {
				out, err := rf.Run(t.Context(), json.RawMessage(readArgs(path, offset)))
				if err == nil {
					t.Errorf("read_file %q at %d = %q, want an error", path, offset, out)
				}
				if strings.Contains(out, secret) || strings.Contains(out, secret[1:]) ||
					(err != nil && strings.Contains(err.Error(), secret[1:])) {
					t.Fatalf("read_file %q leaked the secret: out %q, err %v", path, out, err)
				}
			}
		})
	}

	// What stays inside still works.
	legit := []struct{ path, want string }{
		{"ok.txt", "fine"},
		{"./ok.txt", "fine"},
		{"sub/deeper/nested.txt", "deep"},
		{"inside-link.txt", "fine"},
		{"subdir-link/deeper/nested.txt", "deep"},
		{"sub/back.txt", "fine"},
	}
	for _, tt := range legit {
		t.Run("legit "+tt.path, func(t *testing.T) {
			t.Parallel()
			out, err := rf.Run(t.Context(), json.RawMessage(readArgs(tt.path, 0)))
			if err != nil || out != tt.want {
				t.Errorf("read_file %q = %q, %v; want %q", tt.path, out, err, tt.want)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make symlinks here: %v", err)
	}
}
