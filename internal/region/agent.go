package region

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/settings"
	"github.com/anvilmetal/anvil/internal/store"
)

// The ephemeral environment's calls: the known-machine check, enlistment
// and signals. The decisions are package machine's (Identify, Greet, Step);
// this file finds the candidates, stores the outcome and does the power
// work.

// ErrTokenExpired is a machine token used after its machine left the
// status it was issued for.
var ErrTokenExpired = errors.New("the machine's token is no longer valid")

// maxMACs bounds the MACs an environment names (machine.CheckInventory
// bounds the rest of what it reports).
const maxMACs = machine.MaxInventoryNICs

// keepEnrol keeps the enrolment secret in step with the status: a machine
// in a phase that netboots Anvil's environment has one for its boot; any
// other has none, and no wrong boots counted, except a deployed machine:
// its count is of boots that reached Anvil's environment instead of its
// disk, which the loop guard stops (machine.Greet).
func keepEnrol(m *machine.Machine) {
	p := machine.PurposeOf(m.Status)
	if m.InMemory() {
		p = machine.BootInstall // each boot deploys it to memory again
	}
	netboot := m.Status != machine.New && (p == machine.BootEphemeral || p == machine.BootInstall)
	switch {
	case netboot && m.EnrolSecret == "":
		m.EnrolSecret = newSecret()
	case !netboot:
		m.EnrolSecret = ""
		if p != machine.BootLocal {
			m.WrongBoots = 0
		}
	}
}

