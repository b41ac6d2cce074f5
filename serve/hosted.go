package serve

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"sync"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/audit/event"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

func defaultLimits() budget.Limits { return budget.Defaults() }

// hosted is one session of the Local host: what the API shows of it and
// its event stream so far.
type hosted struct {
	price  func(model.Usage) float64
	limits budget.Limits
	reg    *tool.Registry
	undo   bool
	abort  func(string)
	done   chan struct{}
	// fromDisk marks a session of an earlier run of the server, read back
	// from its audit log.
	fromDisk bool

	mu          sync.Mutex
	info        Info
	rollbackDir string
	events      []json.RawMessage
	changed     chan struct{} // closed and replaced at each new event; nil once ended
}

// snapshot is the session's Info now.
func (h *hosted) snapshot() Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := h.info
	i.Refusals = maps.Clone(i.Refusals)
	if i.Stop != nil {
		s := *i.Stop
		i.Stop = &s
	}
	return i
}

// observe follows the session's audit records: its step, tokens and
// cost, and the events they stand for.
func (h *hosted) observe(r audit.Record) {
	h.mu.Lock()
	if r.Step > h.info.Step {
		h.info.Step = r.Step
	}
	if r.Tokens > h.info.Tokens {
		h.info.Tokens = r.Tokens
	}
	if r.Type == audit.ModelCall && r.Usage != nil && h.price != nil {
		h.info.CostUSD += h.price(*r.Usage)
	}
	if r.Type == audit.Verdict && r.Tool != "" {
		if d, _ := r.Decision.Get(); d == gate.Deny {
			if h.info.Refusals == nil {
				h.info.Refusals = map[string]int{}
			}
			h.info.Refusals[r.Gate]++
		}
	}
	if r.Type == audit.Stop {
		h.info.Stop = &StopInfo{Reason: r.Stop, Answer: r.Answer, Steps: r.Steps, Tokens: r.Tokens, Error: r.Error}
	}
	h.mu.Unlock()
	for _, e := range event.From(r) {
		if b, err := json.Marshal(e); err == nil {
			h.append(b)
		}
	}
}

// append adds one event and wakes the subscribers.
func (h *hosted) append(b json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.changed == nil { // ended: nothing more is streamed
		return
	}
	h.events = append(h.events, b)
	close(h.changed)
	h.changed = make(chan struct{})
}

// eventsFrom returns the events from number from on and a channel that
// closes at the next one; ended when there will be none.
func (h *hosted) eventsFrom(from int) ([]json.RawMessage, <-chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var evs []json.RawMessage
	if from < len(h.events) {
		evs = h.events[max(from, 0):len(h.events):len(h.events)]
	}
	if h.changed == nil {
		return evs, nil, true
	}
	return evs, h.changed, false
}

// finish records the session's end. A session that could not start has no
// stop record: its stop comes from the result.
func (h *hosted) finish(res guarded.Result) {
	h.mu.Lock()
	if h.info.Stop == nil {
		s := &StopInfo{Reason: res.Stop, Answer: res.Answer, Steps: res.Steps, Tokens: res.Tokens}
		if res.Err != nil {
			s.Error = res.Err.Error()
		}
		h.info.Stop = s
		h.mu.Unlock()
		if b, err := json.Marshal(event.Event{Type: event.Stop, Session: h.info.ID, Stop: s.Reason, Answer: s.Answer, Steps: s.Steps, Tokens: s.Tokens, Error: s.Error}); err == nil {
			h.append(b)
		}
		h.mu.Lock()
	}
	h.info.State = StateEnded
	h.rollbackDir = res.RollbackDir
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
	h.mu.Unlock()
	close(h.done)
}

// readLog reads a session of an earlier run back from its audit log: its
// events, use and stop; without a stop it was interrupted.
func (h *hosted) readLog() {
	h.changed = make(chan struct{})
	h.info.State = StateInterrupted
	if f, err := os.Open(h.info.Audit); err == nil {
		br := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			var r audit.Record
			if len(line) > 0 && !audit.Padding(line) && json.Unmarshal(line, &r) == nil {
				h.observe(r)
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	if h.info.Stop != nil {
		h.info.State = StateEnded
	} else {
		h.info.Resume = "rein resume " + h.info.ID
	}
	close(h.changed)
	h.changed = nil
}
