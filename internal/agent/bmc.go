package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/app"
	"github.com/bougou/go-ipmi/pkg/command/transport"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/machine"
)

// IPMIDevice is the OpenIPMI device the in-band BMC reading uses.
const IPMIDevice = "/dev/ipmi0"

// LAN configuration parameter selectors (IPMI 2.0, table 23-4).
const (
	lanParamIP  = 3
	lanParamMAC = 5
)

// medium802_3 is Get Channel Info's channel medium for an 802.3 LAN.
const medium802_3 = 0x04

// decodeLANIP decodes parameter 3 (the BMC's IPv4 address); unset (0.0.0.0)
// is not an address.
func decodeLANIP(data []byte) (string, bool) {
	if len(data) < 4 {
		return "", false
	}
	ip := net.IPv4(data[0], data[1], data[2], data[3])
	if ip.Equal(net.IPv4zero) {
		return "", false
	}
	return ip.String(), true
}

// decodeLANMAC decodes parameter 5 (the BMC's MAC address).
func decodeLANMAC(data []byte) (string, bool) {
	if len(data) < 6 {
		return "", false
	}
	mac := net.HardwareAddr(data[:6])
	var zero [6]byte
	if string(data[:6]) == string(zero[:]) {
		return "", false
	}
	return mac.String(), true
}

// lanClient is the part of the IPMI client the BMC reading uses.
type lanClient interface {
	GetChannelInfo(ctx context.Context, ch uint8) (*app.GetChannelInfoResponse, error)
	GetLanConfigParam(ctx context.Context, ch uint8, sel types.LanConfigParamSelector, set, block uint8) (*transport.GetLanConfigParamResponse, error)
}

// lanChannels are tried in order: channel 1 is the usual LAN channel.
var lanChannels = []uint8{1, 2, 3, 4, 5, 6, 7, 8}

// readLAN finds the first LAN channel with an address or MAC and reads
// both. Channels that Get Channel Info says are not 802.3 are skipped;
// when Get Channel Info itself fails the channel is tried anyway. With no
// answer, the error says what the first LAN channel tried answered.
func readLAN(ctx context.Context, c lanClient) (*machine.BMCInfo, uint8, error) {
	var first error
	note := func(ch uint8, err error) {
		if first == nil {
			first = fmt.Errorf("channel %d: %w", ch, err)
		}
	}
	for _, ch := range lanChannels {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		if info, err := c.GetChannelInfo(ctx, ch); err == nil && uint8(info.ChannelMedium) != medium802_3 {
			continue
		}
		b := &machine.BMCInfo{Type: "ipmi", Port: 623}
		if r, err := c.GetLanConfigParam(ctx, ch, lanParamIP, 0, 0); err == nil {
			b.Address, _ = decodeLANIP(r.ParamData)
		} else {
			note(ch, err)
		}
		if r, err := c.GetLanConfigParam(ctx, ch, lanParamMAC, 0, 0); err == nil {
			b.MAC, _ = decodeLANMAC(r.ParamData)
		} else {
			note(ch, err)
		}
		if b.Address != "" || b.MAC != "" {
			return b, ch, nil
		}
	}
	if first == nil {
		first = errors.New("no LAN channel with an address")
	}
	return nil, 0, first
}

// ReadBMC reads the BMC's LAN address and MAC in-band through the OpenIPMI
// device. It gives up (nil and why) when there is no device, no LAN channel
// answers or timeout passes; it never blocks longer than timeout.
func ReadBMC(ctx context.Context, timeout time.Duration) (*machine.BMCInfo, error) {
	var b *machine.BMCInfo
	err := withOpenIPMI(ctx, timeout, func(ctx context.Context, c *client.Client) (err error) {
		b, _, err = readLAN(ctx, c)
		return err
	})
	return b, err
}

// withOpenIPMI runs fn with a client of the OpenIPMI device, giving up
// after timeout even when the device never answers (fn's goroutine is
// then left to its own, shorter, per-command timeouts).
func withOpenIPMI(ctx context.Context, timeout time.Duration, fn func(context.Context, *client.Client) error) error {
	if _, err := os.Stat(IPMIDevice); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		c, err := client.NewOpenClient()
		if err != nil {
			done <- err
			return
		}
		c.WithTimeout(timeout / 4)
		if err := c.Connect(ctx); err != nil {
			done <- err
			return
		}
		defer c.Close(context.Background())
		done <- fn(ctx, c)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer from %s within %s", IPMIDevice, timeout)
	}
}