func newSecret() string {
	b := make([]byte, 18)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// bmcIdentity is the canonical "type|host|port|system" for the machine's
// power settings (machine.BMCIdentity), "" for power types without a BMC
// of their own.
func (s *Service) bmcIdentity(m machine.Machine) (string, error) {
	b, err := s.Power.BMCOf(m)
	if err != nil {
		return "", &ValidationError{Field: "power_parameters", Err: err}
	}
	return machine.BMCIdentity(b.Type, b.Address, b.System, s.resolveHost), nil
}

// resolveHost turns a BMC's host name into the address it names, so that
// a name and its address are one BMC: IPv4 first (BMC networks are), the
// lowest of several. It waits at most two seconds; a name that does not
// resolve stays a name.
func (s *Service) resolveHost(host string) string {
	lookup := s.LookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	slices.SortFunc(addrs, func(a, b string) int {
		pa, ea := netip.ParseAddr(a)
		pb, eb := netip.ParseAddr(b)
		if ea != nil || eb != nil {
			return strings.Compare(a, b)
		}
		if pa.Unmap().Is4() != pb.Unmap().Is4() {
			if pa.Unmap().Is4() {
				return -1
			}
			return 1
		}
		return pa.Compare(pb)
	})
	return addrs[0]
}

// checkIdentity normalises what an environment says about itself and
// refuses what cannot be right.
func checkIdentity(id *agentapi.Identity) error {
	if len(id.MACs) == 0 || len(id.MACs) > maxMACs {
		return &ValidationError{Field: "macs", Err: fmt.Errorf("between 1 and %d MAC addresses are required", maxMACs)}
	}
	var macs []string
	for _, raw := range id.MACs {
		mac, err := machine.NormaliseMachineMAC(raw)
		if err != nil {
			return &ValidationError{Field: "macs", Err: err}
		}
		if !slices.Contains(macs, mac) {
			macs = append(macs, mac)
		}
	}
	id.MACs = macs
	if id.BootMAC != "" {
		mac, err := machine.NormaliseMAC(id.BootMAC)
		if err != nil {
			return &ValidationError{Field: "boot_mac", Err: err}
		}
		id.BootMAC = mac
	}
	id.UUID = strings.ToLower(strings.TrimSpace(id.UUID))
	if len(id.UUID) > 64 || len(id.Arch) > 64 {
		return &ValidationError{Field: "uuid", Err: errors.New("too long")}
	}
	if b := id.BMC; b != nil {
		if b.Type != "ipmi" && b.Type != "redfish" {
			return &ValidationError{Field: "bmc", Err: fmt.Errorf("unknown BMC type %q", b.Type)}
		}
		if err := (machine.Range{Min: 0, Max: machine.MaxPort}).Check("bmc.port", int64(b.Port)); err != nil {
			return &ValidationError{Field: "bmc", Err: err}
		}
		if b.Address != "" {
			a, err := netip.ParseAddr(b.Address)
			if err != nil || a.IsUnspecified() {
				// An unconfigured BMC reads 0.0.0.0: not an identity.
				b.Address = ""
			} else {
				b.Address = a.String()
			}
		}
		if b.MAC != "" {
			if mac, err := machine.NormaliseMAC(b.MAC); err == nil {
				b.MAC = mac
			} else {
				b.MAC = ""
			}
		}
	}
	return nil
}

// candidates finds the machines an identity could be.
func (s *Service) candidates(ctx context.Context, id agentapi.Identity) (machine.Candidates, error) {
	var c machine.Candidates
	var err error
	if c.ByMAC, err = s.Store.ListMachines(ctx, store.MachineFilter{MACs: id.MACs}); err != nil {
		return c, err
	}
	if machine.UsableUUID(id.UUID) {
		if c.ByUUID, err = s.Store.ListMachines(ctx, store.MachineFilter{UUIDs: []string{id.UUID}}); err != nil {
			return c, err
		}
	}
	if id.BMC != nil && id.BMC.Address != "" {
		ms, err := s.Store.ListMachines(ctx, store.MachineFilter{BMCHost: id.BMC.Address})
		if err != nil {
			return c, err
		}
		for _, m := range ms {
			if machine.BMCHost(m.BMCIdentity) == id.BMC.Address {
				c.ByBMC = append(c.ByBMC, m)
			}
		}
	}
	return c, nil
}

func helloOf(id agentapi.Identity, purpose string, s *Service) machine.Hello {
	return machine.Hello{Booted: machine.BootPurpose(purpose), MACs: id.MACs, UUID: id.UUID, BMC: id.BMC, Now: s.Now()}
}

// Hello answers "do you know me?".
func (s *Service) Hello(ctx context.Context, req agentapi.HelloRequest, source string) (agentapi.HelloResponse, error) {
	if err := checkIdentity(&req.Identity); err != nil {
		return agentapi.HelloResponse{}, err
	}
	switch machine.BootPurpose(req.Purpose) {
	case machine.BootEnlist, machine.BootEphemeral, machine.BootInstall:
	default:
		return agentapi.HelloResponse{}, &ValidationError{Field: "purpose", Err: fmt.Errorf("unknown purpose %q", req.Purpose)}
	}
	c, err := s.candidates(ctx, req.Identity)
	if err != nil {
		return agentapi.HelloResponse{}, fmt.Errorf("known-machine check: %w", err)
	}
	h := helloOf(req.Identity, req.Purpose, s)
	id := machine.Identify(c, h)
	switch {
	case id.Held != "":
		return s.hold(ctx, id, req.Identity, source), nil
	case id.Machine == nil:
		r := agentapi.HelloResponse{Action: agentapi.ActionEnlist, Message: "unknown machine: enlist"}
		if b := req.BMC; b != nil && b.Type == "ipmi" && b.Address != "" {
			r.BMCUser = s.str(ctx, settings.AutoIPMIUser)
		}
		return r, nil
	}
	return s.greet(ctx, id.Machine.SystemID, req, source)
}

// hold records why an environment was not matched, on every machine
// concerned, and tells it to power off.
func (s *Service) hold(ctx context.Context, id machine.Identification, ident agentapi.Identity, source string) agentapi.HelloResponse {
	text := fmt.Sprintf("A machine booted from %s with MACs %s was held, not merged: %s", source, strings.Join(ident.MACs, ", "), id.Held)
	for _, sid := range id.HeldIDs {
		if !s.anon.first(sid, source, "Enlistment held", id.Held) {
			continue
		}
		if m, err := s.Store.GetMachine(ctx, sid); err == nil {
			s.record(ctx, m, machine.LevelWarning, "Enlistment held", text)
		}
	}
	s.Log.Warn("environment held", "source", source, "reason", id.Held)
	// The anonymous answer says why in general terms only: which
	// machines it resembles is for the operator, on their timelines.
	return agentapi.HelloResponse{Action: agentapi.ActionPowerOff, Message: "held, not enlisted: " + id.Why}
}

// greet applies the known-machine decision to machine systemID.
func (s *Service) greet(ctx context.Context, systemID string, req agentapi.HelloRequest, source string) (agentapi.HelloResponse, error) {
	w, sighting := s.witness(ctx, req.Seen, source)
	if err := s.spend(ctx, &w, sighting, systemID); err != nil {
		return agentapi.HelloResponse{}, fmt.Errorf("known-machine check: %w", err)
	}
	hello := func() machine.Hello {
		h := helloOf(req.Identity, req.Purpose, s)
		h.Witness = w
		return h
	}
	if len(w.GUIDs) == 0 {
		if m, err := s.Store.GetMachine(ctx, systemID); err == nil {
			w.GUIDs = s.systemGUID(ctx, m, hello())
		}
	}
	var out machine.HelloOutcome
	// A reboot the answer implies is queued in the transaction that
	// records the wrong boot, so a crash cannot count one without the other.
	m, reboot, err := s.updatePower(ctx, systemID, nil, func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
		// Identify again inside the transaction: the machine may have
		// changed since the candidates were read.
		id := machine.Identify(machine.Candidates{ByMAC: []machine.Machine{*m}}, helloOf(req.Identity, req.Purpose, s))
		awaited := len(m.Interfaces) == 0
		if !awaited && id.Machine == nil && !(req.BMC != nil && machine.BMCHost(m.BMCIdentity) == req.BMC.Address) {
			return nil, powerAsk{}, fmt.Errorf("machine %s changed during the known-machine check: %w", systemID, store.ErrConflict)
		}
		h := hello()
		// The secret is bound to the address the rack served the boot
		// to: presented from any other address it does not count.
		want := agentapi.EnrolFor(m.EnrolSecret, source)
		h.EnrolOK = req.Enrol != "" && want != "" && subtle.ConstantTimeCompare([]byte(req.Enrol), []byte(want)) == 1
		out = machine.Greet(*m, h, awaited, s.Config)
		*m = out.Machine
		var evs []machine.Event
		// What an uncorroborated hello reports is its word only: it
		// never becomes the machine's.
		if out.Trusted {
			if m.HardwareUUID == "" && machine.UsableUUID(req.UUID) {
				m.HardwareUUID = req.UUID
			}
			if learned := machine.LearnMACs(m, req.MACs, req.BootMAC); len(learned) > 0 {
				evs = append(evs, machine.Event{Type: "Interfaces learned", Level: machine.LevelInfo, Created: s.Now(),
					Description: fmt.Sprintf("Booted from %s; learned interface(s) %s, so its next boot is its own", source, strings.Join(learned, ", "))})
			}
		}
		if out.Answer == machine.AnswerProceed {
			// One use: the secret the boot carried is spent.
			m.EnrolSecret = newSecret()
		}
		var ask powerAsk
		if out.Answer == machine.AnswerReboot && out.Power == machine.PowerRestart && s.canReboot(*m) {
			ask = powerAsk{Action: machine.PowerRestart, Reason: "wrong boot: reboot into " + string(machine.PurposeOf(m.Status))}
		}
		if !out.Trusted {
			out.Events = s.anon.keep(out.Events, systemID, source)
		}
		return append(evs, out.Events...), ask, nil
	})
	if err != nil {
		return agentapi.HelloResponse{}, err
	}
	if out.Held != "" {
		s.holdBoot(ctx, systemID, req, source, out.Held)
		s.Hub.Notify()
		return agentapi.HelloResponse{Action: agentapi.ActionPowerOff, Message: "held for an administrator to accept: this boot is not corroborated"}, nil
	}
	s.Hub.Notify()
	// Anonymous callers learn only the action and why; the machine's
	// name and ID go with the token.
	resp := agentapi.HelloResponse{Action: string(out.Answer), Message: eventText(out.Events)}
	switch out.Answer {
	case machine.AnswerProceed:
		resp.SystemID, resp.Hostname = m.SystemID, m.Hostname
		tok, err := s.Store.CreateMachineToken(ctx, m.SystemID, m.Status)
		if err != nil {
			return agentapi.HelloResponse{}, fmt.Errorf("issue token: %w", err)
		}
		resp.Phase, resp.Token, resp.Erase = out.Phase, tok.APIKey(), string(m.EraseMode)
	case machine.AnswerReboot:
		resp.WaitForBMC = reboot != nil
	case machine.AnswerPowerOff:
		if m.Status.Failed() {
			s.Store.DeleteMachineTokens(ctx, m.SystemID)
		}
	}
	return resp, nil
}

