package rollback

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzJournal feeds the journal reader garbage: it must never panic, and
// what it accepts must be safe to act on — clean paths inside the work
// directory, each once, in increasing order — and every line must be
// accounted for as an entry, a note or damage.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"seq":1,"path":"a.txt","kind":"file","mode":"0644","size":6,"sha256":"b6a98d9ce9a2d9149288fa3df42d377c3e42737afdcdaf714e33c0a100b51060"}` + "\n"))
	f.Add([]byte(`{"seq":2,"path":"x/y/new.txt","kind":"absent","dirs":["x/y","x"]}` + "\n" + `{"seq":4,"path":"link.txt","kind":"symlink","target":"target.txt"}` + "\n"))
	f.Add([]byte(`{"seq":3,"path":"target.txt","kind":"file","mode":"4750","size":7,"sha256":"c97ecfda4d205190b973232dcfdb0c29748521c2534dd866bcc782f30b086738","via":"link.txt"}` + "\n{\"seq\":4,\"pa"))
	f.Add([]byte(`{"seq":1,"path":"../etc/passwd","kind":"absent"}` + "\n"))
	f.Add([]byte(`{"seq":1,"path":"/etc/passwd","kind":"file","mode":"0644","size":0,"sha256":""}` + "\n"))
	f.Add([]byte(`{"seq":1,"path":"a","kind":"absent","dirs":["b"]}` + "\n" + `{"seq":1,"path":"a","kind":"absent"}` + "\n"))
	f.Add([]byte(`{"seq":1,"path":"a","kind":"file","mode":"99999","size":-1}` + "\n\n\x00\x00"))
	f.Add([]byte(`{"seq":1,"path":"a","kind":"absent"}` + "\n" + `{"seq":2,"path":"a","kind":"left","left":{"kind":"file","size":1,"sha256":"ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}}` + "\n" + `{"seq":3,"path":"a","kind":"changing"}` + "\n" + `{"seq":4,"path":"b","kind":"left","left":{"kind":"absent"}}` + "\n"))
	f.Add([]byte(`{"seq":1,"path":"a","kind":"symlink","target":"x","seq":2}` + "\n" + `[]` + "\n" + `{"seq":18446744073709551615,"path":"b","kind":"absent"} {}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := parseJournal(data)
		entries, notes, damaged := p.entries, p.notes, p.damaged
		lines := bytes.Count(data, []byte("\n"))
		incomplete := 0
		if len(data) > 0 && data[len(data)-1] != '\n' {
			incomplete = 1
		}
		if len(entries)+p.marks+len(damaged) != lines || len(notes) != incomplete {
			t.Fatalf("%d lines (+%d cut): %d entries, %d marks, %d damaged, %d notes", lines, incomplete, len(entries), p.marks, len(damaged), len(notes))
		}
		var last uint64
		seen := map[string]bool{}
		for _, e := range entries {
			if err := checkRel(e.Path); err != nil {
				t.Fatalf("accepted an entry with path %q: %v", e.Path, err)
			}
			if e.Seq <= last || seen[e.Path] {
				t.Fatalf("accepted seq %d after %d, or %q twice", e.Seq, last, e.Path)
			}
			last, seen[e.Path] = e.Seq, true
			for _, d := range e.Dirs {
				if checkRel(d) != nil || !strings.HasPrefix(e.Path, d+"/") {
					t.Fatalf("accepted dir %q for %q", d, e.Path)
				}
			}
			// What is accepted survives a round trip unchanged.
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			q := parseJournal(append(line, '\n'))
			again, bad := q.entries, q.damaged
			if len(bad) != 0 || len(again) != 1 {
				t.Fatalf("accepted %+v, but not its own encoding %s: %q", e, line, bad)
			}
		}
	})
}
