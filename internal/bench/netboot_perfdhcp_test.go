package bench

import "testing"

// perfdhcpOutput is Kea 2.2.0's perfdhcp report, abridged only in the
// delay lines.
const perfdhcpOutput = `Running: perfdhcp -4 -r 1000 -R 50000 -p 3 -l nbc1
Scenario: basic.
Multi-thread mode enabled.
***Rate statistics***
Rate: 422.184 4-way exchanges/second, expected rate: 1000

***Malformed Packets***
Malformed packets: 0
***Statistics for: DISCOVER-OFFER***
sent packets: 2999
received packets: 1484
drops: 1515
drops ratio: 50.5168 %
orphans: 43
rejected leases: 0
non unique addresses: 0

min delay: 0.082 ms
collected packets: 0

***Statistics for: REQUEST-ACK***
sent packets: 1484
received packets: 1267
drops: 217
drops ratio: 14.6226 %
orphans: 12
rejected leases: 0
non unique addresses: 0

min delay: 0.082 ms
collected packets: 0
`

func TestParsePerfdhcp(t *testing.T) {
	s, err := parsePerfdhcp(perfdhcpOutput)
	if err != nil {
		t.Fatal(err)
	}
	want := PerfdhcpStats{DO: PerfExchange{2999, 1484, 1515}, RA: PerfExchange{1484, 1267, 217}, Rate: 422.184}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if p := s.DO.DropPercent(); p < 50.5 || p > 50.6 {
		t.Errorf("DISCOVER drop percent %.2f", p)
	}
	if _, err := parsePerfdhcp("Error: socket bind failed"); err == nil {
		t.Error("garbage parsed")
	}
}