// canReboot says whether Anvil can reboot the machine through its BMC.
func (s *Service) canReboot(m machine.Machine) bool {
	b, err := s.Power.BMCOf(m)
	return err == nil && b.Type != "manual"
}

func eventText(evs []machine.Event) string {
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].Description
}

// Enlist creates a NEW machine for an environment nobody knows, or finds
// it again: enlisting twice never makes two machines.
func (s *Service) Enlist(ctx context.Context, req agentapi.EnlistRequest, source string) (agentapi.HelloResponse, error) {
	if err := checkIdentity(&req.Identity); err != nil {
		return agentapi.HelloResponse{}, err
	}
	if inv := req.Inventory; inv != nil {
		if err := machine.CheckInventory(*inv); err != nil {
			return agentapi.HelloResponse{}, &ValidationError{Field: "inventory", Err: err}
		}
	}
	if c := req.BMCCredentials; c != nil && (len(c.User) > 64 || len(c.Password) > 64) {
		return agentapi.HelloResponse{}, &ValidationError{Field: "bmc_credentials", Err: errors.New("user and password have at most 64 bytes")}
	}
	hello := agentapi.HelloRequest{Identity: req.Identity, Purpose: string(machine.BootEnlist)}
	for attempt := 0; ; attempt++ {
		c, err := s.candidates(ctx, req.Identity)
		if err != nil {
			return agentapi.HelloResponse{}, fmt.Errorf("enlist: %w", err)
		}
		id := machine.Identify(c, helloOf(req.Identity, hello.Purpose, s))
		switch {
		case id.Held != "":
			return s.hold(ctx, id, req.Identity, source), nil
		case id.Machine != nil:
			return s.greet(ctx, id.Machine.SystemID, hello, source)
		}
		m := s.enlisted(ctx, req, source, s.str(ctx, settings.AutoIPMIUser))
		ev := machine.Event{Type: "Enlisted", Level: machine.LevelInfo, Created: s.Now(), Description: m.StatusMessage}
		err = s.Store.CreateMachine(ctx, &m, []machine.Event{ev})
		var ce *store.ConflictError
		if errors.As(err, &ce) && attempt < 3 {
			// Another enlistment of the same machine won the race (the
			// next round finds it), or the petname was taken.
			continue
		}
		if err != nil {
			return agentapi.HelloResponse{}, fmt.Errorf("enlist: %w", err)
		}
		s.Hub.Notify()
		if !s.boolean(ctx, settings.EnlistCommissioning) {
			return agentapi.HelloResponse{Action: agentapi.ActionPowerOff, Message: "enlisted as " + m.Hostname}, nil
		}
		// Straight on to commissioning in the environment already running.
		m, _, err = s.act(ctx, machine.SystemActor, m.SystemID, machine.Input{Action: machine.Commission, Comment: "enlisted"}, actOpts{noPower: true})
		if err != nil {
			return agentapi.HelloResponse{}, fmt.Errorf("enlist: start commissioning: %w", err)
		}
		s.defaultScripts(ctx, m)
		tok, err := s.Store.CreateMachineToken(ctx, m.SystemID, m.Status)
		if err != nil {
			return agentapi.HelloResponse{}, fmt.Errorf("enlist: issue token: %w", err)
		}
		return agentapi.HelloResponse{Action: agentapi.ActionProceed, SystemID: m.SystemID, Hostname: m.Hostname,
			Phase: machine.PhaseOf(m.Status), Token: tok.APIKey(), Message: "enlisted as " + m.Hostname + "; commissioning"}, nil
	}
}

