package agent_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
)

// TestHugeModelTextClippedInLog: a model that writes 10 MB, once beside a
// tool call and once as its answer, leaves model_call and stop records
// clipped like tool results (with the full size and SHA-256), a log that
// verifies, and the whole answer in the Result for the caller to print.
func TestHugeModelTextClippedInLog(t *testing.T) {
	t.Parallel()
	const size = 10 << 20
	talk := strings.Repeat("thinking aloud é ", size/18+1)[:size-1] + "!"
	answer := strings.Repeat("the answer ✓ ", size/15+1)[:size-2] + "42"
	s := &scripted.Script{Turns: []scripted.Turn{
		{Text: talk, Calls: []scripted.Call{{Tool: "probe", Args: json.RawMessage(`{}`)}}, Usage: &scripted.Usage{Input: 10, Output: 10}},
		{Text: answer, Usage: &scripted.Usage{Input: 10, Output: 10}},
	}}
	id := session.NewID(time.Now())
	dir := t.TempDir()
	w, err := audit.Create(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	p := &probe{name: "probe", effect: tool.ReadOnly}
	reg, err := tool.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	const clip = 4096
	l, err := agent.New(agent.Config{
		Model: scripted.New("scripted:test", s), Tools: reg,
		Gates: gate.NewPipeline(nil, gate.NewAvailability(reg.Names())),
		Audit: w, Session: id, ClipResults: clip,
	})
	if err != nil {
		t.Fatal(err)
	}
	res := l.Run(t.Context(), "talk a lot")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Stop != agent.StopDone || res.Err != nil {
		t.Fatalf("stop %s, err %v", res.Stop, res.Err)
	}
	if res.Answer != answer {
		t.Fatalf("the Result's answer is %d bytes, want the whole %d", len(res.Answer), len(answer))
	}

	f, err := os.Open(audit.FileName(dir, id))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil || !rep.Intact() || !rep.Complete {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, audit.MaxLine)
	checked := map[audit.Type]int{}
	for sc.Scan() {
		if len(sc.Bytes()) > 2*clip+2048 {
			t.Errorf("a %d-byte line in the log: %.80s…", len(sc.Bytes()), sc.Bytes())
		}
		if audit.Padding(sc.Bytes()) {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var full, kept string
		switch r.Type {
		case audit.ModelCall:
			full, kept = talk, r.Text
			if r.Step == 2 {
				full = answer
			}
		case audit.Stop:
			full, kept = answer, r.Answer
		default:
			continue
		}
		sum := sha256.Sum256([]byte(full))
		if len(kept) > clip || !strings.HasPrefix(full, kept) || len(kept) < clip-4 {
			t.Errorf("%s keeps %d bytes, want a prefix of at most %d", r.Type, len(kept), clip)
		}
		if r.Bytes != len(full) || r.SHA256 != hex.EncodeToString(sum[:]) || !r.Truncated {
			t.Errorf("%s: bytes %d sha256 %s truncated %v, want %d %x true", r.Type, r.Bytes, r.SHA256, r.Truncated, len(full), sum)
		}
		checked[r.Type]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if checked[audit.ModelCall] != 2 || checked[audit.Stop] != 1 {
		t.Fatalf("records checked: %v", checked)
	}
}

// TestShortModelTextKeptWhole: text under the clip stays whole, with its
// size and hash, and is not marked truncated.
func TestShortModelTextKeptWhole(t *testing.T) {
	t.Parallel()
	log := &memLog{}
	res := fixture{model: script(t, `{"turns":[{"text":"hello"}]}`), log: log}.loop(t).Run(t.Context(), "hi")
	if res.Answer != "hello" {
		t.Fatalf("answer %q", res.Answer)
	}
	sum := sha256.Sum256([]byte("hello"))
	for _, r := range log.recs {
		var kept string
		switch r.Type {
		case audit.ModelCall:
			kept = r.Text
		case audit.Stop:
			kept = r.Answer
		default:
			continue
		}
		if kept != "hello" || r.Truncated || r.Bytes != 5 || r.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s record: %+v", r.Type, r)
		}
	}
}
