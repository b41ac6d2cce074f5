// Package telemetry turns what a rein session does into OpenTelemetry
// traces: one invoke_agent span for the session, a chat span for each model
// call and an execute_tool span for each tool call, with the GenAI semantic
// conventions' attributes (model, provider, usage, tool name and call id)
// and rein's own (the gate that decided, the verdict and its reason, and
// the hash of the audit record each span ends on, so a trace points into
// the tamper-evident log).
//
// It reads the session's audit records (an audit observer: Session.Observe),
// so a span says only what the log says, after redaction, and the spans'
// times are the records' times. Content — the task, the model's text,
// arguments, results, the answer — is left out unless Options.Content is
// set; then it is the redacted text the audit log holds, never more.
//
// Export (OTLP over HTTP) is in Start; nothing is traced or sent unless a
// caller asks for it. It does not sample, and it does not trace what
// happens inside a tool.
package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
)

// Options configure the spans of a session.
type Options struct {
	// Provider makes the tracer. Required.
	Provider trace.TracerProvider
	// Content adds the redacted text the audit log holds (task, model
	// text, arguments, results, answer) to the spans. Default false: only
	// names, numbers, verdicts and hashes.
	Content bool
	// Agent is gen_ai.agent.name; "" is "rein".
	Agent string
}

// Session makes one session's spans from its audit records. Observe must
// be called with the records in the order they were written (the audit
// writer calls its observers so, one at a time).
type Session struct {
	o        Options
	tracer   trace.Tracer
	parent   context.Context
	root     trace.Span
	rootCtx  context.Context
	provider string
	model    string
	tools    map[string]trace.Span // call id → its open execute_tool span
}

// NewSession returns the spans' maker for one session; its invoke_agent
// span is a child of ctx's span, if any.
func NewSession(ctx context.Context, o Options) *Session {
	if o.Agent == "" {
		o.Agent = "rein"
	}
	return &Session{o: o, tracer: o.Provider.Tracer(ScopeName), parent: ctx, tools: map[string]trace.Span{}}
}

// Observe turns one audit record into spans, attributes or events.
func (s *Session) Observe(r audit.Record) {
	switch r.Type {
	case audit.SessionStart:
		s.start(r)
	case audit.Resume:
		if s.root == nil {
			s.start(r)
		}
	case audit.ModelCall:
		s.chat(r)
	case audit.Verdict:
		s.verdict(r)
	case audit.Intent:
		if sp, ok := s.tools[r.CallID]; ok {
			if e, ok := r.Effect.Get(); ok {
				sp.SetAttributes(attribute.String(AttrEffect, e.String()))
			}
		}
	case audit.Result:
		s.result(r)
	case audit.Abort:
		if s.root != nil {
			s.root.AddEvent("rein.abort", trace.WithTimestamp(r.Time), trace.WithAttributes(attribute.String(AttrReason, r.Reason)))
		}
	case audit.Stop:
		s.stop(r)
	}
}

// End ends whatever is still open (a session that wrote no stop record).
func (s *Session) End() {
	now := time.Now()
	for id, sp := range s.tools {
		sp.End(trace.WithTimestamp(now))
		delete(s.tools, id)
	}
	if s.root != nil {
		s.root.End(trace.WithTimestamp(now))
		s.root = nil
	}
}

func (s *Session) start(r audit.Record) {
	var cfg struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(r.Config, &cfg)
	s.provider, s.model = splitModel(cfg.Model)
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpInvokeAgent),
		attribute.String(AttrAgentName, s.o.Agent),
		attribute.String(AttrConversationID, r.Session),
		attribute.String(AttrSession, r.Session),
		attribute.String(AttrProviderName, s.provider),
		attribute.String(AttrRequestModel, s.model),
	}
	if s.o.Content && r.Task != "" {
		attrs = append(attrs, attribute.String(AttrTask, r.Task))
	}
	s.rootCtx, s.root = s.tracer.Start(s.parent, OpInvokeAgent+" "+s.o.Agent,
		trace.WithTimestamp(r.Time), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// splitModel reads "PROVIDER:MODEL" (rein's model names) as the provider
// and the model; a name without a provider is the model alone.
func splitModel(name string) (provider, model string) {
	if p, m, ok := strings.Cut(name, ":"); ok {
		return p, m
	}
	return "", name
}

func (s *Session) ensureRoot(r audit.Record) {
	if s.root == nil { // a record before any start: make the session span here
		s.start(audit.Record{Session: r.Session, Time: r.Time})
	}
}

func (s *Session) chat(r audit.Record) {
	s.ensureRoot(r)
	begin := r.Time.Add(-time.Duration(r.DurationMS * float64(time.Millisecond)))
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpChat),
		attribute.String(AttrProviderName, s.provider),
		attribute.String(AttrRequestModel, s.model),
		attribute.String(AttrConversationID, r.Session),
		attribute.Int(AttrStep, r.Step),
	}
	if r.Usage != nil {
		attrs = append(attrs, attribute.Int64(AttrInputTokens, r.Usage.Input), attribute.Int64(AttrOutputTokens, r.Usage.Output))
		if r.Usage.CacheRead > 0 {
			attrs = append(attrs, attribute.Int64(AttrCacheReadTokens, r.Usage.CacheRead))
		}
	}
	if r.ModelStop != "" {
		attrs = append(attrs, attribute.StringSlice(AttrFinishReasons, []string{r.ModelStop}))
	}
	if s.o.Content && r.Text != "" {
		attrs = append(attrs, attribute.String(AttrOutputMessages, outputMessages(r.Text)))
	}
	attrs = append(attrs, hashAttrs(r)...)
	_, sp := s.tracer.Start(s.rootCtx, OpChat+" "+s.model, trace.WithTimestamp(begin),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if r.Error != "" {
		sp.SetAttributes(attribute.String(AttrErrorType, "model_call"))
		sp.SetStatus(codes.Error, r.Error)
	}
	sp.End(trace.WithTimestamp(r.Time))
}

