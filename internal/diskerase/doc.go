// Package diskerase holds the decisions of a release's disk erase: which
// method each disk gets (its own secure erase, every block zeroed, or
// only its ends), the NVMe and ATA commands that secure erase sends, and
// the reading of what the drives answer. It does no I/O: the machine's
// environment sends the commands and hands the answers back here.
package diskerase
