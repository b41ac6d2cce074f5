package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/intake"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/schema"
)

// judge decides, tool by tool, what is offered.
type judge struct {
	cfg     config.MCP
	builtin map[string]bool // lower-cased
	// owner maps every qualified name (lower-cased) to the servers that
	// would offer it, to find collisions.
	owner map[string][]string
	// refs are, per server, the names its definitions may not mention:
	// other servers' tools (qualified, and bare when distinctive) and
	// the built-in tools.
	refs map[string]scanner
	// comp compiles every schema of a Connect, loading the meta-schema once.
	comp *schema.Compiler
}

func newJudge(cfg config.MCP, listed map[string][]*sdk.Tool, builtin []string) *judge {
	j := &judge{cfg: cfg, builtin: map[string]bool{}, owner: map[string][]string{}, refs: map[string]scanner{}, comp: schema.NewCompiler()}
	var builtinRefs []string
	for _, b := range builtin {
		j.builtin[strings.ToLower(b)] = true
		if strings.Contains(b, "_") || len(b) >= 8 {
			builtinRefs = append(builtinRefs, b)
		}
	}
	for srv, tools := range listed {
		for _, t := range tools {
			q := strings.ToLower(srv + Sep + t.Name)
			j.owner[q] = append(j.owner[q], srv)
		}
	}
	for srv := range listed {
		refs := slices.Clone(builtinRefs)
		for other, tools := range listed {
			if other == srv {
				continue
			}
			for _, t := range tools {
				refs = append(refs, other+Sep+t.Name)
				if strings.Contains(t.Name, "_") || len(t.Name) >= 10 {
					refs = append(refs, t.Name)
				}
			}
		}
		j.refs[srv] = newScanner(refs)
	}
	return j
}

// judge returns the report of one tool and, when it is offered, the tool.
func (j *judge) judge(srv *server, st *sdk.Tool, pf pinFile, opts Options) (ToolReport, tool.Tool) {
	sc := j.cfg.Servers[srv.name]
	tc := sc.Tools[st.Name]
	q := srv.name + Sep + st.Name
	def, err := canonical(st)
	rep := ToolReport{Name: q, Server: srv.name, MCPName: st.Name, Effect: effectOf(sc.ToolEffect(st.Name), st.Annotations), Definition: def}
	if err != nil {
		rep.Reason = fmt.Sprintf("its definition cannot be read: %v", err)
		return rep, nil
	}
	rep.Pin, rep.Pinned = pf.lookup(srv.name, st.Name, def)
	rep.Findings = j.scan(srv.name, st)
	unavailable := func(format string, args ...any) (ToolReport, tool.Tool) {
		rep.Reason = fmt.Sprintf(format, args...)
		return rep, nil
	}
	switch {
	case !modelName(q):
		return unavailable("its name %q cannot be offered to a model: use letters, digits, '_' and '-', at most 64 with the server's prefix", q)
	case j.builtin[strings.ToLower(q)]:
		return unavailable("its name %q collides with rein's built-in tool", q)
	case len(j.owner[strings.ToLower(q)]) > 1:
		return unavailable("its name %q collides with a tool of server(s) %s", q, strings.Join(j.owner[strings.ToLower(q)], ", "))
	case j.shadows(srv.name, st.Name) != "":
		return unavailable("its name %q shadows server %q's tool", st.Name, j.shadows(srv.name, st.Name))
	case tc.Disabled:
		return unavailable("disabled in config (mcp.servers.%s.tools.%s.disabled)", srv.name, st.Name)
	}
	raw, sch, err := compileSchema(j.comp, q, st.InputSchema)
	if err != nil {
		return unavailable("its input schema cannot be used: %v", err)
	}
	roles, err := rolesOf(tc.Roles, raw)
	if err != nil {
		return unavailable("mcp.servers.%s.tools.%s.roles: %v", srv.name, st.Name, err)
	}
	if len(rep.Findings) > 0 && !tc.TrustDescription {
		var fs []string
		for _, f := range rep.Findings {
			fs = append(fs, f.String())
		}
		return unavailable("its definition carries injection markers (%s); read it with rein mcp list, and if it is a false alarm set mcp.servers.%s.tools.%s.trust_description = true in your own config",
			strings.Join(fs, "; "), srv.name, st.Name)
	}
	if rep.Pin == PinChanged {
		return unavailable("its definition changed since it was pinned: run rein mcp pin %s to see the difference and approve it", srv.name)
	}
	rep.Available = true
	spec := tool.Spec{
		Name:        q,
		Description: intake.Wrapper{}.External("mcp_tool_description", "MCP server "+srv.name, st.Description),
		Schema:      raw,
		Effect:      rep.Effect,
		Roles:       roles,
		// The server wrote it: what it says is untrusted data for the
		// data-flow gate, as its results are.
		UntrustedDescription: true,
	}
	return rep, &mcpTool{srv: srv, mcpName: st.Name, spec: spec, schema: sch, maxResult: opts.maxResult()}
}

