// Package ipmibmc is a virtual IPMI BMC for one lab machine: go-ipmi's
// reference server (RMCP+ lanplus with cipher suites 3 and 17, and IPMI
// 1.5 lan with MD5) answering on a UDP socket, with a chassis that drives
// a lab.Machine. ipmitool, OpenIPMI's tools and Anvil's ipmi driver all
// talk to it as to a real BMC.
//
// Plain IPMI has no way to address several systems behind one BMC, so each
// machine gets a BMC of its own; the Redfish lab covers multi-system
// chassis.
package ipmibmc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/bougou/go-ipmi/pkg/bmc"
	"github.com/bougou/go-ipmi/pkg/handlers"
	"github.com/bougou/go-ipmi/pkg/server"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/lab"
)

// Options configure a BMC.
type Options struct {
	// User and Password are the one account, with administrator
	// privilege. An empty User configures the null user; with an empty
	// Password too, the BMC allows anonymous logins.
	User, Password string
	// Faults are injected per packet: Delay before each answer, LossRate
	// of requests dropped, Hang drops them all, WrongPassword makes the
	// BMC refuse Password.
	Faults lab.Faults
	// Log, if set, records each chassis command.
	Log *lab.Log
	// Sessions, if set, counts the RMCP+ sessions this BMC holds, under
	// the BMC's UDP address.
	Sessions *lab.SessionMeter
}

// BMC serves IPMI for one machine.
type BMC struct {
	m    lab.Machine
	opts Options
	// refused is the password the BMC holds while Faults.WrongPassword is
	// set: random, so no client can know it.
	refused string

	mu     sync.Mutex
	state  *bmc.BMC
	conn   *faultConn
	srv    *server.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a BMC for m; Start serves it.
func New(m lab.Machine, opts Options) *BMC {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &BMC{m: m, opts: opts, refused: "x" + hex.EncodeToString(b)}
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves. It
// returns the bound address.
func (b *BMC) Start(addr string) (net.Addr, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("ipmibmc: %w", err)
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("ipmibmc: %w", err)
	}
	if err := b.Serve(pc); err != nil {
		pc.Close()
		return nil, err
	}
	return pc.LocalAddr(), nil
}

// Serve serves on a socket opened elsewhere, for instance inside a
// network namespace. Close closes it.
func (b *BMC) Serve(pc *net.UDPConn) error {
	if len(b.opts.User) > bmc.MaxUserNameLen || len(b.opts.Password) > bmc.MaxPasswordLen {
		return fmt.Errorf("ipmibmc: IPMI user names have at most %d bytes and passwords %d", bmc.MaxUserNameLen, bmc.MaxPasswordLen)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		return errors.New("ipmibmc: already started")
	}
	info := bmc.DeviceInfo{
		DeviceID: 0x20, DeviceRevision: 1, FirmwareMajor: 1, IPMIVersion: 0x20,
		ManufacturerID: 0xB6A0, ProductID: 0x1, // not a registered IANA number
		AdditionalDeviceSupport: 0x80, // chassis device
	}
	state := bmc.New(info, guid(b.m), machineHAL{ch: &chassis{m: b.m, log: b.opts.Log}})
	if err := b.setUser(state, b.opts.Faults.WrongPassword); err != nil {
		return err
	}
	b.state = state
	b.conn = newFaultConn(pc, b.opts.Faults)
	if meter := b.opts.Sessions; meter != nil {
		key := pc.LocalAddr().String()
		b.conn.opened = func(id uint32) { meter.Opened(key, id) }
		state.Sessions.SetOnRemove(func(id uint32) {
			state.SOL.DeactivateBySession(id) // what bmc.New wires
			meter.Closed(key, id)
		})
	}
	b.srv = server.NewServer(state, b.conn, server.WithHandlerRegistry(registry()))
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan struct{})
	go func(srv *server.Server, done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ctx)
	}(b.srv, b.done)
	return nil
}

// registry is go-ipmi's standard command set and Get System GUID, which it
// lacks: the BMC's GUID, the machine's SMBIOS UUID, as a real server's BMC
// answers (Anvil checks a boot found by its BMC against it).
func registry() *handlers.Registry {
	reg := handlers.NewRegistry()
	handlers.RegisterAllHandlers(reg)
	reg.RegisterFunc(types.CommandGetSystemGUID, func(_ context.Context, hctx *handlers.HandlerContext, _ []byte) ([]byte, types.CompletionCode, error) {
		g := hctx.BMC.GUID
		return append([]byte(nil), g[:]...), types.CodeOK, nil
	})
	return reg
}

// userSlot is where the account lives: 1 is IPMI's null user, 2 the first
// named one.
func (b *BMC) userSlot() uint8 {
	if b.opts.User == "" {
		return 1
	}
	return 2
}

func (b *BMC) setUser(state *bmc.BMC, wrong bool) error {
	pass := b.opts.Password
	if wrong {
		pass = b.refused
	}
	return state.Users.Upsert(b.userSlot(), func(u *bmc.User) error {
		u.Name = b.opts.User
		u.SetPassword([]byte(pass))
		u.Enabled = true
		if u.ChannelAccess == nil {
			u.ChannelAccess = map[uint8]bmc.UserChannelAccess{}
		}
		u.ChannelAccess[1] = bmc.UserChannelAccess{MaxPrivilege: bmc.PrivilegeLevelAdministrator, Enabled: true} // the LAN channel
		return nil
	})
}

// SetFaults changes the faults of a running (or not yet started) BMC.
func (b *BMC) SetFaults(f lab.Faults) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.opts.Faults
	b.opts.Faults = f
	if b.conn == nil {
		return nil
	}
	b.conn.set(f)
	if f.WrongPassword != old.WrongPassword {
		return b.setUser(b.state, f.WrongPassword)
	}
	return nil
}

// Close stops serving and closes the socket.
func (b *BMC) Close() error {
	b.mu.Lock()
	srv, cancel, done := b.srv, b.cancel, b.done
	b.mu.Unlock()
	if srv == nil {
		return nil
	}
	cancel()
	err := srv.Close()
	<-done
	return err
}

// guid is the machine's SMBIOS UUID as the BMC's system GUID, as on real
// servers, in IPMI's order (least significant byte first); a machine
// without a parsable UUID gets zeros.
func guid(m lab.Machine) [16]byte {
	var g [16]byte
	raw, err := hex.DecodeString(strings.ReplaceAll(m.UUID(), "-", ""))
	if err == nil && len(raw) == 16 {
		slices.Reverse(raw)
		copy(g[:], raw)
	}
	return g
}
