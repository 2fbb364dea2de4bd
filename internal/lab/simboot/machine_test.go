package simboot

import "testing"

func TestParseIPXE(t *testing.T) {
	script := `#!ipxe
# Anvil enlist config
echo Enlisting
kernel --name kernel http://192.0.2.1:5248/ephemeral/vmlinuz initrd=initrd anvil.purpose=enlist anvil.url=http://192.0.2.1:5240/MAAS/metadata/ anvil.enrol=s3cret BOOTIF=01-${mac:hexhyp} || goto failed
initrd --name initrd http://192.0.2.1:5248/ephemeral/initrd.img || goto failed
boot || goto failed
:failed
exit 1
`
	bc, err := parseIPXE(script, "02:a5:00:00:00:01")
	if err != nil {
		t.Fatal(err)
	}
	if bc.kernel != "http://192.0.2.1:5248/ephemeral/vmlinuz" || bc.initrd != "http://192.0.2.1:5248/ephemeral/initrd.img" {
		t.Errorf("kernel %q initrd %q", bc.kernel, bc.initrd)
	}
	for k, v := range map[string]string{"anvil.purpose": "enlist", "anvil.url": "http://192.0.2.1:5240/MAAS/metadata/", "anvil.enrol": "s3cret", "BOOTIF": "01-02-a5-00-00-00-01"} {
		if bc.params[k] != v {
			t.Errorf("%s = %q, want %q", k, bc.params[k], v)
		}
	}
	if _, err := parseIPXE("#!ipxe\nexit\n", "02:a5:00:00:00:01"); err == nil {
		t.Error("a local-boot config parsed as a boot")
	}
}

func TestNewMAC(t *testing.T) {
	if got := NewMAC(0x01020304); got != "02:a5:01:02:03:04" {
		t.Errorf("NewMAC = %s", got)
	}
	if u := NewUUID(); len(u) != 36 || u[14] != '4' {
		t.Errorf("NewUUID = %s", u)
	}
}