// enlistedPower takes the BMC user the environment created, when Anvil
// asked for one: the machine gets ipmi power with those credentials. When
// it cannot, why says so (empty when nothing was offered).
func (s *Service) enlistedPower(ctx context.Context, m *machine.Machine, req agentapi.EnlistRequest, user string) (why string, ok bool) {
	c, b := req.BMCCredentials, req.BMC
	if c == nil {
		return "", false
	}
	if user == "" || c.User != user || b == nil || b.Type != "ipmi" || b.Address == "" {
		return "; credentials Anvil did not ask for were ignored", false
	}
	addr := b.Address
	if b.Port != 0 && b.Port != 623 {
		addr = net.JoinHostPort(addr, strconv.Itoa(b.Port))
	}
	params := map[string]string{"power_address": addr, "power_user": c.User, "power_pass": c.Password}
	if err := s.ValidatePower("ipmi", params); err != nil {
		return "; the credentials sent are not usable: " + err.Error(), false
	}
	if why := s.enlistedBMCRefused(ctx, b.Address, params); why != "" {
		return why, false
	}
	m.PowerType, m.PowerParams = "ipmi", params
	id, err := s.bmcIdentity(*m)
	if err != nil {
		m.PowerType, m.PowerParams = "manual", nil
		return "; the credentials sent are not usable: " + err.Error(), false
	}
	m.BMCIdentity = id
	return "", true
}

