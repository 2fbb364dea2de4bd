package api_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/anvilmetal/anvil/internal/agent"
)

// loopDisk is a 32 MiB loop device standing for the machine's disk.
func loopDisk(t *testing.T) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, make([]byte, 32<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device: %v %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	return dev
}

// buildAgent builds the agent binary the shipped scripts write their
// result YAML with.
func buildAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "anvil-agent")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/anvilmetal/anvil/cmd/anvil-agent")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestShippedTestsRun runs the shipped fio, badblocks and
// stress-ng-cpu-short scripts as the environment does, with the real
// tools, on a loop device in place of the machine's disk, their timeouts
// shortened through the API as an operator would; fio's and badblocks'
// figures come back as the result YAML MAAS's scripts write.
func TestShippedTestsRun(t *testing.T) {
	for _, tool := range []string{"fio", "badblocks", "stress-ng", "blockdev"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (scripts/test.sh installs it)", tool)
		}
	}
	dev := loopDisk(t)
	bin := buildAgent(t)
	eachDB(t, func(t *testing.T, e *env) {
		var list []apiScript
		e.must(200, http.MethodGet, "scripts/", e.admin, url.Values{"type": {"testing"}}, &list)
		listed := map[string]apiScript{}
		for _, s := range list {
			listed[s.Name] = s
		}
		for _, n := range []string{"fio", "badblocks", "stress-ng-cpu-short", "stress-ng-cpu-long", "stress-ng-memory-short", "stress-ng-memory-long"} {
			if s, ok := listed[n]; !ok || !s.Default {
				t.Fatalf("scripts/ lacks shipped %s: %+v", n, s)
			}
		}
		if listed["stress-ng-cpu-short"].Timeout != "0:05:00" || listed["stress-ng-cpu-long"].Timeout != "14:00:00" {
			t.Fatalf("timeouts %q %q", listed["stress-ng-cpu-short"].Timeout, listed["stress-ng-cpu-long"].Timeout)
		}
		for name, timeout := range map[string]string{"fio": "10", "stress-ng-cpu-short": "10"} {
			e.must(200, http.MethodPut, "scripts/"+name, e.admin, url.Values{"timeout": {timeout}}, nil)
		}
		id, env := e.testingMachine("benched", "52:54:00:5c:00:09", "fio,badblocks,stress-ng-cpu-short")
		task, err := env.Task(t.Context())
		if err != nil || len(task.Scripts) != 3 {
			t.Fatalf("task %+v %v", task.Scripts, err)
		}
		// The machine's disk is vda; the host's vda must never be touched.
		for i := range task.Scripts {
			for j, a := range task.Scripts[i].Args {
				task.Scripts[i].Args[j] = strings.ReplaceAll(a, "/dev/vda", dev)
			}
			if strings.Contains(strings.Join(task.Scripts[i].Args, " "), "vda") {
				t.Fatalf("%s would run on the host's disk: %v", task.Scripts[i].Name, task.Scripts[i].Args)
			}
		}
		runner := &agent.ScriptRunner{Report: env.Report, Logf: t.Logf, Dir: t.TempDir(), Every: time.Second, Agent: bin}
		bad, err := runner.Run(context.Background(), task.Scripts)
		if err != nil || len(bad) != 0 {
			t.Fatalf("run: %v %v", bad, err)
		}
		var set apiSet
		e.must(200, http.MethodGet, "nodes/"+id+"/results/current-testing/", e.user, url.Values{"include_output": {"1"}}, &set)
		got := map[string]apiResult{}
		for _, r := range set.Results {
			got[r.Name] = r
			if r.StatusName != "Passed" {
				t.Errorf("%s: %s\n%s", r.Name, r.StatusName, dec(t, r.Output))
			}
		}
		var fio, bb struct {
			Results map[string]any `yaml:"results"`
		}
		if err := yaml.Unmarshal([]byte(dec(t, got["fio"].Result)), &fio); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"random_read", "sequential_read", "random_write", "sequential_write"} {
			bw, _ := fio.Results[k].(string)
			iops, _ := fio.Results[k+"_iops"].(int)
			if !strings.HasSuffix(bw, " KB/s") || bw == "0 KB/s" || iops <= 0 {
				t.Errorf("fio %s: %q, %v IOPS", k, bw, fio.Results[k+"_iops"])
			}
		}
		if err := yaml.Unmarshal([]byte(dec(t, got["badblocks"].Result)), &bb); err != nil {
			t.Fatal(err)
		}
		if len(bb.Results) != 4 || bb.Results["badblocks"] != 0 || !strings.Contains(dec(t, got["badblocks"].Output), "Pass completed, 0 bad blocks found") {
			t.Errorf("badblocks %v\n%s", bb.Results, dec(t, got["badblocks"].Output))
		}
		if out := dec(t, got["stress-ng-cpu-short"].Output); !strings.Contains(out, "matrix") || !strings.Contains(out, "cpu") {
			t.Errorf("stress-ng output %s", out)
		}
		t.Logf("fio %v; badblocks %v; runtimes fio %s badblocks %s stress-ng-cpu-short %s", fio.Results, bb.Results,
			got["fio"].Runtime, got["badblocks"].Runtime, got["stress-ng-cpu-short"].Runtime)
	})
}
