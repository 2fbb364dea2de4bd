package agentapi

import "testing"

func TestEnrolFor(t *testing.T) {
	a := EnrolFor("s3cret", "192.0.2.7")
	cases := []struct {
		secret, addr string
		same         bool
	}{
		{"s3cret", "192.0.2.7", true},
		{"s3cret", "::ffff:192.0.2.7", true}, // a dual-stack socket's spelling
		{"s3cret", "192.0.2.8", false},
		{"other", "192.0.2.7", false},
	}
	for _, c := range cases {
		if got := EnrolFor(c.secret, c.addr); (got == a) != c.same {
			t.Errorf("EnrolFor(%q, %q) same=%v, want %v", c.secret, c.addr, got == a, c.same)
		}
	}
	if EnrolFor("", "192.0.2.7") != "" || EnrolFor("s3cret", "") != "" {
		t.Error("an empty secret or address must give no value")
	}
	if a == "s3cret" || len(a) != 64 {
		t.Errorf("EnrolFor = %q", a)
	}
}
