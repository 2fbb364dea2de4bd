package network

import "testing"

func TestYAMLKeysAndQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"eth0": "eth0", "br-ex": "br-ex", "bond0.100": "bond0.100", "_x": "_x",
		"no": `"no"`, "On": `"On"`, "1": `"1"`, "": `""`, "a b": `"a b"`, "x:y": `"x:y"`, "-x": `"-x"`,
		"a\"b\\": `"a\"b\\"`, "l\u2028s": `"l\u2028s"`, "nl\n": `"nl\x0a"`, "\U0001F600": `"\U0001f600"`,
	} {
		if got := key(in); got != want {
			t.Errorf("key(%q) = %s, want %s", in, got, want)
		}
	}
}
