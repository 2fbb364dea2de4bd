// Package e2e holds Anvil's end-to-end tests: the anvil binary serving in
// a network namespace the test makes, QEMU machines (TCG) that really
// network-boot the ephemeral environment, and OpenIPMI's ipmi_sim as each
// machine's BMC, reachable over the LAN inside the namespace and in-band
// through the machine's KCS interface. They take minutes; go test -short
// skips them.
package e2e
