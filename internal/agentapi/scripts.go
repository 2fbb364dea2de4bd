package agentapi

import "context"

// ResultPath takes, with the machine's token, a script's progress and
// end: output as it comes, then its exit status and result.
const ResultPath = "anvil/v1/result"

// TaskScript is one script run the phase is to make: the text, on one
// instance (a disk, a NIC, or the machine) with its arguments.
type TaskScript struct {
	ResultID int64    `json:"result_id"`
	Name     string   `json:"name"`
	Text     []byte   `json:"text,omitempty"`
	Args     []string `json:"args,omitempty"`
	Instance string   `json:"instance,omitempty"`
	// Timeout is in seconds; 0 means none.
	Timeout  int  `json:"timeout,omitempty"`
	Testing  bool `json:"testing,omitempty"`
	Builtin  bool `json:"builtin,omitempty"` // run by the agent itself
	Parallel int  `json:"parallel,omitempty"`
}

// Script result states the agent reports.
const (
	ScriptRunning  = "running"
	ScriptPassed   = "passed"
	ScriptFailed   = "failed"
	ScriptTimedOut = "timedout"
	ScriptSkipped  = "skipped"
	ScriptDegraded = "degraded"
)

// ScriptReport is one report on a script run: output appended since the
// last one and, once it ended, how.
type ScriptReport struct {
	ResultID int64  `json:"result_id"`
	Status   string `json:"status"`
	Output   []byte `json:"output,omitempty"` // appended
	Stdout   []byte `json:"stdout,omitempty"` // appended
	Stderr   []byte `json:"stderr,omitempty"` // appended
	// Set when the script ended.
	ExitStatus *int   `json:"exit_status,omitempty"`
	Result     []byte `json:"result,omitempty"` // the result YAML
	RuntimeMS  int64  `json:"runtime_ms,omitempty"`
}

// Report sends a script report.
func (c *Client) Report(ctx context.Context, r ScriptReport) error {
	var out struct{}
	return c.postJSON(ctx, ResultPath, r, &out)
}
