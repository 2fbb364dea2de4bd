package agent

import (
	"context"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
)

// Host is the System the agent runs on: procfs and sysfs under Root, the
// BMC read in-band once.
type Host struct {
	Root    string
	BootMAC string // from BOOTIF, or the NIC that got the first lease
	// BMCTimeout bounds the in-band BMC reading; 0 means 5 seconds.
	BMCTimeout time.Duration

	once   sync.Once
	bmc    *machine.BMCInfo
	bmcErr error
}

// BMC reads the BMC once (nil when there is none or it does not answer).
func (h *Host) BMC(ctx context.Context) *machine.BMCInfo {
	b, _ := h.ReadBMC(ctx)
	return b
}

// ReadBMC is BMC with the reason there is none.
func (h *Host) ReadBMC(ctx context.Context) (*machine.BMCInfo, error) {
	h.once.Do(func() {
		t := h.BMCTimeout
		if t == 0 {
			t = 5 * time.Second
		}
		h.bmc, h.bmcErr = ReadBMC(ctx, t)
	})
	return h.bmc, h.bmcErr
}

// Arch is MAAS's architecture name for the running binary.
func Arch() string { return runtime.GOARCH + "/generic" }

func (h *Host) Identity(ctx context.Context) agentapi.Identity {
	id := agentapi.Identity{
		BootMAC:  h.BootMAC,
		UUID:     CollectSMBIOS(h.Root).UUID,
		Arch:     Arch(),
		Firmware: CollectFirmware(h.Root),
		BMC:      h.BMC(ctx),
	}
	for _, n := range CollectNICs(h.Root) {
		if n.MAC != "" {
			id.MACs = append(id.MACs, n.MAC)
		}
	}
	sort.Strings(id.MACs)
	return id
}

func (h *Host) Inventory(ctx context.Context) (*machine.Inventory, map[string][]byte) {
	inv := CollectInventory(h.Root)
	inv.BMC = h.BMC(ctx)
	return inv, RawFiles(h.Root)
}

// stderr is where the agent prints before and after the console is set up.
var stderr = os.Stderr
