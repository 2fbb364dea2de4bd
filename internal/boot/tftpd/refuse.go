package tftpd

import (
	"encoding/binary"
	"errors"
	"net"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/pin/tftp/v3"
)

// TFTP error codes (RFC 1350); 1, File not found, is the library's.
const (
	codeNotDefined   uint16 = 0
	codeAccessDenied uint16 = 2
)

// refuse ends a request the server will not serve and returns the error
// for the library's handler to return.
//
// pin/tftp v3.2.0 sends every error as code 1, File not found, with the
// returned error's text as message. That is right for an unknown file
// (firmware then asks for the next name), but a client must see write
// requests and names out of the tree as code 2, Access violation, and
// failures of ours as code 0. For those we send the right ERROR first,
// from a socket of our own on the address the request came to (an
// answer to a request comes from a new port anyway, RFC 1350 section 4).
// The client stops at the first ERROR; the library's own one, following,
// lands on a closed port.
func refuse(t any, err error) error {
	code, msg := codeNotDefined, "Server error"
	switch {
	case errors.Is(err, boot.ErrNotFound):
		return errors.New("File not found")
	case errors.Is(err, boot.ErrBadName), errors.Is(err, errWrite):
		code, msg = codeAccessDenied, "Access violation"
	}
	var to net.UDPAddr
	switch t := t.(type) {
	case tftp.OutgoingTransfer:
		to = t.RemoteAddr()
	case tftp.IncomingTransfer:
		to = t.RemoteAddr()
	}
	var local net.IP
	if p, ok := t.(tftp.RequestPacketInfo); ok {
		local = p.LocalIP()
	}
	if conn, lerr := net.ListenUDP("udp", &net.UDPAddr{IP: local}); lerr == nil {
		conn.WriteToUDP(errorPacket(code, msg), &to)
		conn.Close()
	}
	return errors.New(msg)
}

func errorPacket(code uint16, msg string) []byte {
	p := make([]byte, 4, 5+len(msg))
	binary.BigEndian.PutUint16(p, 5) // ERROR
	binary.BigEndian.PutUint16(p[2:], code)
	return append(append(p, msg...), 0)
}
