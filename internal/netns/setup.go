package netns

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// Add creates namespace name with its loopback up, removing a leftover of
// that name first (a run that was killed before it could clean up).
func Add(name string) error {
	_ = exec.Command("ip", "netns", "del", name).Run()
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns add %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	return IP(name, "link", "set", "lo", "up")
}

// Delete removes namespace name; the interfaces inside (bridge, taps) go
// with it.
func Delete(name string) error {
	if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns del %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	return nil
}

// IP runs `ip ARGS` inside namespace name.
func IP(name string, args ...string) error {
	out, err := exec.Command("ip", append([]string{"netns", "exec", name, "ip"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s (namespace %s): %v: %s", strings.Join(args, " "), name, err, bytes.TrimSpace(out))
	}
	return nil
}

// Bridge creates, inside namespace name, bridge br with address cidr
// (e.g. 192.0.2.1/24) and the given tap devices attached, all up.
func Bridge(name, br, cidr string, taps ...string) error {
	steps := [][]string{
		{"link", "add", br, "type", "bridge"},
		{"addr", "add", cidr, "dev", br},
		{"link", "set", br, "up"},
	}
	for _, tap := range taps {
		steps = append(steps,
			[]string{"tuntap", "add", "dev", tap, "mode", "tap"},
			[]string{"link", "set", tap, "master", br},
			[]string{"link", "set", tap, "up"})
	}
	for _, s := range steps {
		if err := IP(name, s...); err != nil {
			return err
		}
	}
	return nil
}