// enlistedBMCRefused says why a BMC an enlisting machine reports may not
// be its power address ("" when it may). The report is anonymous: only
// an address on a network a rack may act on (granted by an
// administrator, or a subnet the rack serves) is used, so that an
// enlistment cannot aim the racks' IPMI traffic at any host and port.
func (s *Service) enlistedBMCRefused(ctx context.Context, address string, params map[string]string) string {
	if _, err := netip.ParseAddr(address); err != nil {
		return "; its BMC address is not an IP address"
	}
	b, err := s.Power.BMCOf(machine.Machine{PowerType: "ipmi", PowerParams: params})
	if err == nil && !s.grantedBMC(ctx, b.Key()) {
		err = s.Power.Reachable(ctx, b.Key())
	}
	if err != nil {
		s.Log.Warn("enlisted BMC not used as a power address", "bmc", address, "err", err)
		return "; it is not used as its power address: " + err.Error()
	}
	return ""
}

// grantedBMC says whether the BMC lies in a network an enrolled rack was
// granted or serves (what a live rack may act on is Power.Reachable's).
func (s *Service) grantedBMC(ctx context.Context, bmcKey string) bool {
	racks, err := s.Store.ListRacks(ctx)
	if err != nil {
		s.Log.Warn("read racks", "err", err)
		return false
	}
	for _, k := range racks {
		if !k.Enrolled {
			continue
		}
		nets, _ := powerroute.ParseNetworks(k.BMCNetworks)
		if powerroute.Reaches(append(nets, k.Served...), bmcKey) && powerroute.Host(bmcKey) != "" {
			return true
		}
	}
	return false
}