func (o Options) maxResult() int {
	if o.MaxResultBytes > 0 {
		return o.MaxResultBytes
	}
	return 1 << 20
}

// shadows returns the server whose tool's qualified name is the bare name
// of this one (a tool of server b called "a__echo" poses as a's echo), or "".
func (j *judge) shadows(srv, name string) string {
	for _, other := range j.owner[strings.ToLower(name)] {
		if other != srv {
			return other
		}
	}
	if s, _, ok := strings.Cut(name, Sep); ok {
		if _, configured := j.cfg.Servers[s]; configured && s != srv {
			return s
		}
	}
	return ""
}

// scan looks for injection markers in everything of a definition the
// model or the user reads.
func (j *judge) scan(srv string, st *sdk.Tool) []Finding {
	s := j.refs[srv]
	var out []Finding
	out = append(out, scanner{}.text("name", st.Name)...) // names collide or not: judged apart
	out = append(out, s.text("description", st.Description)...)
	if st.Title != "" {
		out = append(out, s.text("title", st.Title)...)
	}
	if st.Annotations != nil && st.Annotations.Title != "" {
		out = append(out, s.text("annotations.title", st.Annotations.Title)...)
	}
	schemaTexts(st.InputSchema, "inputSchema", func(where, text string) {
		out = append(out, s.text(where, text)...)
	})
	return out
}

// compileSchema compiles a tool's input schema with rein's JSON Schema
// support. A schema must be an object schema and self-contained: a $ref
// that leaves the document could make the compiler read a local file.
func compileSchema(comp *schema.Compiler, name string, in any) (json.RawMessage, *schema.Schema, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, fmt.Errorf("it is not a JSON object")
	}
	if t, _ := doc["type"].(string); t != "object" {
		return nil, nil, fmt.Errorf("its type is %v, not \"object\"", doc["type"])
	}
	if ref := outsideRef(doc); ref != "" {
		return nil, nil, fmt.Errorf("it refers outside itself (%q): only references within the schema (#...) are followed", ref)
	}
	sch, err := comp.CompileLazily(name, raw)
	if err != nil {
		return nil, nil, err
	}
	return raw, sch, nil
}

// outsideRef returns the first reference or base URI in a schema that
// could point outside it, or "".
func outsideRef(v any) string {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			switch k {
			case "$ref", "$dynamicRef", "$recursiveRef":
				if s, _ := x[k].(string); !strings.HasPrefix(s, "#") {
					return fmt.Sprint(x[k])
				}
			case "$id", "$anchor", "$dynamicAnchor":
				if s, _ := x[k].(string); k == "$id" && s != "" {
					return s
				}
			}
			if r := outsideRef(x[k]); r != "" {
				return r
			}
		}
	case []any:
		for _, e := range x {
			if r := outsideRef(e); r != "" {
				return r
			}
		}
	}
	return ""
}

// rolesOf maps the config's roles to tool roles; each must name a
// top-level string property of the schema, so a renamed argument is not
// silently unjudged.
func rolesOf(cfg map[string]string, raw json.RawMessage) (map[string]tool.Role, error) {
	if len(cfg) == 0 {
		return nil, nil
	}
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(raw, &doc) // compiled: an object
	props := doc.Properties
	roles := make(map[string]tool.Role, len(cfg))
	for _, arg := range slices.Sorted(maps.Keys(cfg)) {
		r, err := config.ParseRole(cfg[arg])
		if err != nil {
			return nil, err
		}
		if _, ok := props[arg]; !ok {
			return nil, fmt.Errorf("argument %q has role %s, but the tool has no such argument (known: %s)", arg, r, strings.Join(slices.Sorted(maps.Keys(props)), ", "))
		}
		roles[arg] = r
	}
	return roles, nil
}

// effectOf is the configured effect made stricter, never looser, by what
// the server's annotations claim: a tool that says it is destructive, or
// that it changes an open world, is irreversible whatever the config says;
// a tool that says it only reads is whatever the config says.
func effectOf(configured tool.Effect, a *sdk.ToolAnnotations) tool.Effect {
	hinted := tool.ReadOnly
	switch {
	case a == nil:
	case a.DestructiveHint != nil && *a.DestructiveHint:
		hinted = tool.Irreversible
	case !a.ReadOnlyHint && a.OpenWorldHint != nil && *a.OpenWorldHint:
		hinted = tool.Irreversible
	}
	return max(configured, hinted)
}
