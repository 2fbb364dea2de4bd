package api_test

import (
	"crypto/rand"
	"fmt"

	"github.com/anvilmetal/anvil/internal/machine"
)

type (
	machineT = machine.Machine
	eventT   = machine.Event
)

func randomMAC() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("52:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4])
}

func itoaT(i int64) string { return fmt.Sprint(i) }
