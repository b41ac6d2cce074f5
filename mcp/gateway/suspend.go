package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inputKey is the id of rein's one question in an input-required result.
const inputKey = "rein"

// pending is a host's call that is running, possibly waiting for an
// answer from the host's human.
type pending struct {
	id      string // the request state the host echoes back: random, per session
	elicits bool   // the host said it can put questions to its human
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan outcome  // the call's end (buffered)
	asks    chan question // a question the call waits on
	current chan sdk.InputResponse
}

// question is one question a call puts to the host.
type question struct {
	params *sdk.ElicitParams
	answer chan sdk.InputResponse // buffered
}

type pendingKey struct{}

// suspend registers a new call.
func (hs *hostSession) suspend(elicits bool) *pending {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	p := &pending{id: hex.EncodeToString(b), elicits: elicits, done: make(chan outcome, 1), asks: make(chan question)}
	p.ctx, p.cancel = context.WithCancel(context.WithValue(hs.ctx, pendingKey{}, p))
	hs.mu.Lock()
	hs.pending[p.id] = p
	hs.mu.Unlock()
	return p
}

// suspended returns the call whose state is id, or nil.
func (hs *hostSession) suspended(id string) *pending {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.pending[id]
}

func (hs *hostSession) forget(p *pending) {
	hs.mu.Lock()
	delete(hs.pending, p.id)
	hs.mu.Unlock()
}

// answer hands the host's answer to the question p waits on.
func (hs *hostSession) answer(p *pending, rs sdk.InputResponseMap) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	r, ok := rs[inputKey]
	if !ok || p.current == nil {
		return false
	}
	select {
	case p.current <- r:
		p.current = nil
		return true
	default:
		return false
	}
}

// wait waits for the call's end, or for a question to put to the host
// (returned as an input-required result carrying the call's state). A
// host that gives up on its request ends the call.
func (hs *hostSession) wait(ctx context.Context, p *pending) (*sdk.CallToolResult, error) {
	select {
	case o := <-p.done:
		hs.forget(p)
		return o.res, o.err
	case q := <-p.asks:
		hs.mu.Lock()
		p.current = q.answer
		hs.mu.Unlock()
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{inputKey: q.params}, RequestState: p.id}, nil
	case <-ctx.Done():
		p.cancel()
		hs.forget(p)
		return nil, ctx.Err()
	}
}

// errNoHost: the call's host cannot be asked.
var errNoHost = errors.New("the MCP host cannot put questions to its human (it does not support elicitation)")

// ask puts params to the host's human on behalf of the call running in
// ctx, and waits for the answer (at most the gateway's ask timeout).
func (hs *hostSession) ask(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	p, _ := ctx.Value(pendingKey{}).(*pending)
	if p == nil {
		p = hs.lastRunning()
	}
	if p == nil || !p.elicits {
		return nil, errNoHost
	}
	q := question{params: params, answer: make(chan sdk.InputResponse, 1)}
	timer := time.NewTimer(hs.g.askTimeout())
	defer timer.Stop()
	select {
	case p.asks <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, errors.New("the host did not take the question in time")
	}
	select {
	case r := <-q.answer:
		res, ok := r.(*sdk.ElicitResult)
		if !ok || res == nil {
			return nil, errors.New("the host's answer is not an elicitation result")
		}
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, errors.New("no answer from the host in time")
	}
}

// lastRunning is the one call running, for a question that comes without
// its call's context (a server of an older protocol version asking over
// its connection); with several running, nobody is asked.
func (hs *hostSession) lastRunning() *pending {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if len(hs.pending) != 1 {
		return nil
	}
	for _, p := range hs.pending {
		return p
	}
	return nil
}
