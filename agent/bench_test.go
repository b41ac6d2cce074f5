package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/tool"
)

// benchSteps is the length of one benchmarked session: each step is one
// model call and one no-op tool call; the last step answers.
const benchSteps = 10

type noopArgs struct {
	N int `json:"n"`
}

func noopTool() tool.Tool {
	return tool.New(tool.Spec{Name: "noop", Schema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, noopArgs) (string, error) { return "ok", nil })
}

// benchScript is a session of benchSteps steps with usage given, so the
// scripted model does no estimating: what is measured is the loop.
func benchScript() *scripted.Script {
	s := &scripted.Script{}
	for i := range benchSteps - 1 {
		s.Turns = append(s.Turns, scripted.Turn{
			Text:  "working",
			Calls: []scripted.Call{{Tool: "noop", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}},
			Usage: &scripted.Usage{Input: 100, Output: 10},
		})
	}
	s.Turns = append(s.Turns, scripted.Turn{Text: "done", Usage: &scripted.Usage{Input: 100, Output: 10}})
	return s
}

// BenchmarkStep measures one step — a model call and a tool call — with the
// scripted model and a no-op tool. variant=bare is the baseline: the least
// loop that works. The rein variants run the real loop (gate pipeline,
// budget, conversation) with the audit log off (rein), encoded and hashed
// but written nowhere (rein-encode), written to a file one write per record
// (rein-flush), and fsynced per record (rein-fsync).
func BenchmarkStep(b *testing.B) {
	b.Run("variant=bare", benchBareLoop)
	for _, mode := range []string{"none", "encode", "flush", "fsync"} {
		name := "variant=rein-" + mode
		if mode == "none" {
			name = "variant=rein"
		}
		b.Run(name, func(b *testing.B) {
			reg, _ := tool.NewRegistry(noopTool())
			var log agent.AuditLog
			switch mode {
			case "encode":
				log = audit.NewWriter(io.Discard, "bench")
			case "flush", "fsync":
				d := audit.Flush
				if mode == "fsync" {
					d = audit.Fsync
				}
				f, err := os.Create(filepath.Join(b.TempDir(), "bench.jsonl"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				log = audit.NewWriter(f, "bench", audit.WithDurability(d))
			}
			script := benchScript()
			gates := gate.NewPipeline(nil, gate.NewAvailability([]string{"noop"}), gate.Validation{}, gate.Confirm{})
			perStep(b, func() {
				// The scripted model keeps its place in the script, so each
				// session gets a fresh one; building it is part of the cost.
				loop, err := agent.New(agent.Config{Model: scripted.New("bench", script), Tools: reg, Gates: gates, Audit: log})
				if err != nil {
					b.Fatal(err)
				}
				res := loop.Run(context.Background(), "bench")
				if res.Stop != agent.StopDone || res.Steps != benchSteps {
					b.Fatalf("stop %s after %d steps", res.Stop, res.Steps)
				}
			})
		})
	}
}

// benchBareLoop is the baseline: the same model and tool driven by the
// least loop that works — no gates, no budget, no audit, no recovery.
func benchBareLoop(b *testing.B) {
	t := noopTool()
	script := benchScript()
	perStep(b, func() {
		m := scripted.New("bench", script)
		msgs := []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("bench")}}}
		defs := []model.ToolDef{t.Spec().Def()}
		for {
			resp, err := m.Generate(context.Background(), &model.Request{Messages: msgs, Tools: defs})
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, model.Message{Role: model.RoleAssistant, Blocks: resp.Blocks})
			calls := resp.Calls()
			if len(calls) == 0 {
				return
			}
			results := make([]model.Block, 0, len(calls))
			for _, c := range calls {
				out, err := t.Run(context.Background(), c.Args)
				results = append(results, model.ResultBlock(model.ToolResult{CallID: c.ID, Content: out, IsError: err != nil}))
			}
			msgs = append(msgs, model.Message{Role: model.RoleUser, Blocks: results})
		}
	})
}

// perStep runs session b.N times and reports time and allocations per step.
func perStep(b *testing.B, session func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		session()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	steps := float64(b.N * benchSteps)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/steps, "allocs/step")
}

// BenchmarkLongSession measures the loop's own cost per step as a session
// grows: sessions of 10 and 1,000 steps, each step a model call and a tool
// call whose result is 400 characters, with the scripted model estimating
// its usage from the whole request and the loop checking the context
// budget before every call, as a long `rein run` does. A step of a long
// session should cost about what a step of a short one does; the ratio of
// the two ns/step figures is the measure (docs/BENCHMARKS.md).
func BenchmarkLongSession(b *testing.B) {
	for _, steps := range []int{10, 1000} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			out := strings.Repeat("a line of tool output ", 20)
			reg, _ := tool.NewRegistry(tool.New(tool.Spec{Name: "noop", Schema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, noopArgs) (string, error) { return out, nil }))
			s := &scripted.Script{}
			for i := range steps - 1 {
				s.Turns = append(s.Turns, scripted.Turn{Text: "working", Calls: []scripted.Call{{Tool: "noop", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}})
			}
			s.Turns = append(s.Turns, scripted.Turn{Text: "done"})
			gates := gate.NewPipeline(nil, gate.NewAvailability([]string{"noop"}), gate.Validation{})
			b.ReportAllocs()
			for b.Loop() {
				loop, err := agent.New(agent.Config{Model: scripted.New("bench", s), Tools: reg, Gates: gates,
					MaxContextTokens: 1 << 40, Limits: budget.Limits{MaxSteps: steps + 1, MaxToolCalls: steps + 1}})
				if err != nil {
					b.Fatal(err)
				}
				if res := loop.Run(context.Background(), "bench"); res.Stop != agent.StopDone || res.Steps != steps {
					b.Fatalf("stop %s after %d steps", res.Stop, res.Steps)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
		})
	}
}
