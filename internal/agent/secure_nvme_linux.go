package agent

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/anvilmetal/anvil/internal/diskerase"
)

// nvmePassthru is the kernel's struct nvme_passthru_cmd (72 bytes), the
// argument of NVME_IOCTL_ADMIN_CMD.
type nvmePassthru struct {
	Opcode      uint8
	Flags       uint8
	Rsvd1       uint16
	NSID        uint32
	CDW2, CDW3  uint32
	Metadata    uint64
	Addr        uint64
	MetadataLen uint32
	DataLen     uint32
	CDW10       uint32
	CDW11       uint32
	CDW12       uint32
	CDW13       uint32
	CDW14       uint32
	CDW15       uint32
	TimeoutMS   uint32
	Result      uint32
}

// The NVMe ioctls: _IO('N', 0x40) and _IOWR('N', 0x41, 72 bytes).
const (
	nvmeIoctlID       = 0x4E40
	nvmeIoctlAdminCmd = 0xC0484E41
)

// nvmeFormatTimeout bounds a Format NVM: a user data erase of a large
// drive may take long, and the command is answered only when it is done.
const nvmeFormatTimeoutMS = 3 * 60 * 60 * 1000

// nvmeAdmin sends one admin command; a non-zero NVMe status is an error.
func nvmeAdmin(f *os.File, c *nvmePassthru, data []byte) error {
	if len(data) > 0 {
		c.Addr, c.DataLen = uint64(uintptr(unsafe.Pointer(&data[0]))), uint32(len(data))
	}
	st, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), nvmeIoctlAdminCmd, uintptr(unsafe.Pointer(c)))
	runtime.KeepAlive(data) // the kernel wrote through c.Addr
	if errno != 0 {
		return errno
	}
	if st != 0 {
		return fmt.Errorf("NVMe %s", diskerase.NVMeStatus(int(st)))
	}
	return nil
}

// nvmeSecureErase sends Format NVM with a secure erase setting to the
// namespace dev, when Identify Controller says Format is supported. why
// is set when no erase was sent; err when one was sent and failed.
func nvmeSecureErase(a *Agent, dev, name string) (m diskerase.Method, why string, err error) {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Sprintf("opening %s: %v", dev, err), nil
	}
	defer f.Close()
	nsid, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), nvmeIoctlID, 0)
	if errno != 0 {
		return "", fmt.Sprintf("not an NVMe namespace (%v)", errno), nil
	}
	buf := make([]byte, diskerase.NVMeIdentifyLen)
	id := nvmePassthru{Opcode: diskerase.NVMeOpIdentify, CDW10: diskerase.IdentifyControllerCDW10()}
	if err := nvmeAdmin(f, &id, buf); err != nil {
		return "", fmt.Sprintf("Identify Controller failed: %v", err), nil
	}
	ctrl, err := diskerase.ParseNVMeController(buf)
	if err != nil {
		return "", err.Error(), nil
	}
	a.Logf("erase %s NVMe %q serial %q format=%v crypto=%v all-namespaces=%v sanitize=crypto:%v,block:%v,overwrite:%v",
		name, ctrl.Model, ctrl.Serial, ctrl.Format, ctrl.CryptoErase, ctrl.FormatAllNamespaces,
		ctrl.SanitizeCrypto, ctrl.SanitizeBlock, ctrl.SanitizeOverwrite)
	if !ctrl.Format {
		return "", "the controller does not support Format NVM", nil
	}
	clear(buf)
	id = nvmePassthru{Opcode: diskerase.NVMeOpIdentify, NSID: uint32(nsid), CDW10: diskerase.IdentifyNamespaceCDW10()}
	if err := nvmeAdmin(f, &id, buf); err != nil {
		return "", fmt.Sprintf("Identify Namespace failed: %v", err), nil
	}
	ns, err := diskerase.ParseNVMeNamespace(buf)
	if err != nil {
		return "", err.Error(), nil
	}
	ses := diskerase.NVMeSES(ctrl)
	format := nvmePassthru{Opcode: diskerase.NVMeOpFormatNVM, NSID: uint32(nsid),
		CDW10: diskerase.FormatCDW10(ns, ses), TimeoutMS: nvmeFormatTimeoutMS}
	a.Logf("erase %s NVMe Format namespace %d (%d blocks of %d bytes) ses=%d", name, nsid, ns.Blocks, ns.BlockSize, ses)
	if err := nvmeAdmin(f, &format, nil); err != nil {
		return "", "", fmt.Errorf("NVMe Format: %w", err)
	}
	return diskerase.NVMeMethod(ses), "", nil
}
