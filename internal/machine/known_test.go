package machine

import (
	"strings"
	"testing"
	"time"
)

func TestGreetEveryStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := DefaultConfig()
	for s := range statusNames {
		m := Machine{SystemID: "abc", Hostname: "n1", Status: s, Netboot: true, Interfaces: []Interface{{MAC: "52:54:00:00:00:01"}}}
		want := PurposeOf(s)
		for _, booted := range []BootPurpose{BootEnlist, BootEphemeral, BootInstall} {
			for _, c := range []struct{ enrol, seen bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
				enrol := c.enrol
				h := Hello{Booted: booted, EnrolOK: enrol, MACs: []string{"52:54:00:00:00:01"}, Now: now}
				if c.seen {
					h.Witness = seenAt(now.Add(-time.Minute), "52:54:00:00:00:01")
				}
				o := Greet(m, h, false, cfg)
				netboot := s != New && (want == BootEphemeral || want == BootInstall)
				var exp HelloAnswer
				switch {
				case s == New:
					exp = AnswerPowerOff
				case netboot && booted == want && enrol:
					exp = AnswerProceed
				case netboot && !c.seen:
					// Uncorroborated: moves nothing.
					exp = AnswerPowerOff
				case netboot:
					exp = AnswerReboot
				case want == BootLocal:
					exp = AnswerReboot
				default:
					exp = AnswerPowerOff
				}
				if o.Answer != exp {
					t.Errorf("%s booted %s enrol=%v: %s, want %s", s, booted, enrol, o.Answer, exp)
				}
				if len(o.Events) == 0 {
					t.Errorf("%s booted %s: no event", s, booted)
				}
				if o.Answer == AnswerProceed && (o.Phase == "" || o.Machine.WrongBoots != 0 || (s.Monitored() && !o.Machine.StatusExpires.After(now))) {
					t.Errorf("%s proceed: phase %q wrong boots %d expires %v", s, o.Phase, o.Machine.WrongBoots, o.Machine.StatusExpires)
				}
				if netboot && o.Answer == AnswerReboot && (o.Power != PowerRestart || o.Machine.WrongBoots != 1) {
					t.Errorf("%s wrong boot: power %q wrong boots %d", s, o.Power, o.Machine.WrongBoots)
				}
				if o.Machine.Status != s {
					t.Errorf("%s: one wrong boot changed the status to %s", s, o.Machine.Status)
				}
				if !c.seen && !enrol && (o.Power != PowerNone || o.Machine.WrongBoots != 0 || o.Trusted) {
					t.Errorf("%s booted %s uncorroborated: power %q wrong boots %d trusted %v", s, booted, o.Power, o.Machine.WrongBoots, o.Trusted)
				}
			}
		}
	}
}

func TestGreetLoopGuard(t *testing.T) {
	now := time.Now()
	m := Machine{SystemID: "abc", Hostname: "n1", Status: Deploying, PreviousStatus: Allocated, Netboot: true, Interfaces: []Interface{{MAC: "52:54:00:00:00:01"}}}
	for i := 1; i <= MaxWrongBoots; i++ {
		o := Greet(m, Hello{Booted: BootEnlist, MACs: []string{"52:54:00:00:00:01"}, Witness: seenAt(now, "52:54:00:00:00:01"), Now: now}, false, DefaultConfig())
		m = o.Machine
		if i < MaxWrongBoots {
			if o.Answer != AnswerReboot || m.WrongBoots != i || !strings.Contains(o.Events[0].Description, "enlist environment instead of install") {
				t.Fatalf("boot %d: %s %d %v", i, o.Answer, m.WrongBoots, o.Events)
			}
			continue
		}
		if o.Answer != AnswerPowerOff || m.Status != FailedDeployment || m.WrongBoots != 0 ||
			!strings.Contains(m.StatusMessage, "3 wrong boots in a row") {
			t.Fatalf("guard: %s %s %q", o.Answer, m.Status, m.StatusMessage)
		}
	}
	// The right boot resets the count.
	m = Machine{SystemID: "abc", Status: Commissioning, WrongBoots: 2}
	if o := Greet(m, Hello{Booted: BootEphemeral, EnrolOK: true, Now: now}, false, DefaultConfig()); o.Answer != AnswerProceed || o.Machine.WrongBoots != 0 {
		t.Fatalf("right boot: %s %d", o.Answer, o.Machine.WrongBoots)
	}
	// A machine added by BMC alone proceeds from its unknown boot, once
	// corroborated; otherwise it is held.
	m.Watch.LastAsk = PowerAsk{Action: PowerUp, Status: Commissioning, At: now.Add(-2 * time.Minute)}
	h := Hello{Booted: BootEnlist, MACs: []string{"52:54:00:00:00:07"}, Witness: seenAt(now.Add(-time.Minute), "52:54:00:00:00:07"), Now: now}
	if o := Greet(m, h, true, DefaultConfig()); o.Answer != AnswerProceed || o.Phase != "commissioning" || !o.Trusted {
		t.Fatalf("awaited boot: %s %q", o.Answer, o.Phase)
	}
	h.Witness = Witness{}
	if o := Greet(m, h, true, DefaultConfig()); o.Answer != AnswerPowerOff || o.Held == "" || o.Trusted || o.Events[0].Type != "Enlistment held" {
		t.Fatalf("uncorroborated awaited boot: %s held %q trusted %v", o.Answer, o.Held, o.Trusted)
	}
}

