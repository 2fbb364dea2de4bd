package machine

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCorroboration(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const mac, uuid = "52:54:00:00:00:01", "6f2c1f1e-0000-4000-8000-0000000000e1"
	on := PowerAsk{Action: PowerUp, Status: Commissioning, At: now.Add(-3 * time.Minute)}
	good := Witness{Seen: true, SeenMAC: mac, SeenAt: now.Add(-time.Minute)}
	with := func(f func(*Witness)) Witness { w := good; f(&w); return w }
	tests := []struct {
		name    string
		w       Witness
		uuid    string
		ask     PowerAsk
		sighted bool   // Sighted
		awaited string // AwaitedBootOK: "" ok, else a word of why not
	}{
		{"corroborated", good, uuid, on, true, ""},
		{"no sighting", Witness{}, uuid, on, false, "no rack saw"},
		{"sighting refused", Witness{Unseen: "its sighting is not for a boot served to 192.0.2.9"}, uuid, on, false, "192.0.2.9"},
		{"spent", with(func(w *Witness) { w.Spent = true }), uuid, on, false, "answered already"},
		{"another MAC", with(func(w *Witness) { w.SeenMAC = "52:54:00:00:00:02" }), uuid, on, false, "does not name"},
		{"stale", with(func(w *Witness) { w.SeenAt = now.Add(-CorroborationWindow - time.Second) }), uuid, on, false, "ago"},
		{"future", with(func(w *Witness) { w.SeenAt = now.Add(2 * time.Minute) }), uuid, on, false, "future"},
		{"never powered on", good, uuid, PowerAsk{}, true, "not powered"},
		{"powered off last", good, uuid, PowerAsk{Action: PowerDown, At: on.At}, true, "not powered"},
		{"cycled", good, uuid, PowerAsk{Action: PowerRestart, At: on.At}, true, ""},
		{"power-on long ago", with(func(w *Witness) { w.SeenAt = now }), uuid, PowerAsk{Action: PowerUp, At: now.Add(-CorroborationWindow - time.Minute)}, true, "more than"},
		{"seen before power-on", with(func(w *Witness) { w.SeenAt = on.At.Add(-5 * time.Second) }), uuid, on, true, "before Anvil powered"},
		{"GUID agrees", with(func(w *Witness) { w.GUIDs = []string{uuid} }), uuid, on, true, ""},
		{"GUID agrees, upper case", with(func(w *Witness) { w.GUIDs = []string{strings.ToUpper(uuid)} }), uuid, on, true, ""},
		{"GUID disagrees", with(func(w *Witness) { w.GUIDs = []string{"6f2c1f1e-0000-4000-8000-0000000000e2"} }), uuid, on, true, "is not the system GUID"},
		{"GUID but no UUID", with(func(w *Witness) { w.GUIDs = []string{uuid} }), "", on, true, "no usable SMBIOS UUID"},
		{"GUID but placeholder UUID", with(func(w *Witness) { w.GUIDs = []string{uuid} }), "03000200-0400-0500-0006-000700080009", on, true, "no usable"},
	}
	for _, tc := range tests {
		h := Hello{MACs: []string{"52:54:00:00:00:09", mac}, UUID: tc.uuid, Witness: tc.w, Now: now}
		known := Machine{SystemID: "abc", Status: Commissioning, Interfaces: []Interface{{MAC: mac}}}
		if ok, why := Sighted(known, h); ok != tc.sighted || (!ok && why == "") {
			t.Errorf("%s: Sighted = %v %q", tc.name, ok, why)
		}
		m := Machine{SystemID: "abc", Status: Commissioning, Watch: PowerWatch{LastAsk: tc.ask}}
		ok, why := AwaitedBootOK(m, h)
		if ok != (tc.awaited == "") || (!ok && !strings.Contains(why, tc.awaited)) {
			t.Errorf("%s: AwaitedBootOK = %v %q, want %q", tc.name, ok, why, tc.awaited)
		}
	}
}

func TestGUIDAsUUID(t *testing.T) {
	const want = "6f2c1f1e-0000-4000-8000-0000000000e1"
	raw, _ := hex.DecodeString(strings.ReplaceAll(want, "-", ""))
	ipmi := slices.Clone(raw) // IPMI v2.0: least significant byte first
	slices.Reverse(ipmi)
	smbios := append([]byte{raw[3], raw[2], raw[1], raw[0], raw[5], raw[4], raw[7], raw[6]}, raw[8:]...)
	for name, b := range map[string][]byte{"ipmi": ipmi, "smbios": smbios, "rfc4122": raw} {
		if got := GUIDAsUUID(b); !slices.Contains(got, want) {
			t.Errorf("%s order %x: readings %v lack %s", name, b, got, want)
		}
	}
	if got := GUIDAsUUID(ipmi); got[0] != want {
		t.Errorf("the specified (IPMI) reading is not first: %v", got)
	}
	// What ipmi_sim answers for lan.conf's guid 00112233445566778899aabbccddeeff.
	b, _ := hex.DecodeString("00112233445566778899aabbccddeeff")
	if got := GUIDAsUUID(b); got[0] != "ffeeddcc-bbaa-9988-7766-554433221100" || len(got) != 3 {
		t.Errorf("readings %v", got)
	}
	if GUIDAsUUID([]byte{1, 2, 3}) != nil {
		t.Error("a short GUID has readings")
	}
}
