// Package tftpd is the rack's TFTP server (port 69): read requests only,
// files from a boot.Source. The protocol itself is github.com/pin/tftp.
//
// Options negotiated (through the library): blksize (RFC 2348) up to
// 65464, clamped to the interface MTU so blocks are never IP-fragmented,
// and tsize (RFC 2349). The library does not negotiate windowsize
// (RFC 7440): it drops the option from its OACK and clients fall back to
// one block per ACK, as with tftpd-hpa. Its non-standard SetAnticipate
// (send N blocks, then wait for all N ACKs) is left off: it gained a
// quarter on loopback, and with large blocks the burst overflows the
// client's socket buffer, every resend loses the same tail and the
// transfer dies.
package tftpd

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/connlimit"
	"github.com/pin/tftp/v3"
)

// Options tune the server; the zero value is sensible.
type Options struct {
	Observer boot.Observer
	// Timeout is how long a block waits for its ACK before it is sent
	// again. Default 1s, as tftpd-hpa: the library's 5s turns one lost
	// packet into a stall firmware may give up on.
	Timeout time.Duration
	// Retries is how many times a block is sent again before the
	// transfer is abandoned. Default 5.
	Retries int
	// MaxBlockSize caps the blksize agreed to (513..65464; the library
	// ignores other values). Default: no cap but the interface MTU.
	MaxBlockSize int
	// SinglePort answers every transfer from the listening socket instead
	// of a new one per transfer. For a socket opened in another network
	// namespace than the process runs in (tests), where a new socket would
	// be in the wrong one; slower, so not the default.
	SinglePort bool
	// MaxTransfers and MaxPerAddress cap the read transfers under way at
	// once, in all and to one address (zero: the defaults; negative: no
	// cap). A transfer holds a socket until its client has ACKed the
	// last block or the retries run out, so a flood of read requests
	// that never ACK would otherwise hold one socket each.
	MaxTransfers, MaxPerAddress int
}

// Firmware fetches one file at a time, and a rack boots a few hundred
// machines at once; a few dozen from one address is a test harness or a
// host behind NAT, hundreds a flood.
const (
	defaultMaxTransfers  = 1024
	defaultMaxPerAddress = 32
)

// Server serves read requests from a Source.
type Server struct {
	src    boot.Source
	obs    boot.Observer
	srv    *tftp.Server
	ctx    context.Context
	cancel context.CancelFunc
	slots  *connlimit.Slots[netip.Addr]
}

// New returns a server that is not yet listening.
func New(src boot.Source, opts Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{src: src, obs: opts.Observer, ctx: ctx, cancel: cancel,
		slots: &connlimit.Slots[netip.Addr]{Total: connlimit.OrDefault(opts.MaxTransfers, defaultMaxTransfers),
			PerKey: connlimit.OrDefault(opts.MaxPerAddress, defaultMaxPerAddress)}}
	if s.obs == nil {
		s.obs = func(string, boot.Client, int64, time.Duration, error) {}
	}
	s.srv = tftp.NewServer(s.read, s.write)
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	s.srv.SetTimeout(opts.Timeout)
	s.srv.SetRetries(opts.Retries)
	// The library sleeps up to a further random second before resending;
	// the timeout has already waited, so resend at once.
	s.srv.SetBackoff(func(int) time.Duration { return 0 })
	if opts.MaxBlockSize == 0 {
		opts.MaxBlockSize = 65464
	}
	s.srv.SetBlockSize(opts.MaxBlockSize)
	if opts.SinglePort {
		s.srv.EnableSinglePort()
	}
	return s
}

// ListenAndServe listens on the UDP address addr ("127.0.0.1:6969",
// ":69") and serves until Shutdown.
func (s *Server) ListenAndServe(addr string) error {
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return err
	}
	conn, err := net.ListenUDP("udp", a)
	if err != nil {
		return err
	}
	return s.Serve(conn)
}

// Serve serves requests arriving on conn until Shutdown, which closes it.
// conn should be a *net.UDPConn: the library then learns which local
// address each request came to, answers from it (firmware ignores
// answers from elsewhere) and reads the MTU for blksize. Any other
// PacketConn is served with 512-byte blocks from the wildcard address.
func (s *Server) Serve(conn net.PacketConn) error {
	return s.srv.Serve(conn)
}

// Shutdown stops listening and waits for transfers under way to end.
func (s *Server) Shutdown() {
	s.cancel()
	s.srv.Shutdown()
}

// read is the library's read handler, run in a goroutine of its own for
// each request.
func (s *Server) read(raw string, rf io.ReaderFrom) error {
	start := time.Now()
	ot := rf.(tftp.OutgoingTransfer)
	c := client(ot.RemoteAddr())
	release, ok := s.slots.Take(c.Addr.Addr())
	if !ok {
		s.obs(raw, c, 0, time.Since(start), errBusy)
		return refuse(rf, errBusy)
	}
	defer release()
	name, err := boot.CleanName(raw)
	var f boot.File
	if err == nil {
		f, err = s.src.Open(s.ctx, name, c)
	} else {
		name = raw
	}
	if err != nil {
		s.obs(name, c, 0, time.Since(start), err)
		return refuse(rf, err)
	}
	if f.Close != nil {
		defer f.Close()
	}
	if f.Size >= 0 {
		// Saves the library seeking to the end to learn the size.
		ot.SetSize(f.Size)
	}
	n, err := rf.ReadFrom(f.ReadSeeker)
	s.obs(name, c, n, time.Since(start), err)
	// The library has already told the client of any failure.
	return nil
}

// errBusy refuses a read request over the caps on transfers.
var errBusy = errors.New("too many transfers under way")

// errWrite is what the observer hears of a write request.
var errWrite = errors.New("tftp write requests are refused")

// write refuses every write request: the rack serves boot files, and
// nothing a client sends should land in its tree.
func (s *Server) write(raw string, wt io.WriterTo) error {
	c := client(wt.(tftp.IncomingTransfer).RemoteAddr())
	s.obs(raw, c, 0, 0, errWrite)
	return refuse(wt, errWrite)
}

func client(a net.UDPAddr) boot.Client {
	return boot.Client{Addr: netip.AddrPortFrom(unmap(a.IP), uint16(a.Port)), Proto: "tftp"}
}

func unmap(ip net.IP) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a.Unmap()
}
