package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool"
)

type policyCmd struct {
	Check policyCheckCmd `cmd:"" help:"Read JSONL tool calls {\"tool\":…,\"args\":{…}} on stdin; write one JSONL verdict {\"decision\",\"gate\",\"reason\"} per line. Nothing runs; ask means a human would be asked."`
}

type policyCheckCmd struct {
	Workdir      string       `default:"." placeholder:"DIR" help:"Work directory the calls are judged against."`
	Config       string       `placeholder:"FILE" help:"A config file applied after the user's and the project's."`
	Tools        []string     `sep:"," placeholder:"TOOL" help:"Allowlist (default tools.allow from config, else every built-in tool but send_email)."`
	Mode         string       `placeholder:"MODE" help:"Permission mode: default, accept-edits, plan or bypass (default: permissions.mode from config, else default)."`
	MaxToolCalls capFlag[int] `placeholder:"N|none" help:"Tool-call budget: lines beyond N are denied by the budget gate (default 200; none for no cap; 0 is refused)."`
}

// maxLine is the longest input line judged; longer lines are denied unread.
const maxLine = 4 << 20

// policyLine is one input line.
type policyLine struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

func (c *policyCheckCmd) Run(ctx context.Context, e env) error {
	workdir, err := checkWorkdir(c.Workdir)
	if err != nil {
		return err
	}
	rc := agentFlags{Workdir: workdir, Config: c.Config, Tools: c.Tools, Mode: c.Mode, MaxToolCalls: c.MaxToolCalls}
	cfg, _, err := rc.config(workdir)
	if err != nil {
		return usageError{err}
	}
	// The tools and gates of a session of rein run's with this
	// configuration, from the same builder; nobody is asked (Evaluate).
	opts := optionsOf(cfg, nil)
	opts.WorkDir = workdir
	reg, err := guarded.Tools(opts)
	if err != nil {
		return err
	}
	pipeline, err := guarded.Pipeline(opts, nil)
	if err != nil {
		return usageError{err}
	}
	meter := budget.NewMeter(budget.Limits{MaxToolCalls: cfg.Limits.MaxToolCalls})

	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	in := bufio.NewReaderSize(e.stdin, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(in, maxLine)
		if errors.Is(err, io.EOF) && line == nil {
			return nil
		}
		var v gate.Verdict
		switch {
		case errors.Is(err, errLineTooLong):
			v = invalid(n, fmt.Sprintf("the line is longer than %d bytes", maxLine))
		case err != nil && !errors.Is(err, io.EOF):
			return fmt.Errorf("read stdin: %w", err)
		default:
			v = judge(ctx, n, line, reg, pipeline, meter)
		}
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("write verdict: %w", err)
		}
		if in.Buffered() == 0 { // keep a pipe's reader in step with its writer
			if err := out.Flush(); err != nil {
				return fmt.Errorf("write verdict: %w", err)
			}
		}
	}
}

func judge(ctx context.Context, n int, line []byte, reg *tool.Registry, p *gate.Pipeline, meter *budget.Meter) gate.Verdict {
	var pl policyLine
	if len(bytes.TrimSpace(line)) == 0 {
		return invalid(n, "the line is empty; write one JSON object per line")
	}
	if err := jsonx.DecodeStrict(line, &pl); err != nil {
		// The input is one line: its position is a column.
		return invalid(n, strings.Replace(err.Error(), "line 1, column", "column", 1))
	}
	if pl.Tool == "" {
		return invalid(n, `"tool" is missing or empty`)
	}
	if pl.Args == nil {
		pl.Args = json.RawMessage(`{}`)
	}
	if err := meter.TakeCall(); err != nil {
		return gate.Verdict{Decision: gate.Deny, Gate: gate.NameBudget, Reason: err.Error()}
	}
	t, _ := reg.Lookup(pl.Tool)
	return p.Evaluate(ctx, &gate.Call{ID: fmt.Sprintf("line_%d", n), Name: pl.Tool, Args: pl.Args, Tool: t})
}

func invalid(n int, reason string) gate.Verdict {
	return gate.Verdict{Decision: gate.Deny, Gate: gate.NameValidation,
		Reason: fmt.Sprintf(`line %d: %s; expected {"tool":"NAME","args":{...}}`, n, reason)}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line longer than
// max is consumed and reported as errLineTooLong. At the end of input it
// returns the last unterminated line, if any, with io.EOF.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (len(line) > 0 || tooLong):
			if tooLong {
				return nil, errLineTooLong
			}
			return bytes.TrimRight(line, "\r\n"), io.EOF
		case err != nil:
			return nil, err
		}
		if tooLong {
			return nil, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}
