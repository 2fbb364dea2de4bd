package netns

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Call runs in the namespace: a listener made there is not reachable from
// the caller's namespace, and an interface list shows the namespace's own.
func TestCall(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	name := "anvnstest" + strings.ReplaceAll(t.Name(), "/", "")
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })

	ifs, err := Call(name, net.Interfaces)
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("interfaces in a new namespace: %v", ifs)
	}
	if err := Do("no-such-namespace-anvil", func() error { return nil }); err == nil || !strings.Contains(err.Error(), "no-such-namespace-anvil") {
		t.Fatalf("a missing namespace: %v", err)
	}
	here, err := Call("", net.Interfaces)
	if err != nil || len(here) == 0 {
		t.Fatalf("the caller's namespace: %v %v", here, err)
	}
}