// enlisted builds the NEW machine an enlistment creates.
func (s *Service) enlisted(ctx context.Context, req agentapi.EnlistRequest, source, bmcUser string) machine.Machine {
	now := s.Now()
	m := machine.Machine{
		Hostname: machine.Petname(), Architecture: req.Arch, Status: machine.New, PreviousStatus: machine.New,
		PowerType: "manual", PowerState: machine.PowerUnknown, Created: now, Updated: now,
	}
	if m.Architecture == "" {
		m.Architecture = "amd64/generic"
	}
	// The inventory, applied below, gives the interfaces their names.
	machine.LearnMACs(&m, req.MACs, req.BootMAC)
	if machine.UsableUUID(req.UUID) {
		m.HardwareUUID = req.UUID
	}
	if req.Inventory != nil {
		inv := req.Inventory.Clone()
		if inv.BMC == nil {
			inv.BMC = req.BMC
		}
		machine.ApplyInventory(&m, inv)
	}
	text := fmt.Sprintf("Enlisted from %s with %d interface(s)", source, len(m.Interfaces))
	if why, ok := s.enlistedPower(ctx, &m, req, bmcUser); ok {
		text += fmt.Sprintf("; its ipmi BMC at %s has the user %s, created in-band: Anvil manages its power", req.BMC.Address, req.BMCCredentials.User)
	} else if b := req.BMC; b != nil && b.Address != "" {
		text += fmt.Sprintf("; its %s BMC is at %s (set its credentials to manage power%s)", b.Type, b.Address, why)
	}
	m.StatusMessage = text
	return m
}

// MachineForToken checks a machine token: it must be the machine's
// current one and the machine still in the status it was issued for.
func (s *Service) MachineForToken(ctx context.Context, consumerKey, tokenKey, secret string) (machine.Machine, error) {
	id, st, err := s.Store.LookupMachineToken(ctx, consumerKey, tokenKey, secret)
	if err != nil {
		return machine.Machine{}, err
	}
	m, err := s.Store.GetMachine(ctx, id)
	if err != nil {
		return machine.Machine{}, err
	}
	if m.Status != st {
		return machine.Machine{}, fmt.Errorf("%w: machine %s is %s, the token was for %s", ErrTokenExpired, id, m.Status, st)
	}
	return m, nil
}

// Signal takes the environment's op=signal: status, an error text and
// result files. The structured inventory, when sent, is checked before
// anything is stored; the results, the inventory and the step are then
// written in one transaction.
func (s *Service) Signal(ctx context.Context, systemID string, issued machine.Status, status, errText string, files map[string][]byte) (machine.Machine, error) {
	action, err := machine.SignalAction(status)
	if err != nil {
		return machine.Machine{}, &ValidationError{Field: "status", Err: err}
	}
	if err := machine.CheckResultFiles(files); err != nil {
		return machine.Machine{}, &ValidationError{Field: "files", Err: err}
	}
	var inv *machine.Inventory
	if data, ok := files[agentapi.InventoryFile]; ok {
		decoded, err := machine.DecodeInventory(data)
		if err != nil {
			return machine.Machine{}, &ValidationError{Field: agentapi.InventoryFile, Err: err}
		}
		inv = &decoded
	}
	if len(errText) > 4096 {
		errText = errText[:4096]
	}
	layout := ""
	if inv != nil {
		// Read before the transaction: the store may have one connection.
		layout = s.storageLayoutSetting(ctx)
	}
	before := func(m *machine.Machine) ([]machine.Event, error) {
		if m.Status != issued {
			return nil, fmt.Errorf("%w: machine %s is %s", ErrTokenExpired, systemID, m.Status)
		}
		if inv == nil {
			return nil, nil
		}
		machine.ApplyInventory(m, *inv)
		evs := []machine.Event{{Type: "Inventory", Level: machine.LevelInfo, Created: s.Now(), Description: inventorySummary(*inv)}}
		return append(evs, s.applyCommissionedStorage(m, *inv, layout)...), nil
	}
	m, _, err := s.act(ctx, machine.SystemActor, systemID, machine.Input{Action: action, Comment: errText}, actOpts{before: before, results: files})
	if err != nil {
		return machine.Machine{}, err
	}
	if m.Status != issued {
		s.logErr(s.Store.DeleteMachineTokens(ctx, systemID), "revoke machine tokens", systemID)
	}
	if inv != nil && issued == machine.Commissioning {
		s.placeInterfaces(ctx, m)
	}
	return m, nil
}

