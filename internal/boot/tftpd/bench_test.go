package tftpd

import (
	"fmt"
	"io"
	"testing"

	"github.com/pin/tftp/v3"
)

// BenchmarkTFTP64MiB downloads the 64 MiB file over loopback with
// blksize 1468 (what UEFI firmware asks for on Ethernet), using the
// library's own client: the figure is the server's and the library's
// lock-step cost, one ACK per block.
func BenchmarkTFTP64MiB(b *testing.B) {
	port, _ := serve(b, Options{})
	c, err := tftp.NewClient(fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		b.Fatal(err)
	}
	c.SetBlockSize(1468)
	b.SetBytes(int64(sizes["big"]))
	for b.Loop() {
		wt, err := c.Receive("big", "octet")
		if err != nil {
			b.Fatal(err)
		}
		n, err := wt.WriteTo(io.Discard)
		if err != nil || n != int64(sizes["big"]) {
			b.Fatalf("got %d bytes: %v", n, err)
		}
	}
}
