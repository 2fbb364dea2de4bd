package ui

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"statusKey": func(s machine.Status) string { return strings.ToLower(s.Key()) },
		"gib":       func(mib int64) string { return fmt.Sprintf("%.1f GiB", float64(mib)/1024) },
		"gb":        func(mb float64) string { return fmt.Sprintf("%.1f GB", mb/1000) },
		"bytes":     humanBytes,
		"clock":     func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"ago":       ago,
		"join":      strings.Join,
		"levelName": func(l machine.Level) string { return strings.ToLower(string(l)) },
		"list":      func(v ...string) []string { return v },
		"bmc":       machine.DescribeBMC,
	}).ParseFS(templateFS, "templates/*.html")
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