func inventorySummary(inv machine.Inventory) string {
	var disks int64
	for _, d := range inv.Disks {
		disks += d.Size
	}
	text := fmt.Sprintf("Inventory: %d CPU thread(s) (%s), %d MiB memory, %d disk(s) of %.1f GB, %d NIC(s), %s firmware",
		inv.CPU.Threads, inv.CPU.Model, inv.MemoryMiB, len(inv.Disks), float64(disks)/1e9, len(inv.NICs), inv.Firmware)
	if inv.BMC != nil && inv.BMC.Address != "" {
		text += fmt.Sprintf(", %s BMC at %s", inv.BMC.Type, inv.BMC.Address)
	}
	return text
}

// Task is what the current phase of m is to do. imagesURL is where the
// machine fetches images from (…/images/), as it reaches the region.
func (s *Service) Task(ctx context.Context, m machine.Machine, imagesURL string) (agentapi.Task, error) {
	t := agentapi.Task{Phase: machine.PhaseFor(&m), InstanceID: m.SystemID}
	status := m.Status
	if m.InMemory() {
		status = machine.Deploying // the same deployment, once more
	}
	switch status {
	case machine.Deploying:
		t.Ephemeral = m.EphemeralDeploy
		f, err := s.imageFor(ctx, m)
		if err != nil {
			return t, err
		}
		t.Image = &agentapi.Image{URL: imagesURL + f.SHA256, SHA256: f.SHA256, Size: f.Size, FileType: f.Filetype}
		t.Storage = taskStorage(m, f.Filetype)
		t.RebootByBMC = s.canReboot(m)
		t.Hostname, t.UserData = m.Hostname, m.UserData
		if t.NetworkConfig, err = s.networkConfig(ctx, m); err != nil {
			return t, err
		}
		if t.SSHKeys, err = s.ownerKeys(ctx, m); err != nil {
			return t, err
		}
	case machine.EnteringRescueMode, machine.RescueMode:
		// The rescue environment's SSH server lets these keys in, and
		// no others.
		var err error
		if t.SSHKeys, err = s.ownerKeys(ctx, m); err != nil {
			return t, err
		}
		if m.RescueFrom != "" {
			t.RescueFrom = []string{m.RescueFrom}
		}
	case machine.DiskErasing:
		t.Erase = string(m.EraseMode)
	case machine.Commissioning, machine.Testing:
		var err error
		if t.Scripts, err = s.taskScripts(ctx, m); err != nil {
			return t, err
		}
	}
	return t, nil
}

// ownerKeys are the SSH public keys of the machine's owner.
func (s *Service) ownerKeys(ctx context.Context, m machine.Machine) ([]string, error) {
	if m.Owner == "" {
		return nil, nil
	}
	ks, err := s.Store.ListSSHKeys(ctx, m.Owner)
	if err != nil {
		return nil, fmt.Errorf("ssh keys of %s: %w", m.Owner, err)
	}
	var out []string
	for _, k := range ks {
		out = append(out, k.Key)
	}
	return out, nil
}

// ErrNoImage is a deployment whose image is not uploaded.
var ErrNoImage = errors.New("no such image")

// imageFor finds the newest complete file of the boot resource a
// deployment names: osystem "custom" and distro_series NAME is the
// uploaded image NAME; otherwise "osystem/distro_series". The
// architecture must match (amd64 matches amd64/generic).
func (s *Service) imageFor(ctx context.Context, m machine.Machine) (store.BootResourceFile, error) {
	_, f, err := s.findImage(ctx, m)
	return f, err
}
