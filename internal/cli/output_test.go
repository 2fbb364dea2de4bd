package cli

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/client"
)

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		m    client.Machine
		want string
	}{
		{client.Machine{Hostname: "web-1", SystemID: "abc", StatusName: "Ready", PowerState: "off"}, "web-1 (abc): Ready, power off"},
		{client.Machine{Hostname: "web-1", SystemID: "abc", StatusName: "Deployed", StatusMessage: "Deployed", PowerState: "on"}, "web-1 (abc): Deployed, power on"},
		{client.Machine{Hostname: "web-1", SystemID: "abc", StatusName: "Deploying", StatusMessage: "power it on now", PowerState: "unknown"},
			"web-1 (abc): Deploying, power unknown: power it on now"},
		// Server text cannot break the line or the terminal.
		{client.Machine{Hostname: "web-1", SystemID: "abc", StatusName: "Failed deployment", StatusMessage: "timed out\n\x1b[2J", PowerState: "on"},
			"web-1 (abc): Failed deployment, power on: timed out  [2J"},
	} {
		if got := summary(tc.m); got != tc.want {
			t.Errorf("summary(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
