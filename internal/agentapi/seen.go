package agentapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// ParamSeen carries a sighting: the rack's signed word that it served this
// boot's configuration to the address that holds a MAC.
const ParamSeen = "anvil.seen"

// A sighting travels with the boot rather than with the rack's batched
// reports, so the region can check a hello the moment it arrives, even
// while the rack cannot reach it. It is signed with the rack's API token
// secret, which only the rack and the region's store know, and names the
// token by its keys so the region can find that secret:
//
//	consumer.token.unix-seconds.mac-hex.signature
//
// The address is not in it: the region signs the hello's source address,
// so a sighting is worthless from anywhere else.

// Sighting is a parsed sighting.
type Sighting struct {
	Consumer, Token string
	MAC             string // normalised, with colons
	At              time.Time
	sig             []byte
}

// Sign makes the sighting a rack puts on the kernel command line of a
// boot it served to addr, which it knows holds mac. apiKey is the rack's
// "consumer:token:secret"; "" when it cannot sign.
func Sign(apiKey, mac, addr string, at time.Time) string {
	consumer, token, secret, ok := splitKey(apiKey)
	hw, err := net.ParseMAC(mac)
	if !ok || err != nil || addr == "" || len(hw) != 6 {
		return ""
	}
	s := Sighting{Consumer: consumer, Token: token, MAC: hw.String(), At: at.Truncate(time.Second)}
	return s.body() + "." + base64.RawURLEncoding.EncodeToString(s.sum(secret, addr))
}

// ParseSighting reads a sighting without checking its signature (Valid).
func ParseSighting(v string) (Sighting, error) {
	f := strings.Split(v, ".")
	if len(v) > 256 || len(f) != 5 {
		return Sighting{}, errors.New("not a sighting")
	}
	sec, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || sec <= 0 {
		return Sighting{}, errors.New("sighting: bad time")
	}
	if len(f[3]) != 12 {
		return Sighting{}, errors.New("sighting: bad MAC")
	}
	h := f[3]
	hw, err := net.ParseMAC(h[0:2] + ":" + h[2:4] + ":" + h[4:6] + ":" + h[6:8] + ":" + h[8:10] + ":" + h[10:12])
	if err != nil {
		return Sighting{}, errors.New("sighting: bad MAC")
	}
	sig, err := base64.RawURLEncoding.DecodeString(f[4])
	if err != nil || len(sig) != sha256.Size {
		return Sighting{}, errors.New("sighting: bad signature")
	}
	return Sighting{Consumer: f[0], Token: f[1], MAC: hw.String(), At: time.Unix(sec, 0).UTC(), sig: sig}, nil
}

// Valid says whether secret signed this sighting for a boot served to
// addr.
func (s Sighting) Valid(secret, addr string) bool {
	return secret != "" && hmac.Equal(s.sig, s.sum(secret, addr))
}

// ID names the sighting, to spend it once.
func (s Sighting) ID() string { return base64.RawURLEncoding.EncodeToString(s.sig) }

func (s Sighting) body() string {
	return fmt.Sprintf("%s.%s.%d.%s", s.Consumer, s.Token, s.At.Unix(), strings.ReplaceAll(s.MAC, ":", ""))
}

func (s Sighting) sum(secret, addr string) []byte {
	if a, err := netip.ParseAddr(addr); err == nil {
		addr = a.Unmap().WithZone("").String()
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("anvil-seen\x00" + s.body() + "\x00" + addr))
	return m.Sum(nil)
}

func splitKey(k string) (consumer, token, secret string, ok bool) {
	f := strings.Split(k, ":")
	if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" || strings.ContainsAny(f[0]+f[1], ". ") {
		return "", "", "", false
	}
	return f[0], f[1], f[2], true
}