func seenAt(at time.Time, mac string) Witness {
	return Witness{Seen: true, SeenMAC: mac, SeenAt: at}
}

func TestIdentify(t *testing.T) {
	a := Machine{SystemID: "aaa", Hostname: "a", Interfaces: []Interface{{MAC: "52:54:00:00:00:01"}}, BMCIdentity: "ipmi|192.0.2.21|623|"}
	b := Machine{SystemID: "bbb", Hostname: "b", BMCIdentity: "ipmi|192.0.2.22|623|"}
	c := Machine{SystemID: "ccc", Hostname: "c", Interfaces: []Interface{{MAC: "52:54:00:00:00:03"}}}
	bmc := func(addr string) *BMCInfo { return &BMCInfo{Type: "ipmi", Address: addr} }
	tests := []struct {
		name    string
		c       Candidates
		h       Hello
		want    string // system ID, "" unknown, "held"
		awaited bool
		newMACs int
	}{
		{"unknown", Candidates{}, Hello{MACs: []string{"52:54:00:00:00:09"}}, "", false, 0},
		{"by MAC", Candidates{ByMAC: []Machine{a}}, Hello{MACs: []string{"52:54:00:00:00:01"}}, "aaa", false, 0},
		{"secondary NIC", Candidates{ByMAC: []Machine{a}}, Hello{MACs: []string{"52:54:00:00:00:02", "52:54:00:00:00:01"}}, "aaa", false, 1},
		{"same BMC agrees", Candidates{ByMAC: []Machine{a}, ByBMC: []Machine{a}}, Hello{MACs: []string{"52:54:00:00:00:01"}, BMC: bmc("192.0.2.21")}, "aaa", false, 0},
		{"BMC contradicts MACs", Candidates{ByMAC: []Machine{a}}, Hello{MACs: []string{"52:54:00:00:00:01"}, BMC: bmc("192.0.2.99")}, "held", false, 0},
		{"two machines", Candidates{ByMAC: []Machine{a}, ByBMC: []Machine{b}}, Hello{MACs: []string{"52:54:00:00:00:01"}, BMC: bmc("192.0.2.22")}, "held", false, 0},
		{"BMC-only add", Candidates{ByBMC: []Machine{b}}, Hello{MACs: []string{"52:54:00:00:00:05"}, BMC: bmc("192.0.2.22")}, "bbb", true, 1},
		{"UUID but other MACs", Candidates{ByUUID: []Machine{c}}, Hello{MACs: []string{"52:54:00:00:00:05"}, UUID: "6f2c1f1e-0000-4000-8000-000000000001"}, "held", false, 0},
		{"placeholder UUID ignored", Candidates{ByUUID: []Machine{c}}, Hello{MACs: []string{"52:54:00:00:00:05"}, UUID: "03000200-0400-0500-0006-000700080009"}, "", false, 0},
	}
	for _, tc := range tests {
		id := Identify(tc.c, tc.h)
		got := ""
		switch {
		case id.Held != "":
			got = "held"
		case id.Machine != nil:
			got = id.Machine.SystemID
		}
		if got != tc.want || id.AwaitedBoot != tc.awaited || len(id.NewMACs) != tc.newMACs {
			t.Errorf("%s: got %q awaited=%v new=%v held=%q", tc.name, got, id.AwaitedBoot, id.NewMACs, id.Held)
		}
	}
}

