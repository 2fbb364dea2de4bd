package rack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/netns"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// powerRackEnv, when set in the environment, makes the test binary a rack
// power worker (childRack): tests start racks as processes of their own so
// that one can be killed with SIGKILL mid-command, as a rack dies.
const powerRackEnv = "ANVIL_TEST_POWER_RACK"

// childRack is what a rack process is told.
type childRack struct {
	Region, Key, ID string
	Networks        []string
	// Netns is the network namespace the rack's BMC traffic leaves from;
	// the rack talks to the region from the host's.
	Netns string
}

func TestMain(m *testing.M) {
	if v := os.Getenv(powerRackEnv); v != "" {
		os.Exit(runChildRack(v))
	}
	os.Exit(m.Run())
}

func runChildRack(v string) int {
	var c childRack
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cl, err := client.New(c.Region, c.Key)
	if err != nil {
		log.Error("client", "err", err)
		return 2
	}
	var nets []netip.Prefix
	for _, n := range c.Networks {
		nets = append(nets, netip.MustParsePrefix(n))
	}
	w, err := rack.StartPower(context.Background(), cl, rack.PowerConfig{
		ID: c.ID, Networks: nets, Drivers: serve.Drivers(), Log: log,
		Power:  power.Config{Backoff: []time.Duration{200 * time.Millisecond}},
		Within: func(fn func() error) error { return netns.Do(c.Netns, fn) },
	})
	if err != nil {
		log.Error("start", "err", err)
		return 2
	}
	log.Info("rack up", "id", w.ID())
	select {}
}
