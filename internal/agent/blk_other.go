//go:build !linux

package agent

func rereadPartitions(string) {}
