package bootcfg

import "testing"

func TestCheckKernelOpts(t *testing.T) {
	for opts, ok := range map[string]bool{
		"":                              true,
		"console=ttyS0 mem=4G":          true,
		"vga=791 quiet":                 true,
		"intel_iommu=on hugepages=16":   true,
		"anvil_e2e_bigmem=1":            false,
		"quiet hugemem=1":               false,
		"novga=1":                       false,
		"memtest=4 crashkernel=256M":    true,
		"rd.memdebug=1 memory_corrupt=": true,
	} {
		if err := CheckKernelOpts(opts); (err == nil) != ok {
			t.Errorf("CheckKernelOpts(%q) = %v, want ok=%v", opts, err, ok)
		}
	}
}
