// Command anvil-ephemeral builds Anvil's ephemeral environment: DIR/vmlinuz,
// DIR/initrd.img (the agent as /init plus the kernel modules it needs) and
// DIR/manifest.json.
//
//	go run ./cmd/anvil-ephemeral -out DIR [-kernel-version V]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/anvilmetal/anvil/internal/ephemeral"
)

func main() {
	out := flag.String("out", "", "output directory (required)")
	kv := flag.String("kernel-version", "", "kernel version under /boot and /lib/modules (default: newest installed)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: anvil-ephemeral -out DIR [-kernel-version V]")
		os.Exit(2)
	}
	m, err := ephemeral.Build(ephemeral.Options{Out: *out, KernelVersion: *kv})
	if err != nil {
		fmt.Fprintln(os.Stderr, "anvil-ephemeral:", err)
		os.Exit(1)
	}
	fmt.Printf("kernel %s: %s (%d bytes)\n", m.KernelVersion, m.Kernel.Name, m.Kernel.Size)
	fmt.Printf("initrd: %s (%d bytes; agent %d, %d modules %d bytes)\n", m.Initrd.Name, m.Initrd.Size, m.AgentSize, len(m.Modules), m.ModulesSize)
	if len(m.Missing) > 0 {
		fmt.Printf("not available: %s\n", strings.Join(m.Missing, " "))
	}
	fmt.Printf("wrote %s\n", *out)
}
