package rack

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/boot/bootcfg"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/ratelimit"
)

// BootSource answers boot file requests from the cache: per-machine
// configs rendered for the machine's purpose, the default config (the
// enlistment environment) for everything else, and plain files (loaders,
// kernels, images) from disk. It never waits on the region.
type BootSource struct {
	Cache  *Cache
	Files  boot.Source // loaders, kernels and images
	Report *Reporter   // may be nil
	// HTTPBase is the rack's boot HTTP server as machines reach it
	// ("http://192.0.2.1:5248"): kernels and initrds are fetched from it.
	HTTPBase string
	// MetadataURL is the region's metadata API, given to the ephemeral
	// environment on its kernel command line.
	MetadataURL string
	// Kernel and Initrd are the ephemeral environment's files, relative to
	// Files.
	Kernel, Initrd string
	// ExtraParams go on every kernel command line (console=ttyS0,115200).
	ExtraParams []string
	// Holder, when set, says who holds a MAC; a per-MAC config asked
	// for from another address is served without the enrolment secret,
	// as it is when HeldBy says the asker holds another MAC.
	Holder Holder
	// HeldBy, when set, says which MAC holds an address; with Key, the
	// rack's API key, the default config then carries a sighting for
	// it (agentapi.Sign).
	HeldBy HeldBy
	Key    string
	// Limit, when set, bounds the configs one address may ask for
	// (NewConfigLimit); the rest are refused with boot.ErrBusy.
	Limit *ratelimit.PerKey
	Now   func() time.Time
}

// The configs one address may ask for: a PXELINUX boot tries a dozen
// names, GRUB's some more, so a booting machine stays well within these;
// a flood from one address is refused before it renders or reports
// anything.
const (
	ConfigRate  = 5
	ConfigBurst = 60
)

// NewConfigLimit is the per-address limit a rack's boot source keeps.
func NewConfigLimit() *ratelimit.PerKey {
	return ratelimit.New(ConfigRate, ConfigBurst).WithMax(limiterKeys)
}

// Open implements boot.Source.
func (s *BootSource) Open(ctx context.Context, name string, c boot.Client) (boot.File, error) {
	req, err := bootcfg.Parse(name)
	if err != nil {
		return boot.File{}, fmt.Errorf("%w: %v", boot.ErrBadName, err)
	}
	switch {
	case req.Kind == bootcfg.File:
		return s.Files.Open(ctx, req.Path, c)
	case !s.allow(c):
		return boot.File{}, fmt.Errorf("%w: configs from %s", boot.ErrBusy, c.Addr.Addr())
	case req.Kind == bootcfg.GRUB && req.Top:
		return file(bootcfg.GRUBTop(), s.now()), nil
	case req.Kind == bootcfg.IPXE && req.Path == "ipxe.cfg":
		return file(s.ipxeTop(), s.now()), nil
	case req.Fallthrough():
		return boot.File{}, boot.ErrNotFound
	}
	if !req.PerMachine() {
		var seen string
		if s.HeldBy != nil && c.Addr.IsValid() {
			seen = s.sign(s.HeldBy(ctx, c.Addr.Addr()), c)
		}
		return s.render(req, bootcfg.Params{Purpose: machine.BootEnlist, Arch: req.Arch}, nil, seen, false)
	}
	e, ok := s.Cache.ByMAC(req.MAC)
	if !ok && req.UUID != "" {
		e, ok = s.Cache.ByUUID(req.UUID)
	}
	if !ok {
		// Unknown: not found, so the firmware falls back to the default
		// config; the region lists the MAC as a discovery.
		s.report(req.MAC, req.UUID, c, "", fmt.Sprintf("asked for %s: unknown machine, firmware falls back to the default", req.Path))
		return boot.File{}, boot.ErrNotFound
	}
	p := bootcfg.Params{Purpose: e.Purpose, Arch: e.Arch, Hostname: e.Hostname, SystemID: e.SystemID, MAC: req.MAC}
	known, held := s.holds(ctx, req.MAC, e, c)
	holds := held != ""
	if known && !holds {
		s.report(req.MAC, "", c, "", fmt.Sprintf("config asked for from %s, which does not hold %s: served without its enrolment secret", c.Addr.Addr().Unmap(), req.MAC))
		e.Enrol = ""
	} else if e.Enrol != "" && c.Addr.IsValid() {
		e.Enrol = agentapi.EnrolFor(e.Enrol, c.Addr.Addr().Unmap().String())
	} else {
		e.Enrol = ""
	}
	var seen string
	if holds {
		seen = s.sign(held, c)
	}
	// An answer to an address known not to hold the MAC says nothing of
	// what the machine boots: its purpose is not reported, so an asker
	// cannot end a deployment by fetching the machine's local config.
	return s.render(req, p, &e, seen, !known || holds)
}

