package computer_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/model"
)

// bigDone is a model that gives a huge reason with a wait, then a huge
// summary as its answer.
type bigDone struct {
	reason, summary string
	calls           *int
}

func (m bigDone) Generate(context.Context, *model.Request) (*model.Response, error) {
	*m.calls++
	if *m.calls == 1 {
		return &model.Response{Blocks: []model.Block{model.TextBlock(m.reason),
			model.CallBlock(model.ToolCall{ID: "w", Name: "wait", Args: []byte(`{}`)})}, StopReason: model.StopToolUse}, nil
	}
	return &model.Response{Blocks: []model.Block{model.TextBlock(m.summary)}, StopReason: model.StopEndTurn}, nil
}

// TestHugeReasonAndSummaryClipped: the model_call's text and the stop's
// answer are clipped like results, with the full size and SHA-256; the
// Result keeps the whole summary.
func TestHugeReasonAndSummaryClipped(t *testing.T) {
	t.Parallel()
	reason := strings.Repeat("why ", 10<<18)  // 10 MiB
	summary := strings.Repeat("done ", 2<<20) // 10 MiB
	var order []string
	env := &fakeEnv{button: image.Rect(10, 10, 20, 20), log: &order}
	l := newLog(t, &order)
	calls := 0
	s, err := computer.New(computer.Config{Model: bigDone{reason, summary, &calls}, Env: env, Audit: l})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run(t.Context(), "task")
	if res.Stop != agent.StopDone || res.Answer != summary {
		t.Fatalf("stop %s, answer of %d bytes, err %v", res.Stop, len(res.Answer), res.Err)
	}
	if rep, err := audit.Verify(bytes.NewReader(l.buf.Bytes())); err != nil || !rep.Intact() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	sc.Buffer(nil, audit.MaxLine)
	seen, models := 0, 0
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var full, kept string
		switch r.Type {
		case audit.ModelCall:
			full, kept = reason, r.Text
			if models++; models == 2 {
				full = summary
			}
		case audit.Stop:
			full, kept = summary, r.Answer
		default:
			continue
		}
		seen++
		sum := sha256.Sum256([]byte(full))
		if len(kept) > 4096 || !strings.HasPrefix(full, kept) || !r.Truncated ||
			r.Bytes != len(full) || r.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: kept %d bytes, bytes %d, truncated %v, sha256 %s", r.Type, len(kept), r.Bytes, r.Truncated, r.SHA256)
		}
	}
	if seen != 3 {
		t.Fatalf("%d records checked, want 3", seen)
	}
}