// outputMessages is the model's text as the conventions' output messages.
func outputMessages(text string) string {
	b, _ := json.Marshal([]map[string]any{{"role": "assistant", "parts": []map[string]string{{"type": "text", "content": text}}}})
	return string(b)
}

func (s *Session) verdict(r audit.Record) {
	s.ensureRoot(r)
	d, _ := r.Decision.Get()
	verdict := "allow"
	if d == gate.Deny {
		verdict = "deny"
	}
	if r.CallID == "" { // a refusal of the session's next step (a budget), not of a call
		s.root.AddEvent("rein.verdict", trace.WithTimestamp(r.Time), trace.WithAttributes(
			attribute.String(AttrGate, r.Gate), attribute.String(AttrVerdict, verdict), attribute.String(AttrReason, r.Reason)))
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpExecuteTool),
		attribute.String(AttrToolName, r.Tool),
		attribute.String(AttrToolCallID, r.CallID),
		attribute.String(AttrToolType, "function"),
		attribute.Int(AttrStep, r.Step),
		attribute.String(AttrGate, r.Gate),
		attribute.String(AttrVerdict, verdict),
		attribute.String(AttrReason, r.Reason),
	}
	if r.Approval != nil && r.Approval.By != "" {
		attrs = append(attrs, attribute.String(AttrApprovedBy, r.Approval.By))
	}
	if s.o.Content && len(r.Args) > 0 {
		attrs = append(attrs, attribute.String(AttrToolArguments, string(r.Args)))
	}
	_, sp := s.tracer.Start(s.rootCtx, OpExecuteTool+" "+r.Tool, trace.WithTimestamp(r.Time),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if verdict == "deny" {
		sp.SetAttributes(attribute.Bool(AttrRefused, true), attribute.String(AttrErrorType, "refused"))
		sp.SetAttributes(hashAttrs(r)...)
		sp.SetStatus(codes.Error, "refused by "+r.Gate)
		sp.End(trace.WithTimestamp(r.Time))
		return
	}
	s.tools[r.CallID] = sp
}

func (s *Session) result(r audit.Record) {
	sp, ok := s.tools[r.CallID]
	if !ok {
		return // a refused call's result: its span ended with its verdict
	}
	delete(s.tools, r.CallID)
	attrs := append(hashAttrs(r), attribute.Int(AttrResultSize, max(r.Bytes, len(r.Content))))
	if s.o.Content && r.Content != "" {
		attrs = append(attrs, attribute.String(AttrToolCallResult, r.Content))
	}
	sp.SetAttributes(attrs...)
	if r.IsError {
		sp.SetAttributes(attribute.String(AttrErrorType, "tool_error"))
		sp.SetStatus(codes.Error, "the tool returned an error")
	}
	sp.End(trace.WithTimestamp(r.Time))
}

func (s *Session) stop(r audit.Record) {
	s.ensureRoot(r)
	for id, sp := range s.tools { // calls cut short by the stop (an abort)
		sp.SetStatus(codes.Error, "the session stopped: "+string(r.Stop))
		sp.End(trace.WithTimestamp(r.Time))
		delete(s.tools, id)
	}
	attrs := append(hashAttrs(r),
		attribute.String(AttrStop, string(r.Stop)),
		attribute.Int64(AttrTokens, r.Tokens),
		attribute.Int(AttrToolCalls, r.ToolCalls))
	if s.o.Content && r.Answer != "" {
		attrs = append(attrs, attribute.String(AttrAnswer, r.Answer))
	}
	s.root.SetAttributes(attrs...)
	if r.Stop == stop.Error {
		s.root.SetAttributes(attribute.String(AttrErrorType, string(r.Stop)))
		s.root.SetStatus(codes.Error, r.Error)
	}
	s.root.End(trace.WithTimestamp(r.Time))
	s.root = nil
}

// hashAttrs are the record's sequence number and hash: SHA-256 of its line
// in the log, which the next record carries as prev.
func hashAttrs(r audit.Record) []attribute.KeyValue {
	line, err := json.Marshal(r)
	if err != nil {
		return []attribute.KeyValue{attribute.Int64(AttrAuditSeq, int64(r.Seq))}
	}
	sum := sha256.Sum256(line)
	return []attribute.KeyValue{attribute.Int64(AttrAuditSeq, int64(r.Seq)), attribute.String(AttrAuditHash, hex.EncodeToString(sum[:]))}
}
