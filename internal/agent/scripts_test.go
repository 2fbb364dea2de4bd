package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/scripts"
)

// meetScript passes only if a run with the other argument is running at
// the same time: each leaves a mark and waits up to 3 s for the other's.
const meetScript = `#!/bin/sh
touch "$MEET/$1"
i=0
while [ ! -e "$MEET/$2" ]; do
  i=$((i + 1))
  [ $i -le 30 ] || { echo "$2 never ran alongside $1" >&2; exit 1; }
  sleep 0.1
done
echo "$1 met $2"
`

func runMeet(t *testing.T, parallel scripts.Parallel, sameName bool) (bad []string, finals map[int64]string) {
	t.Helper()
	meet := t.TempDir()
	t.Setenv("MEET", meet)
	var mu sync.Mutex
	finals = map[int64]string{}
	sr := &ScriptRunner{Dir: t.TempDir(), Logf: t.Logf, Every: time.Second,
		Report: func(_ context.Context, r agentapi.ScriptReport) error {
			mu.Lock()
			defer mu.Unlock()
			if r.Status != agentapi.ScriptRunning {
				finals[r.ResultID] = r.Status
			}
			return nil
		}}
	other := "meet"
	if !sameName {
		other = "meet-too"
	}
	list := []agentapi.TaskScript{
		{ResultID: 1, Name: "meet", Instance: "sda", Text: []byte(meetScript), Args: []string{"a", "b"}, Timeout: 10, Testing: true, Parallel: int(parallel)},
		{ResultID: 2, Name: other, Instance: "sdb", Text: []byte(meetScript), Args: []string{"b", "a"}, Timeout: 10, Testing: true, Parallel: int(parallel)},
	}
	bad, err := sr.Run(context.Background(), list)
	if err != nil {
		t.Fatal(err)
	}
	return bad, finals
}

// TestRunnerParallel runs real scripts that pass only side by side:
// instances of one script and "any" scripts meet, "disabled" ones and
// instances of different scripts do not.
func TestRunnerParallel(t *testing.T) {
	for _, c := range []struct {
		name     string
		parallel scripts.Parallel
		sameName bool
		meet     bool
	}{
		{"instances of one script", scripts.ParallelInstance, true, true},
		{"instances of two scripts", scripts.ParallelInstance, false, false},
		{"any", scripts.ParallelAny, false, true},
		{"disabled", scripts.ParallelDisabled, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad, finals := runMeet(t, c.parallel, c.sameName)
			if c.meet && (len(bad) != 0 || finals[1] != agentapi.ScriptPassed || finals[2] != agentapi.ScriptPassed) {
				t.Fatalf("did not run side by side: bad %v, %v", bad, finals)
			}
			if !c.meet && (len(bad) == 0 || finals[1] != agentapi.ScriptFailed) {
				t.Fatalf("ran side by side: bad %v, %v", bad, finals)
			}
		})
	}
}

// TestRunnerOwnDirectories: runs of one script side by side write their
// result files apart.
func TestRunnerOwnDirectories(t *testing.T) {
	text := "#!/bin/sh\nprintf 'results:\\n  disk: %s\\n' \"$1\" > \"$RESULT_PATH\"\nsleep 0.3\n"
	var mu sync.Mutex
	results := map[int64]string{}
	dir := t.TempDir()
	sr := &ScriptRunner{Dir: dir, Logf: t.Logf, Every: time.Second, Report: func(_ context.Context, r agentapi.ScriptReport) error {
		mu.Lock()
		defer mu.Unlock()
		if r.Status != agentapi.ScriptRunning {
			results[r.ResultID] = string(r.Result)
		}
		return nil
	}}
	var list []agentapi.TaskScript
	for i := int64(1); i <= 3; i++ {
		list = append(list, agentapi.TaskScript{ResultID: i, Name: "disk", Text: []byte(text), Args: []string{fmt.Sprint("sd", i)}, Testing: true, Parallel: int(scripts.ParallelInstance)})
	}
	start := time.Now()
	if bad, err := sr.Run(context.Background(), list); err != nil || len(bad) != 0 {
		t.Fatal(bad, err)
	}
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Errorf("three 0.3 s instances took %v: not side by side", d)
	}
	for i := int64(1); i <= 3; i++ {
		if !strings.Contains(results[i], fmt.Sprint("disk: sd", i)) {
			t.Errorf("result %d: %q", i, results[i])
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprint(i), "disk.result.yaml")); err != nil {
			t.Error(err)
		}
	}
}

// TestDiskTestsWithoutDisk: the shipped disk tests, planned before the
// machine's disks were known, skip in words instead of failing.
func TestDiskTestsWithoutDisk(t *testing.T) {
	for _, b := range scripts.Builtins() {
		if b.Name != "fio" && b.Name != "badblocks" {
			continue
		}
		var final agentapi.ScriptReport
		sr := &ScriptRunner{Dir: t.TempDir(), Logf: t.Logf, Every: time.Second, Report: func(_ context.Context, r agentapi.ScriptReport) error {
			if r.Status != agentapi.ScriptRunning {
				final = r
			}
			return nil
		}}
		bad, err := sr.Run(context.Background(), []agentapi.TaskScript{{ResultID: 1, Name: b.Name, Text: b.Text, Testing: true, Parallel: int(b.Parallel)}})
		if err != nil || len(bad) != 0 || final.Status != agentapi.ScriptSkipped || !strings.Contains(string(final.Output), "no disk given") {
			t.Errorf("%s: %v %v %s %q", b.Name, bad, err, final.Status, final.Output)
		}
	}
}

// TestRunnerParallelRefused: when the region refuses one of the runs
// going side by side (the phase ended), the others are stopped at once
// and the run ends with ErrStopped.
func TestRunnerParallelRefused(t *testing.T) {
	sr := &ScriptRunner{Dir: t.TempDir(), Logf: t.Logf, Every: 100 * time.Millisecond, Report: func(_ context.Context, r agentapi.ScriptReport) error {
		if r.ResultID == 1 && len(r.Output) > 0 {
			return &agentapi.StatusError{Code: 409, Message: "the phase is over"}
		}
		return nil
	}}
	list := []agentapi.TaskScript{
		{ResultID: 1, Name: "talk", Text: []byte("#!/bin/sh\necho hello\nsleep 30\n"), Testing: true, Parallel: int(scripts.ParallelAny)},
		{ResultID: 2, Name: "sleep", Text: []byte("#!/bin/sh\nsleep 30\n"), Testing: true, Parallel: int(scripts.ParallelAny)},
	}
	start := time.Now()
	_, err := sr.Run(context.Background(), list)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("run: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the runs alongside were not stopped: %v", d)
	}
}
