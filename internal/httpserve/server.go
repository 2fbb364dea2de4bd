// Package httpserve builds the HTTP servers Anvil runs (the API, pages and
// metadata; the rack's HTTP boot) with limits a hostile client cannot
// outlast: deadlines on every phase of a request, a cap on connections
// per source address, and deadlines that follow progress for the few
// handlers that stream or move large bodies.
package httpserve

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/anvilmetal/anvil/internal/connlimit"
)

// Limits bound what one client may hold of a server. Zero fields take
// the defaults; a negative duration or cap turns that limit off.
type Limits struct {
	// ReadHeader is how long a client has to send a request's headers,
	// from the moment the server starts reading them.
	ReadHeader time.Duration
	// Read is how long a client has to send a whole request, body
	// included. Uploads extend it while bytes keep arriving (Progress).
	Read time.Duration
	// Write is how long a handler and the client together have to
	// deliver an answer once its request was read. Streams and large
	// downloads extend it while the client keeps reading (Progress,
	// Stream).
	Write time.Duration
	// Idle is how long a keep-alive connection may wait for its next
	// request.
	Idle time.Duration
	// PerAddress is how many connections one source address may hold
	// open at once; the next is closed as soon as it is accepted.
	PerAddress int
	// Total is how many connections all clients may hold open at once,
	// so that many source addresses cannot use up the process's
	// descriptors either. Loopback (the rack in the process, a CLI on
	// the host) has LoopbackSpare connections beyond it.
	Total int
	// MaxHeaderBytes caps the request line and headers.
	MaxHeaderBytes int
}

// Defaults: a browser opens about six connections, a rack two or three,
// a busy API client a few dozen; a thousand idle sockets from one
// address are an attack. The write limit leaves room for the API's
// slowest ordinary answer (a power query waiting behind a dead BMC);
// handlers that wait longer say so with Extend.
var Defaults = Limits{
	ReadHeader:     10 * time.Second,
	Read:           60 * time.Second,
	Write:          2 * time.Minute,
	Idle:           90 * time.Second,
	PerAddress:     256,
	Total:          4096,
	MaxHeaderBytes: 64 << 10,
}

// LoopbackSpare are the connections loopback may open beyond Total: a
// flood from the network cannot cut the in-process rack off its region.
const LoopbackSpare = 64

// WithDefaults fills the zero fields of l from Defaults.
func (l Limits) WithDefaults() Limits {
	pick := connlimit.OrDefault[time.Duration]
	l.ReadHeader = pick(l.ReadHeader, Defaults.ReadHeader)
	l.Read = pick(l.Read, Defaults.Read)
	l.Write = pick(l.Write, Defaults.Write)
	l.Idle = pick(l.Idle, Defaults.Idle)
	l.PerAddress = connlimit.OrDefault(l.PerAddress, Defaults.PerAddress)
	l.Total = connlimit.OrDefault(l.Total, Defaults.Total)
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = Defaults.MaxHeaderBytes
	}
	return l
}

// New returns a server for h under l. Handlers find l again through
// LimitsFrom, so that the progress-based deadlines use the same figures.
func New(h http.Handler, l Limits, base context.Context) *http.Server {
	l = l.WithDefaults()
	if base == nil {
		base = context.Background()
	}
	base = context.WithValue(base, limitsKey{}, l)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// Listen wraps ln with the connection caps of l.
func (l Limits) Listen(ln net.Listener) net.Listener {
	l = l.WithDefaults()
	// A flood of idle sockets from one address, or from many, cannot use
	// up the process's descriptors; other clients keep being served.
	return connlimit.Limits{PerAddress: l.PerAddress, Total: l.Total,
		Reserved: spareFor, Spare: LoopbackSpare}.Listen(ln)
}

// spareFor are the addresses that have LoopbackSpare beyond Total.
var spareFor = netip.Addr.IsLoopback

type limitsKey struct{}

// LimitsFrom returns the limits of the server that is serving ctx's
// request (Defaults outside such a server).
func LimitsFrom(ctx context.Context) Limits {
	if l, ok := ctx.Value(limitsKey{}).(Limits); ok {
		return l
	}
	return Defaults
}
