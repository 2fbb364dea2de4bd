package ui_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/serve"
)

var oldestReading = regexp.MustCompile(`id="oldest-reading">([^ <]+)`)

// TestStatsOldestReading reads the statistics page while machines'
// power readings age and are renewed: the oldest reading it shows is that
// of the machines the monitor polls as they are now. It once kept a
// reading from when the list last changed (a fresh reading changes
// nothing the list shows), and showed 28 minutes with every machine read
// seconds before; a machine with manual power, never polled, does not
// count whatever it last read.
func TestStatsOldestReading(t *testing.T) {
	eachDB(t, func(t *testing.T, s *site) {
		ctx := t.Context()
		now := time.Now()
		add := func(host, mac, powerType string, read time.Time) string {
			m := &machine.Machine{Hostname: host, Architecture: "amd64/generic", Status: machine.Ready, PowerType: powerType,
				PowerParams: map[string]string{"power_address": "127.0.0.1:9", "power_user": "admin", "power_pass": "x"},
				Interfaces:  []machine.Interface{{Name: "eth0", MAC: mac, Boot: true}}}
			if powerType == "manual" {
				m.PowerParams = nil
			}
			if err := s.srv.Store.CreateMachine(ctx, m, nil); err != nil {
				t.Fatal(err)
			}
			s.setReadAt(t, m.SystemID, read)
			return m.SystemID
		}
		polled := add("polled-1", "52:54:00:5e:00:01", "ipmi", now.Add(-28*time.Minute))
		add("manual-1", "52:54:00:5e:00:02", "manual", now.Add(-3*time.Hour))

		c := newClient(t)
		s.login(c, "ada", adaPass)
		s.waitOldest(t, c, func(d time.Duration) bool { return d >= 28*time.Minute && d < 29*time.Minute })
		// A new reading: the oldest is now seconds old.
		s.setReadAt(t, polled, time.Now())
		s.waitOldest(t, c, func(d time.Duration) bool { return d < 30*time.Second })
	}, func(c *serve.Config) {
		c.UI.SampleEvery = 100 * time.Millisecond
		c.Monitor.Interval = 24 * time.Hour // the test's readings are the only ones
	})
}

func (s *site) setReadAt(t *testing.T, id string, at time.Time) {
	t.Helper()
	_, err := s.srv.Store.UpdateMachine(t.Context(), id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Watch.ReadAt = at.UTC()
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitOldest waits up to ten seconds for the statistics page's oldest
// power reading to satisfy ok.
func (s *site) waitOldest(t *testing.T, c *http.Client, ok func(time.Duration) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	last := ""
	for {
		code, _, page := s.do(c, "GET", "/MAAS/stats/live", nil, nil)
		if m := oldestReading.FindStringSubmatch(page); code == http.StatusOK && m != nil {
			last = m[1]
			if d, err := time.ParseDuration(m[1]); err == nil && ok(d) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the oldest power reading shows %q (status %d)", last, code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
