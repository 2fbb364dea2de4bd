package machine

import (
	"strings"
	"testing"
	"time"
)

func TestParseDeployedAt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want DeployedAt
		bad  bool
	}{
		{"", DeployedAtOS, false},
		{"os", DeployedAtOS, false},
		{"local_boot", DeployedAtLocalBoot, false},
		{"local-boot", "", true},
		{"OS", "", true},
	} {
		got, err := ParseDeployedAt(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseDeployedAt(%q) = %q, %v", c.in, got, err)
		}
	}
}

// A deployment whose image is written and whose OS never reports fails
// with that reason; one still writing keeps the generic one.
func TestExpireReasonWhileWaitingForTheOS(t *testing.T) {
	cfg := DefaultConfig()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		netboot bool
		want    string
	}{
		{false, "the deployed OS never reported that it is up"},
		{true, "no progress reported within"},
	} {
		m := Machine{SystemID: "abc", Status: Deploying, Netboot: c.netboot, StatusExpires: t0}
		out, ok := Expire(m, t0, cfg)
		if !ok || out.Machine.Status != FailedDeployment || !strings.Contains(out.Machine.StatusMessage+eventText(out.Events), c.want) {
			t.Errorf("netboot=%v: ok=%v status=%s message=%q events=%q", c.netboot, ok, out.Machine.Status, out.Machine.StatusMessage, eventText(out.Events))
		}
	}
}

func eventText(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Description + "\n")
	}
	return b.String()
}
