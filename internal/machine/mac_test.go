package machine

import (
	"strings"
	"testing"
)

func TestNormaliseMachineMAC(t *testing.T) {
	for in, want := range map[string]string{
		"52:54:00:12:34:56": "",
		"525400123456":      "",
		"02:00:00:00:00:01": "", // locally administered unicast
		"FF:FF:FF:FF:FF:FF": "broadcast",
		"ff-ff-ff-ff-ff-ff": "broadcast",
		"00:00:00:00:00:00": "all zeros",
		"000000000000":      "all zeros",
		"01:00:5e:00:00:01": "multicast",
		"33:33:00:00:00:01": "multicast",
		"03:00:00:00:00:00": "multicast",
		"52:54:00:12:34":    "not a valid MAC",
	} {
		_, err := NormaliseMachineMAC(in)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
