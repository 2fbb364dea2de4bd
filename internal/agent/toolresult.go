package agent

import (
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/anvilmetal/anvil/internal/scripts"
)

// AgentEnv names the environment variable scripts find the agent by, to
// turn a tool's output into the result YAML MAAS's scripts write (the
// environment has no Python to do it in the script).
const AgentEnv = "ANVIL_AGENT"

// ToolResult is "anvil-agent result TOOL ARGS...": it reads a tool's
// output and prints the result YAML, returning the exit status.
//
//	result fio MODE=FILE...   fio --output-format=json per pass
//	result badblocks FILE     badblocks -v output; exit 1 when it found any
func ToolResult(args []string, stdout, stderr io.Writer) int {
	res, failed, err := toolResult(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	b, err := yaml.Marshal(map[string]any{"results": res})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	stdout.Write(b)
	if failed != "" {
		fmt.Fprintln(stderr, failed)
		return 1
	}
	return 0
}

func toolResult(args []string) (res map[string]any, failed string, err error) {
	if len(args) < 2 {
		return nil, "", fmt.Errorf("usage: result fio MODE=FILE... | result badblocks FILE")
	}
	switch args[0] {
	case "fio":
		passes := map[string]scripts.FioPass{}
		for _, a := range args[1:] {
			mode, file, ok := strings.Cut(a, "=")
			if !ok {
				return nil, "", fmt.Errorf("fio result %q: want MODE=FILE", a)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, "", fmt.Errorf("fio result: %w", err)
			}
			if passes[mode], err = scripts.ParseFio(b, mode); err != nil {
				return nil, "", err
			}
		}
		return scripts.FioResults(passes), "", nil
	case "badblocks":
		b, err := os.ReadFile(args[1])
		if err != nil {
			return nil, "", fmt.Errorf("badblocks result: %w", err)
		}
		bb, err := scripts.ParseBadblocks(b)
		if err != nil {
			return nil, "", err
		}
		if bb.Failed() {
			failed = fmt.Sprintf("FAILED: %d bad blocks, %d read, %d write and %d comparison errors", bb.Bad, bb.Read, bb.Write, bb.Comparison)
		}
		return bb.Results(), failed, nil
	}
	return nil, "", fmt.Errorf("result: unknown tool %q (fio, badblocks)", args[0])
}
