package cli_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// TestE2EAcceptAndActions accepts a held boot, and runs the actions the
// CLI gained (test, rescue mode): each prints the machine as the action
// left it, in one line or as JSON; one that the status does not allow,
// or that has nothing to act on, is refused in words.
func TestE2EAcceptAndActions(t *testing.T) {
	eachDB(t, func(t *testing.T, e *e2e) {
		e.login()
		ctx := context.Background()
		id := e.addMachine("bmc-1", "52:54:00:e2:7c:01")
		e.fails([]string{"machine", "accept", "bmc-1"}, "400 Bad Request", "no held boot to accept for: "+id)
		e.fails([]string{"machine", "accept", "nosuch"}, `no machine has system id or hostname "nosuch"`)
		const other = "52:54:00:e2:7c:99"
		if err := e.srv.Store.HoldBoot(ctx, store.HeldBoot{SystemID: id, MACs: []string{other}, BootMAC: other,
			Source: "127.0.0.1", Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		if out := e.ok("machine", "accept", "bmc-1"); out != "bmc-1 ("+id+"): New, power unknown\n" {
			t.Errorf("machine accept printed %q", out)
		}
		m, err := e.srv.Store.GetMachine(ctx, id)
		if err != nil || !slices.ContainsFunc(m.Interfaces, func(i machine.Interface) bool { return i.MAC == other }) {
			t.Errorf("after accept the machine has %+v, %v; want the held boot's MAC %s", m.Interfaces, err, other)
		}
		e.fails([]string{"machine", "accept", id}, "no held boot")

		e.ok("machine", "commission", id)
		e.act(id, machine.Succeed)
		e.fails([]string{"machine", "exit-rescue-mode", "bmc-1"}, "409 Conflict")
		if out := e.ok("machine", "test", "bmc-1"); !strings.HasPrefix(out, "bmc-1 ("+id+"): Testing, power ") {
			t.Errorf("machine test printed %q", out)
		}
		e.ok("machine", "abort", id)
		var got cliMachine
		if err := json.Unmarshal([]byte(e.ok("machine", "rescue-mode", "bmc-1", "--json")), &got); err != nil || got.StatusName != "Entering rescue mode" {
			t.Errorf("machine rescue-mode --json: %+v %v", got, err)
		}
	})
}