func TestSignalAndInventory(t *testing.T) {
	for s, want := range map[string]Action{"OK": Succeed, "failed": Fail, "WORKING": Heartbeat, "COMMISSIONING": Heartbeat} {
		if a, err := SignalAction(s); err != nil || a != want {
			t.Errorf("%s: %s %v", s, a, err)
		}
	}
	if _, err := SignalAction("BOGUS"); err == nil {
		t.Error("unknown status accepted")
	}
	m := Machine{Interfaces: []Interface{{Name: "eth0", MAC: "52:54:00:00:00:01", Boot: true}}}
	ApplyInventory(&m, Inventory{
		CPU: CPU{Threads: 4}, MemoryMiB: 2048,
		Disks:  []Disk{{Name: "vda", Size: 2e9}, {Name: "vdb", Size: 1e9}},
		NICs:   []NIC{{Name: "ens3", MAC: "52:54:00:00:00:01"}, {Name: "ens4", MAC: "52:54:00:00:00:02"}},
		SMBIOS: SMBIOS{UUID: "ABCDEF00-0000-4000-8000-000000000001"},
	})
	if m.CPUCount != 4 || m.Memory != 2048 || m.Storage != 3000 || m.HardwareUUID != "abcdef00-0000-4000-8000-000000000001" ||
		len(m.Interfaces) != 2 || m.Interfaces[0].Name != "ens3" || !m.Interfaces[0].Boot || m.Inventory == nil {
		t.Fatalf("after inventory: %+v", m)
	}
}

func TestLearnMACs(t *testing.T) {
	m := Machine{}
	if got := LearnMACs(&m, []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, "52:54:00:00:00:02"); len(got) != 2 || !m.Interfaces[1].Boot || m.Interfaces[0].Boot {
		t.Fatalf("first MACs: %v %+v", got, m.Interfaces)
	}
	// A machine that had interfaces keeps its boot NIC.
	if got := LearnMACs(&m, []string{"52:54:00:00:00:02", "52:54:00:00:00:03"}, "52:54:00:00:00:03"); len(got) != 1 || m.Interfaces[2].Boot || m.Interfaces[2].Name != "eth2" {
		t.Fatalf("second NIC: %v %+v", got, m.Interfaces)
	}
}

// TestGreetDeployedLoop: a deployed machine whose boots keep reaching the
// environment instead of its disk is told to reboot to the disk, counted,
// and at the limit told to power off with the reason; uncorroborated hellos
// count nothing, and a status change starts the count again.
func TestGreetDeployedLoop(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mac := "52:54:00:00:00:01"
	m := Machine{SystemID: "abc", Hostname: "n1", Status: Deployed, Owner: "u", Interfaces: []Interface{{MAC: mac}}}
	seen := Hello{Booted: BootEnlist, MACs: []string{mac}, Witness: seenAt(now, mac), Now: now}
	anon := Hello{Booted: BootEnlist, MACs: []string{mac}, Now: now}
	steps := []struct {
		h     Hello
		want  HelloAnswer
		count int
		event string
	}{
		{seen, AnswerReboot, 1, "Wrong boot"},
		{anon, AnswerReboot, 1, "Wrong boot"},
		{seen, AnswerReboot, 2, "Wrong boot"},
		{seen, AnswerPowerOff, MaxWrongBoots, "Boot loop"},
		{seen, AnswerPowerOff, MaxWrongBoots, "Boot loop"}, // stays stopped
		{anon, AnswerReboot, MaxWrongBoots, "Wrong boot"},
	}
	for i, st := range steps {
		o := Greet(m, st.h, false, DefaultConfig())
		m = o.Machine
		if o.Answer != st.want || m.WrongBoots != st.count || o.Power != PowerNone || m.Status != Deployed ||
			len(o.Events) != 1 || o.Events[0].Type != st.event {
			t.Fatalf("boot %d: answer %s count %d power %q status %s events %v", i+1, o.Answer, m.WrongBoots, o.Power, m.Status, o.Events)
		}
	}
	if !strings.Contains(m.StatusMessage, "Boot loop: 3 boots in a row") {
		t.Fatalf("status message %q", m.StatusMessage)
	}
	out, err := Step(m, Input{Action: Release, Actor: Actor{Name: "u"}, Now: now}, DefaultConfig())
	if err != nil || out.Machine.WrongBoots != 0 {
		t.Fatalf("release: %v, count %d", err, out.Machine.WrongBoots)
	}
}
