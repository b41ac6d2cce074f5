package telemetry

// Every span and attribute name rein writes, in one place. The gen_ai.*
// names are OpenTelemetry's GenAI semantic conventions, which are still
// marked development: when they change, this file changes. The rein.*
// names are rein's own.
const (
	// Span names (gen_ai.operation.name values, each span named by its
	// operation: "invoke_agent", "chat", "execute_tool").
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"

	// The instrumentation scope.
	ScopeName = "github.com/reinhq/rein/telemetry"

	// GenAI semantic conventions.
	AttrOperationName   = "gen_ai.operation.name"
	AttrProviderName    = "gen_ai.provider.name"
	AttrRequestModel    = "gen_ai.request.model"
	AttrAgentName       = "gen_ai.agent.name"
	AttrConversationID  = "gen_ai.conversation.id"
	AttrInputTokens     = "gen_ai.usage.input_tokens"
	AttrOutputTokens    = "gen_ai.usage.output_tokens"
	AttrFinishReasons   = "gen_ai.response.finish_reasons"
	AttrToolName        = "gen_ai.tool.name"
	AttrToolCallID      = "gen_ai.tool.call.id"
	AttrToolType        = "gen_ai.tool.type"
	AttrErrorType       = "error.type"
	AttrOutputMessages  = "gen_ai.output.messages"     // content: the model's text (redacted, as the audit log holds it)
	AttrToolArguments   = "gen_ai.tool.call.arguments" // content: the call's arguments (redacted)
	AttrToolCallResult  = "gen_ai.tool.call.result"    // content: what the call returned (redacted, clipped as logged)
	AttrCacheReadTokens = "gen_ai.usage.cache_read.input_tokens"

	// rein's own.
	AttrSession    = "rein.session"      // the session's id (also gen_ai.conversation.id)
	AttrStep       = "rein.step"         // the step of the session a span belongs to
	AttrGate       = "rein.gate"         // the gate that decided a call ("pipeline": every gate allowed it)
	AttrVerdict    = "rein.verdict"      // allow or deny
	AttrReason     = "rein.reason"       // why the gate decided so
	AttrApprovedBy = "rein.approval.by"  // who answered when a human decided
	AttrEffect     = "rein.tool.effect"  // the tool's effect class, from its intent record
	AttrRefused    = "rein.tool.refused" // the call did not run: the gates refused it
	AttrAuditHash  = "rein.audit.hash"   // SHA-256 of the audit record the span ends on (the next record's prev)
	AttrAuditSeq   = "rein.audit.seq"    // that record's sequence number
	AttrStop       = "rein.stop.reason"  // how the session ended
	AttrTokens     = "rein.tokens"       // tokens the session used in all
	AttrToolCalls  = "rein.tool_calls"   // tool calls the session made
	AttrTask       = "rein.task"         // content: the session's task (redacted)
	AttrAnswer     = "rein.answer"       // content: the session's answer (redacted)
	AttrResultSize = "rein.tool.result_bytes"
)
