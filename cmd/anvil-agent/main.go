//go:build linux

// Command anvil-agent is /init of Anvil's ephemeral environment (see
// package agent). "anvil-agent result TOOL ..." turns a test tool's output
// into a script's result YAML. Run as any other process it only prints
// what it would tell the region: the machine's identity and inventory, as
// JSON.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
)

func main() {
	if os.Getpid() == 1 {
		agent.Main() // never returns
	}
	if len(os.Args) > 1 && os.Args[1] == "result" {
		os.Exit(agent.ToolResult(os.Args[2:], os.Stdout, os.Stderr))
	}
	h := &agent.Host{Root: "/", BMCTimeout: 3 * time.Second}
	ctx := context.Background()
	id := h.Identity(ctx)
	inv, _ := h.Inventory(ctx)
	out, err := json.MarshalIndent(map[string]any{"identity": id, "inventory": inv}, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
