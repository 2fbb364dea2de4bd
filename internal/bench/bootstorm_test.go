package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab/simboot"
)

// buildAnvil builds the anvil binary from this tree for a test to run as
// the server.
func buildAnvil(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed, to build anvil")
	}
	bin := filepath.Join(t.TempDir(), "anvil")
	if out, err := exec.Command(goBin, "build", "-o", bin, "github.com/anvilmetal/anvil/cmd/anvil").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBootstorm boots 50 simulated machines at once against `anvil serve`
// (built from this tree) in the bench's namespaces, a fifth of them losing
// their first DHCP packet: every one must end NEW with its MACs, once.
func TestBootstorm(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is not installed")
	}
	bin := buildAnvil(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 50
	var progress strings.Builder
	res, err := RunBootstorm(ctx, BootstormConfig{
		Binary: bin, Machines: n, KernelBytes: 64 << 10, InitrdBytes: 256 << 10,
		DropDHCP: 0.2, Timeout: 2 * time.Minute, Out: &progress,
	})
	t.Log("\n" + BootstormMarkdown(res))
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if res.Enlisted != n || res.New != n || len(res.Missing) != 0 {
		t.Errorf("enlisted %d, NEW %d of %d; missing %v", res.Enlisted, res.New, n, res.Missing)
	}
	if res.Duplicates != 0 {
		t.Errorf("%d MACs on more than one machine", res.Duplicates)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors by stage: %v: %v", res.Errors, res.FirstErrs)
	}
	dropped := 0
	seen := map[string]bool{}
	for _, r := range res.Results {
		if r.SystemID != "" && seen[r.SystemID] {
			t.Errorf("system ID %s answered to two machines", r.SystemID)
		}
		seen[r.SystemID] = true
		if r.Action != "enlist" || r.Next != "poweroff" || r.Purpose != "enlist" || r.Config != "ipxe.cfg-default-amd64" {
			t.Errorf("%s: config %s purpose %s, hello %s, then %s", r.MAC, r.Config, r.Purpose, r.Action, r.Next)
		}
		if r.Bytes != 64<<10+256<<10 {
			t.Errorf("%s: fetched %d bytes of kernel and initrd", r.MAC, r.Bytes)
		}
		if r.DHCPRetries > 0 {
			dropped++
		}
	}
	if dropped == 0 {
		t.Error("no machine retransmitted DHCP, though a fifth drop their first packet")
	}
}

func TestBootstormMarkdown(t *testing.T) {
	md := BootstormMarkdown(BootstormResult{
		Config: BootstormConfig{Machines: 2}, AllNew: 1500 * time.Millisecond, Enlisted: 2, New: 2,
		Errors: map[string]int{simboot.StageHello: 1}, Stages: map[string]Latency{simboot.StageDHCP: {P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond}},
	})
	for _, want := range []string{"| all machines New after | 1.50 s |", "| errors: hello | 1 |", "| dhcp | 1.0 | 2.0 | 3.0 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
}
