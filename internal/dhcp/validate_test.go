package dhcp

import (
	"bytes"
	"context"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

func TestMalformedPacketsAreDroppedAndCounted(t *testing.T) {
	h := newHarness(t, testConfig())
	good := discover(macN(1)).ToBytes()
	patch := func(off int, v byte) []byte {
		b := bytes.Clone(good)
		b[off] = v
		return b
	}
	reply := discover(macN(1))
	reply.OpCode = dhcpv4.OpcodeBootReply
	noType := discover(macN(1))
	noType.Options.Del(dhcpv4.OptionDHCPMessageType)
	offerToServer := msg(dhcpv4.MessageTypeOffer, macN(1))

	cases := []struct {
		name   string
		data   []byte
		reason string
	}{
		{"empty", nil, DropParse},
		{"short", good[:100], DropParse},
		{"bad cookie", patch(236, 0), DropParse},
		{"oversized", append(bytes.Clone(good[:len(good)-1]), bytes.Repeat([]byte{0}, 1600)...), DropOversized},
		{"bootreply", reply.ToBytes(), DropWrongOp},
		{"hlen 0", patch(2, 0), DropBadHLen},
		{"hlen 200", patch(2, 200), DropBadHLen},
		{"ethernet hlen 4", patch(2, 4), DropBadHLen},
		{"bootp", noType.ToBytes(), DropNoMsgType},
		{"offer to server", offerToServer.ToBytes(), DropBadMsgType},
	}
	want := map[string]uint64{}
	for _, tc := range cases {
		out, _ := h.s.Handle(context.Background(), Packet{Data: tc.data, LocalPort: 67})
		if out != nil {
			t.Errorf("%s: answered", tc.name)
		}
		if e := h.lastEvent(); e.Kind != EventDrop || e.Reason != tc.reason {
			t.Errorf("%s: event %+v, want drop %s", tc.name, e, tc.reason)
		}
		want[tc.reason]++
	}
	st := h.s.Stats()
	for reason, n := range want {
		if st.Drops[reason] != n {
			t.Errorf("Drops[%s] = %d, want %d (all: %v)", reason, st.Drops[reason], n, st.Drops)
		}
	}
	if st.Received != uint64(len(cases)) || st.Offers != 0 {
		t.Errorf("stats %+v", st)
	}
}
