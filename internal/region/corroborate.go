package region

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
)

// What corroborates an anonymous hello: the rack's signed sighting of the
// boot (checked here, judged by machine.Sighted) and, for a machine added
// by its BMC alone, what its BMC says of the system out of band.

// witness checks the sighting a hello carried: signed by a rack (an
// administrator's API token) for a boot served to source. id names it, to
// spend it once.
func (s *Service) witness(ctx context.Context, seen, source string) (w machine.Witness, id string) {
	if seen == "" {
		return machine.Witness{Unseen: "it carried no sighting (the rack could not tell who holds the address it booted from)"}, ""
	}
	sg, err := agentapi.ParseSighting(seen)
	if err != nil {
		return machine.Witness{Unseen: "its sighting is unreadable"}, ""
	}
	key, ok := s.sightingKey(ctx, sg)
	if !ok {
		return machine.Witness{Unseen: "its sighting is not signed by a rack this region knows"}, ""
	}
	if !sg.Valid(key, source) {
		return machine.Witness{Unseen: "its sighting is not for a boot served to " + source}, ""
	}
	return machine.Witness{Seen: true, SeenMAC: sg.MAC, SeenAt: sg.At}, sg.ID()
}

// sightingKey is what a rack signs sightings with: an enrolled rack's
// secret's hash (all the region keeps of it), or an administrator's
// token secret for a rack that follows the region with a user's key.
func (s *Service) sightingKey(ctx context.Context, sg agentapi.Sighting) (string, bool) {
	tok, user, err := s.Store.LookupToken(ctx, sg.Consumer, sg.Token)
	if err == nil {
		return tok.Secret, user.Admin
	}
	c, err := s.Store.RackCredentialByToken(ctx, sg.Token)
	if err != nil || c.ConsumerKey != sg.Consumer {
		return "", false
	}
	return c.SecretHash, true
}

// spend marks the sighting answered for systemID; a second hello with it
// is not corroborated.
func (s *Service) spend(ctx context.Context, w *machine.Witness, id, systemID string) error {
	if !w.Seen {
		return nil
	}
	fresh, err := s.Store.SpendSighting(ctx, id, systemID)
	if err != nil {
		return err
	}
	w.Spent = !fresh
	return nil
}

// GUIDReader is a power driver that can read the system GUID of the
// machine behind its BMC.
type GUIDReader interface {
	SystemGUID(ctx context.Context, params map[string]string) ([]byte, error)
}

// systemGUID asks m's BMC for its system GUID, for the awaited boot of a
// machine added by its BMC alone, and only once the rest of the boot is
// corroborated (so an anonymous hello cannot make Anvil talk to a BMC).
// It is one read, outside the power queue: it changes nothing on the BMC.
// None when the BMC cannot say.
func (s *Service) systemGUID(ctx context.Context, m machine.Machine, h machine.Hello) []string {
	if len(m.Interfaces) > 0 || s.Power == nil {
		return nil
	}
	if ok, _ := machine.AwaitedBootOK(m, h); !ok {
		return nil
	}
	d, err := s.Power.Drivers().Lookup(m.PowerType)
	r, can := d.(GUIDReader)
	if err != nil || !can {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := r.SystemGUID(ctx, m.PowerParams)
	if err != nil {
		if !errors.Is(err, power.ErrUnsupported) {
			s.Log.Warn("cannot read the system GUID", "system_id", m.SystemID, "err", err)
		}
		return nil
	}
	gs := machine.GUIDAsUUID(b)
	if len(gs) == 0 || !machine.UsableUUID(gs[0]) {
		return nil
	}
	return gs
}

// holdBoot keeps what a held awaited boot said, for op=accept.
func (s *Service) holdBoot(ctx context.Context, systemID string, req agentapi.HelloRequest, source, why string) {
	h := store.HeldBoot{SystemID: systemID, MACs: req.MACs, BootMAC: req.BootMAC, UUID: req.UUID, Source: source, Reason: why, Created: s.Now()}
	s.logErr(s.Store.HoldBoot(ctx, h), "hold boot", systemID)
	s.Log.Warn("boot held for an administrator", "system_id", systemID, "source", source, "reason", why)
}

// ErrNothingHeld is op=accept for a machine with no held boot.
var ErrNothingHeld = errors.New("no held boot to accept")

// AcceptHeld takes the boot last held for a machine added by its BMC
// alone as that machine's, for an administrator: its MACs (and UUID)
// become the machine's, so its next boot is its own, and a machine in a
// netbooting phase is rebooted into it.
func (s *Service) AcceptHeld(ctx context.Context, by, systemID string) (machine.Machine, error) {
	h, err := s.Store.HeldBoot(ctx, systemID)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := s.Store.GetMachine(ctx, systemID); err != nil {
			return machine.Machine{}, err
		}
		return machine.Machine{}, fmt.Errorf("machine %s: %w", systemID, ErrNothingHeld)
	}
	if err != nil {
		return machine.Machine{}, err
	}
	m, err := s.update(ctx, systemID, func(m *machine.Machine) ([]machine.Event, error) {
		if err := machine.CheckUnlocked(machine.Actor{Name: by, Admin: true}, m, "accept"); err != nil {
			return nil, err
		}
		learned := machine.LearnMACs(m, h.MACs, h.BootMAC)
		if m.HardwareUUID == "" && machine.UsableUUID(h.UUID) {
			m.HardwareUUID = h.UUID
		}
		return []machine.Event{{Type: "Enlistment accepted", Level: machine.LevelInfo, Created: s.Now(),
			Description: fmt.Sprintf("%s accepted the boot held from %s (MACs %s; held because %s); learned interface(s) %s, so its next boot is its own",
				by, h.Source, strings.Join(h.MACs, ", "), h.Reason, strings.Join(learned, ", "))}}, nil
	})
	if err != nil {
		return machine.Machine{}, err
	}
	s.logErr(s.Store.DeleteHeldBoot(ctx, systemID), "drop held boot", systemID)
	s.Hub.Notify()
	if p := machine.PurposeOf(m.Status); (p == machine.BootEphemeral || p == machine.BootInstall) && s.canReboot(m) {
		if _, _, err := s.Power.Submit(ctx, m, machine.PowerRestart, by, "accepted: boot again into "+string(p)); err != nil {
			s.record(ctx, m, machine.LevelError, "Power failed", fmt.Sprintf("could not queue the reboot: %v", err))
		}
	}
	return m, nil
}
