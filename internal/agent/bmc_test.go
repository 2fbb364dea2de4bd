package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/bougou/go-ipmi/pkg/command/app"
	"github.com/bougou/go-ipmi/pkg/command/transport"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/machine"
)

func TestDecodeLAN(t *testing.T) {
	if ip, ok := decodeLANIP([]byte{10, 0, 0, 42}); !ok || ip != "10.0.0.42" {
		t.Errorf("ip = %q %v", ip, ok)
	}
	for _, bad := range [][]byte{nil, {10, 0}, {0, 0, 0, 0}} {
		if ip, ok := decodeLANIP(bad); ok {
			t.Errorf("decodeLANIP(%v) = %q", bad, ip)
		}
	}
	if mac, ok := decodeLANMAC([]byte{0x0c, 0xc4, 0x7a, 0xAB, 0xcd, 0x01}); !ok || mac != "0c:c4:7a:ab:cd:01" {
		t.Errorf("mac = %q %v", mac, ok)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, make([]byte, 6)} {
		if mac, ok := decodeLANMAC(bad); ok {
			t.Errorf("decodeLANMAC(%v) = %q", bad, mac)
		}
	}
}

// fakeLAN answers as a BMC whose LAN channel is lanCh.
type fakeLAN struct {
	lanCh   uint8
	noInfo  bool // Get Channel Info unsupported
	ip, mac []byte
	calls   []uint8
}

func (f *fakeLAN) GetChannelInfo(_ context.Context, ch uint8) (*app.GetChannelInfoResponse, error) {
	if f.noInfo {
		return nil, errors.New("invalid command")
	}
	r := &app.GetChannelInfoResponse{ActualChannelNumber: ch, ChannelMedium: types.ChannelMedium(0x0c)}
	if ch == f.lanCh {
		r.ChannelMedium = medium802_3
	}
	return r, nil
}

func (f *fakeLAN) GetLanConfigParam(_ context.Context, ch uint8, sel types.LanConfigParamSelector, _, _ uint8) (*transport.GetLanConfigParamResponse, error) {
	f.calls = append(f.calls, ch)
	if ch != f.lanCh {
		return nil, errors.New("invalid data field")
	}
	switch sel {
	case lanParamIP:
		return &transport.GetLanConfigParamResponse{ParamRevision: 0x11, ParamData: f.ip}, nil
	case lanParamMAC:
		return &transport.GetLanConfigParamResponse{ParamRevision: 0x11, ParamData: f.mac}, nil
	}
	return nil, errors.New("unsupported parameter")
}

func TestReadLAN(t *testing.T) {
	f := &fakeLAN{lanCh: 2, ip: []byte{192, 0, 2, 10}, mac: []byte{0x52, 0x54, 0, 0, 0, 0x99}}
	got, _, _ := readLAN(context.Background(), f)
	if got == nil || *got != (machine.BMCInfo{Type: "ipmi", Address: "192.0.2.10", MAC: "52:54:00:00:00:99", Port: 623}) {
		t.Fatalf("got %+v", got)
	}
	if len(f.calls) != 2 || f.calls[0] != 2 {
		t.Errorf("asked channels %v; only channel 2 is LAN", f.calls)
	}

	f = &fakeLAN{lanCh: 1, noInfo: true, mac: []byte{0x52, 0x54, 0, 0, 0, 0x99}}
	if got, _, _ := readLAN(context.Background(), f); got == nil || got.MAC != "52:54:00:00:00:99" || got.Address != "" {
		t.Fatalf("without channel info: %+v", got)
	}

	f = &fakeLAN{lanCh: 9, noInfo: true}
	if got, _, _ := readLAN(context.Background(), f); got != nil {
		t.Fatalf("no LAN channel: %+v", got)
	}
}
