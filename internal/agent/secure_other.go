//go:build !linux

package agent

import "github.com/anvilmetal/anvil/internal/diskerase"

func nvmeSecureErase(*Agent, string, string) (diskerase.Method, string, error) {
	return "", "NVMe commands are sent only on Linux", nil
}

func ataSecureErase(*Agent, string, string) (diskerase.Method, string, error) {
	return "", "ATA commands are sent only on Linux", nil
}
