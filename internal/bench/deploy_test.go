package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "1GiB": 1 << 30, "100MB": 100e6, "4096": 4096, "2g": 2 << 30, "1.5MiB": 3 << 19,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "12XB", "-1MiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) took it", in)
		}
	}
}

func TestPipeline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	_, err := pipeline(context.Background(), [][]string{{"printf", "hello"}, {"tr", "a-z", "A-Z"}, {"dd", "of=" + out, "status=none"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "HELLO" {
		t.Fatalf("got %q", b)
	}
	_, err = pipeline(context.Background(), [][]string{{"true"}, {"false"}})
	if err == nil || !strings.Contains(err.Error(), "false") {
		t.Fatalf("a failing stage: %v", err)
	}
}

func TestDeployMarkdownEscapesPipes(t *testing.T) {
	md := DeployMarkdown(DeployResult{Config: DeployConfig{FileType: "ddgz", Size: 1 << 20, Runs: 1}, Runs: []DeployRun{
		{Method: "curl | gunzip | dd", Run: 1, Bytes: 1 << 20, Seconds: 1, CPU: 0.5},
	}})
	if !strings.Contains(md, "`curl \\| gunzip \\| dd` | 1 |") {
		t.Fatal(md)
	}
}
