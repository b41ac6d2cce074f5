package eval

import (
	"fmt"
	"html/template"
	"io"
	"sync"
)

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG charts, no scripts, no external assets.
func (r Report) WriteHTML(w io.Writer) error {
	p, err := page().Clone()
	if err != nil {
		return err
	}
	p.Funcs(template.FuncMap{"label": r.label})
	return p.Execute(w, htmlData{Report: r, Bars: r.bars(), Costs: r.costs()})
}

type htmlData struct {
	Report
	Bars  template.HTML
	Costs template.HTML
}

// series are the rates the main chart shows, with their colours.
var series = []struct {
	label, colour string
	get           func(Metrics) float64
}{
	{"utility", "#2e7d32", func(m Metrics) float64 { return m.Utility }},
	{"utility under attack", "#81c784", func(m Metrics) float64 { return m.UtilityUnderAttack }},
	{"attack success", "#c62828", func(m Metrics) float64 { return m.AttackSuccessRate }},
	{"harm", "#6a1b9a", func(m Metrics) float64 { return m.HarmRate }},
	{"false block (oracle)", "#ef6c00", func(m Metrics) float64 { return m.FalseBlockRate }},
}

// bars draws, for each configuration, one bar per rate in series.
func (r Report) bars() template.HTML {
	const (
		top, left, height, bar, gap, group = 30, 50, 220, 16, 2, 40
	)
	groupW := len(series)*(bar+gap) + group
	width := left + len(r.Configs)*groupW + 20
	s := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="rates per guard configuration">`, width, top+height+60)
	for i := 0; i <= 4; i++ {
		y := top + height - i*height/4
		s += fmt.Sprintf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/><text x="%d" y="%d" font-size="11" text-anchor="end">%d%%</text>`,
			left, y, width-10, y, left-6, y+4, i*25)
	}
	for gi, m := range r.Configs {
		x0 := left + 10 + gi*groupW
		for si, se := range series {
			v := se.get(m)
			h := int(v*height + 0.5)
			x := x0 + si*(bar+gap)
			s += fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %s: %s</title></rect>`,
				x, top+height-h, bar, h, se.colour, template.HTMLEscapeString(m.Name), se.label, pct(v))
		}
		s += fmt.Sprintf(`<text x="%d" y="%d" font-size="13" text-anchor="middle" font-weight="bold">%s</text>`,
			x0+len(series)*(bar+gap)/2, top+height+18, template.HTMLEscapeString(m.Name))
		if m.User != NoUser && m.User != "" {
			s += fmt.Sprintf(`<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`,
				x0+len(series)*(bar+gap)/2, top+height+30, template.HTMLEscapeString(string(m.User)))
		}
	}
	lx := left
	for _, se := range series {
		s += fmt.Sprintf(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="12">%s</text>`,
			lx, top+height+40, se.colour, lx+16, top+height+50, se.label)
		lx += 22 + 7*len(se.label)
	}
	return template.HTML(s + `</svg>`) // every interpolated string is escaped above
}

// costs draws approvals per task and steps over the reference per
// configuration, as horizontal bars.
func (r Report) costs() template.HTML {
	const left, row, scale = 190, 22, 120
	maxv := 1.0
	for _, m := range r.Configs {
		maxv = max(maxv, m.ApprovalsPerTask, m.StepsVsReference)
	}
	height := 30 + len(r.Configs)*2*row
	s := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="approvals and steps per configuration">`, left+scale*2+160, height)
	for i, m := range r.Configs {
		y := 10 + i*2*row
		a := int(m.ApprovalsPerTask / maxv * scale * 2)
		st := int(m.StepsVsReference / maxv * scale * 2)
		s += fmt.Sprintf(`<text x="%d" y="%d" font-size="12" text-anchor="end" font-weight="bold">%s</text>`, left-8, y+12, template.HTMLEscapeString(r.label(m)))
		s += fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="9" fill="#1565c0"/><text x="%d" y="%d" font-size="11">%.2f approvals/run</text>`, left, y+2, a, left+a+6, y+10, m.ApprovalsPerTask)
		s += fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="9" fill="#90a4ae"/><text x="%d" y="%d" font-size="11">%.2f× reference steps</text>`, left, y+14, st, left+st+6, y+22, m.StepsVsReference)
	}
	return template.HTML(s + `</svg>`)
}

var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"pct": pct, "label": Report{}.label}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rein eval report</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1150px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;margin-top:28px}
p.note{color:#555;font-size:13px;margin-top:0}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right} th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}
td.bad{background:#ffebee} td.good{background:#e8f5e9}
</style></head><body>
<h1>rein eval</h1>
<p class="note">Scripted personas drive every run, so what is measured is the harness, not a model. Rates are over runs; see docs/EVAL.md for the definitions. The user is the simulated human who answers the questions: attentive (yes exactly to the calls the task needs), rubber-stamp (yes to everything), absent (nobody answers: every question is No); "-" for a configuration that asks nobody.</p>
<h2>Rates by guard configuration</h2>
{{.Bars}}
<table><tr><th>guards</th><th>user</th><th>tasks</th><th>runs</th><th>utility</th><th>utility under attack</th><th>attack success</th><th>harm</th><th>false block</th><th>recovery</th><th>approvals / run</th><th>steps / reference</th><th>tokens / run</th><th>cost / run</th></tr>
{{range .Configs}}<tr><td>{{.Name}}</td><td>{{.User}}</td><td>{{.Tasks}}</td><td>{{.Runs}}</td><td>{{pct .Utility}}</td><td>{{pct .UtilityUnderAttack}}</td><td{{if gt .AttackSuccessRate 0.0}} class="bad"{{else}} class="good"{{end}}>{{pct .AttackSuccessRate}}</td><td{{if gt .HarmRate 0.0}} class="bad"{{else}} class="good"{{end}}>{{pct .HarmRate}}</td><td>{{pct .FalseBlockRate}}</td><td>{{pct .RecoveryRate}}</td><td>{{printf "%.2f" .ApprovalsPerTask}}</td><td>{{printf "%.2f" .StepsVsReference}}</td><td>{{printf "%.0f" .TokensPerTask}}</td><td>${{printf "%.4f" .CostPerTask}}</td></tr>
{{end}}</table>
<h2>Approvals and steps</h2>
{{.Costs}}
<h2>Per suite: utility / utility under attack / attack success</h2>
<table><tr><th>suite</th>{{range .Configs}}<th>{{label .}}</th>{{end}}</tr>
{{range .Suites}}<tr><td>{{.Suite}}</td>{{range .Configs}}{{if eq .Runs 0}}<td>n/a</td>{{else}}<td{{if gt .AttackSuccessRate 0.0}} class="bad"{{end}}>{{pct .Utility}} / {{pct .UtilityUnderAttack}} / {{pct .AttackSuccessRate}}</td>{{end}}{{end}}</tr>
{{end}}</table>
</body></html>
`))
})