func (s *BootSource) render(req bootcfg.Request, p bootcfg.Params, e *Entry, seen string, vouched bool) (boot.File, error) {
	if p.Purpose == machine.BootEnlist || p.Purpose == machine.BootEphemeral || p.Purpose == machine.BootInstall {
		p.KernelURL, p.InitrdURL = s.HTTPBase+"/"+s.Kernel, s.HTTPBase+"/"+s.Initrd
		p.KernelParams = append(append([]string(nil), s.ExtraParams...), "anvil.purpose="+string(p.Purpose))
		if s.MetadataURL != "" {
			p.KernelParams = append(p.KernelParams, "anvil.url="+s.MetadataURL)
		}
		if s.HTTPBase != "" {
			p.KernelParams = append(p.KernelParams, "anvil.boot="+s.HTTPBase)
		}
		if e != nil {
			p.KernelParams = append(p.KernelParams, e.KernelOpts...)
		}
		if e != nil && e.Enrol != "" {
			p.KernelParams = append(p.KernelParams, "anvil.enrol="+e.Enrol)
		}
		if seen != "" {
			p.KernelParams = append(p.KernelParams, agentapi.ParamSeen+"="+seen)
		}
	}
	b, err := bootcfg.Render(req.Kind, p)
	if err != nil {
		return boot.File{}, err
	}
	switch {
	case e != nil && vouched:
		s.report(req.MAC, req.UUID, boot.Client{}, p.Purpose, fmt.Sprintf("config %s: purpose %s (status %s)", req.Path, p.Purpose, e.Status))
	case e != nil:
		s.report(req.MAC, req.UUID, boot.Client{}, "", fmt.Sprintf("config %s: purpose %s (status %s), to an address that does not hold the MAC", req.Path, p.Purpose, e.Status))
	}
	return file(b, s.now()), nil
}

// allow takes a token for c's address when configs are limited.
func (s *BootSource) allow(c boot.Client) bool {
	if s.Limit == nil {
		return true
	}
	key := ""
	if c.Addr.IsValid() {
		key = c.Addr.Addr().Unmap().String()
	}
	return s.Limit.Allow(key)
}

// holds says whether the rack can tell who holds the machine's MAC (the
// one asked for; for a config asked for by SMBIOS UUID, any of the
// machine's), and which of them c holds ("" when none).
func (s *BootSource) holds(ctx context.Context, mac string, e Entry, c boot.Client) (known bool, held string) {
	if !c.Addr.IsValid() {
		return false, ""
	}
	macs := []string{mac}
	if mac == "" && len(e.MACs) > 0 {
		macs = e.MACs
	}
	from := c.Addr.Addr().Unmap()
	var asker string
	if s.HeldBy != nil {
		asker = s.HeldBy(ctx, from)
	}
	for _, m := range macs {
		var hs []netip.Addr
		var sure bool
		if s.Holder != nil {
			hs, sure = s.Holder(ctx, m)
		}
		k, h := enrolTo(m, from, hs, sure, asker)
		if h {
			return true, m
		}
		known = known || k
	}
	return known, ""
}

// enrolTo decides who a per-MAC config's enrolment secret may go to: an
// address that holds mac. It is known that from does not when the
// holders are known and from is not among them, when the answer is sure
// (the rack's own DHCP: no lease and no offer means nobody), or when from
// is known to hold another MAC (asker, "" when unknown). Otherwise the
// rack cannot tell, and the secret, bound to from, goes to any asker
// (the README's exposure without Anvil's DHCP).
func enrolTo(mac string, from netip.Addr, holders []netip.Addr, sure bool, asker string) (known, holds bool) {
	if slices.ContainsFunc(holders, func(h netip.Addr) bool { return h.Unmap() == from }) {
		return true, true
	}
	if sure || len(holders) > 0 {
		return true, false
	}
	return asker != "" && !strings.EqualFold(asker, mac), false
}

// sign is the sighting of a boot served to c, which holds mac ("" when
// the rack cannot sign or mac is unknown).
func (s *BootSource) sign(mac string, c boot.Client) string {
	if mac == "" || s.Key == "" {
		return ""
	}
	return agentapi.Sign(s.Key, mac, c.Addr.Addr().Unmap().String(), s.now())
}

// ipxeTop is what DHCP hands iPXE: it asks for the machine's own config
// and falls back to the default one, as firmware does with PXELINUX and
// GRUB's files (a bare iPXE script URL has no fall-back of its own).
//
// Each chain replaces this script. Without --replace a chained script
// that ends (a local boot's exit, a failed kernel fetch) returns here, and
// the next line boots the enlistment environment: a deployed machine with
// the network first in its boot order never reached its disk. Only a
// config that cannot be fetched at all goes on to the next line; the last
// one exits to the firmware's next boot device.
func (s *BootSource) ipxeTop() []byte {
	return []byte("#!ipxe\n" +
		"chain --autofree --replace " + s.HTTPBase + "/ipxe.cfg-${mac} ||\n" +
		"chain --autofree --replace " + s.HTTPBase + "/ipxe.cfg-default-${buildarch} ||\n" +
		"chain --autofree --replace " + s.HTTPBase + "/ipxe.cfg-default-amd64 ||\n" +
		"exit 1\n")
}

func (s *BootSource) report(mac, uuid string, c boot.Client, purpose machine.BootPurpose, detail string) {
	if s.Report == nil || mac == "" {
		return
	}
	ip := ""
	if c.Addr.IsValid() {
		ip = c.Addr.Addr().String()
	}
	s.Report.Add(BootEvent{MAC: mac, UUID: uuid, IP: ip, Kind: "config", Detail: detail, At: s.now(), Purpose: string(purpose)})
}

func (s *BootSource) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func file(b []byte, at time.Time) boot.File {
	return boot.File{ReadSeeker: bytes.NewReader(b), Size: int64(len(b)), ModTime: at}
}
