package machine

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A hello is anonymous: anyone who knows a machine's MAC or its BMC's
// address can say it. What it says may only move the machine (a reboot
// through its BMC, a wrong boot counted, a machine added by its BMC
// alone matched) when the boot itself corroborates it: a rack saw this
// boot, from the hello's address, for one of the hello's MACs.

// CorroborationWindow is how long a rack's sighting of a boot, and
// Anvil's power-on of a BMC, corroborate a hello: a boot from its
// configuration to the environment's hello takes a minute or two, a
// server's power-on self-test several more.
const CorroborationWindow = 15 * time.Minute

// Witness is what corroborates a hello beyond what it says of itself.
type Witness struct {
	// Seen says a rack's signed sighting came with the hello and names
	// a boot the rack served to the hello's own address; SeenMAC is the
	// MAC the rack knew held that address, SeenAt when it served it.
	Seen    bool
	SeenMAC string
	SeenAt  time.Time
	// Unseen says why there is no valid sighting, in words.
	Unseen string
	// Spent says the sighting already answered a hello: one boot the
	// rack saw, at most one reboot.
	Spent bool
	// GUIDs are the readings of the system GUID the machine's BMC gave
	// out of band (GUIDAsUUID); none when it was not asked or could not
	// say.
	GUIDs []string
}

// Sighted says whether a hello matched to machine m is corroborated by a
// boot a rack saw, and if not, why: a valid, unspent, recent sighting
// for one of the hello's MACs. Which of them need not be m's yet (a
// machine booting from a new NIC names it beside its known ones). Someone
// on the provisioning network who can take a lease can still name m's MAC
// beside their own; the rack cannot tell them from m (see the README).
func Sighted(m Machine, h Hello) (bool, string) { return seenBoot(h) }

// seenBoot says whether a rack saw this boot: a valid, unspent, recent
// sighting for one of the hello's MACs.
func seenBoot(h Hello) (bool, string) {
	w := h.Witness
	switch {
	case !w.Seen:
		why := w.Unseen
		if why == "" {
			why = "it carried no sighting"
		}
		return false, "no rack saw this boot: " + why
	case w.Spent:
		return false, "the boot the rack saw was answered already"
	case !slices.Contains(h.MACs, w.SeenMAC):
		return false, fmt.Sprintf("the rack saw %s boot, which the hello does not name", w.SeenMAC)
	case h.Now.Sub(w.SeenAt) > CorroborationWindow:
		return false, fmt.Sprintf("the rack saw it boot at %s, more than %s ago", w.SeenAt.UTC().Format(time.RFC3339), CorroborationWindow)
	case w.SeenAt.Sub(h.Now) > time.Minute:
		return false, "the rack's sighting is dated in the future"
	}
	return true, ""
}

// AwaitedBootOK says whether a hello matched to machine m, added by its
// BMC alone, is m's awaited boot: Anvil powered m's BMC on within the
// window, a rack saw the boot after that, and, where the BMC gave its
// system GUID, the SMBIOS UUID the hello reports is that GUID. why says
// what is missing.
func AwaitedBootOK(m Machine, h Hello) (ok bool, why string) {
	if ok, why := seenBoot(h); !ok {
		return false, why
	}
	ask := m.Watch.LastAsk
	switch {
	case ask.At.IsZero() || ask.State() != PowerOn:
		return false, "Anvil has not powered its BMC on"
	case h.Now.Sub(ask.At) > CorroborationWindow:
		return false, fmt.Sprintf("Anvil last powered its BMC on at %s, more than %s ago", ask.At.UTC().Format(time.RFC3339), CorroborationWindow)
	case h.Witness.SeenAt.Add(time.Second).Before(ask.At):
		// Sightings are dated to the second.
		return false, "the rack saw this boot before Anvil powered its BMC on"
	}
	if gs := h.Witness.GUIDs; len(gs) > 0 {
		if !UsableUUID(h.UUID) {
			return false, fmt.Sprintf("its BMC gives system GUID %s but the boot reported no usable SMBIOS UUID", gs[0])
		}
		if !slices.ContainsFunc(gs, func(g string) bool { return strings.EqualFold(g, h.UUID) }) {
			return false, fmt.Sprintf("its SMBIOS UUID %s is not the system GUID %s its BMC gives", h.UUID, gs[0])
		}
	}
	return true, ""
}

// GUIDAsUUID turns the 16 bytes of an IPMI Get System GUID answer into
// the SMBIOS UUID a booted system reports (what dmidecode and the kernel
// print, and what QEMU's -uuid sets). IPMI v2.0 sends the GUID least
// significant byte first, the whole of it reversed from the printed
// order; some BMCs send SMBIOS's raw order instead (the first three
// fields little-endian), some the printed order as is. All three
// readings are returned, the specified one first, without repeats.
func GUIDAsUUID(b []byte) []string {
	if len(b) != 16 {
		return nil
	}
	rev := make([]byte, 16)
	for i := range b {
		rev[i] = b[15-i]
	}
	smbios := []byte{b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]}
	var out []string
	for _, u := range [][]byte{rev, smbios, b} {
		if s := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
