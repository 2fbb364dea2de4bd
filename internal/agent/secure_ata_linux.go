package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/anvilmetal/anvil/internal/diskerase"
)

// sgIOHdr is the kernel's struct sg_io_hdr (88 bytes on 64-bit), the
// argument of SG_IO.
type sgIOHdr struct {
	InterfaceID    int32
	DxferDirection int32
	CmdLen         uint8
	MxSbLen        uint8
	IovecCount     uint16
	DxferLen       uint32
	Dxferp         uintptr
	Cmdp           uintptr
	Sbp            uintptr
	Timeout        uint32
	Flags          uint32
	PackID         int32
	_              [4]byte
	UsrPtr         uintptr
	Status         uint8
	MaskedStatus   uint8
	MsgStatus      uint8
	SbLenWr        uint8
	HostStatus     uint16
	DriverStatus   uint16
	Resid          int32
	Duration       uint32
	Info           uint32
}

const (
	sgIO          = 0x2285
	sgDxferNone   = -1
	sgDxferToDev  = -2
	sgDxferFromDv = -3
)

// ataCommand sends one ATA command through SCSI ATA PASS-THROUGH (16),
// with 512 bytes in (in) or out (out) or no data.
func ataCommand(f *os.File, cmd byte, in, out []byte, timeout time.Duration) error {
	cdb := diskerase.PassThroughCDB(cmd, in != nil, out != nil)
	sense := make([]byte, 32)
	h := sgIOHdr{InterfaceID: 'S', DxferDirection: sgDxferNone, CmdLen: uint8(len(cdb)), MxSbLen: uint8(len(sense)),
		Cmdp: uintptr(unsafe.Pointer(&cdb[0])), Sbp: uintptr(unsafe.Pointer(&sense[0])),
		Timeout: uint32(min(timeout.Milliseconds(), math.MaxUint32))}
	data := in
	if in != nil {
		h.DxferDirection = sgDxferFromDv
	} else if out != nil {
		h.DxferDirection, data = sgDxferToDev, out
	}
	if data != nil {
		h.Dxferp, h.DxferLen = uintptr(unsafe.Pointer(&data[0])), uint32(len(data))
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), sgIO, uintptr(unsafe.Pointer(&h)))
	runtime.KeepAlive(cdb)
	runtime.KeepAlive(sense)
	runtime.KeepAlive(data)
	if errno != 0 {
		return errno
	}
	if h.HostStatus != 0 || h.DriverStatus&^0x08 != 0 { // 0x08: sense data follows
		return fmt.Errorf("SCSI host status %#x driver status %#x", h.HostStatus, h.DriverStatus)
	}
	if err := diskerase.SenseError(sense[:h.SbLenWr]); err != nil {
		return err
	}
	if h.Status != 0 && h.SbLenWr == 0 {
		return fmt.Errorf("SCSI status %#x", h.Status)
	}
	return nil
}

func ataIdentify(f *os.File) (diskerase.ATASecurity, error) {
	buf := make([]byte, diskerase.ATASectorLen)
	if err := ataCommand(f, diskerase.ATAIdentify, buf, nil, 30*time.Second); err != nil {
		return diskerase.ATASecurity{}, err
	}
	return diskerase.ParseATAIdentify(buf)
}

// ataSecureErase runs SECURITY ERASE UNIT on dev when IDENTIFY DEVICE
// says the drive supports it and is not frozen: a temporary user
// password is set (the erase requires one; a successful erase clears it)
// and the erase is sent, enhanced when the drive has that. A failed
// erase disables the password again so the drive is not left locked.
func ataSecureErase(a *Agent, dev, name string) (m diskerase.Method, why string, err error) {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Sprintf("opening %s: %v", dev, err), nil
	}
	defer f.Close()
	sec, err := ataIdentify(f)
	if err != nil {
		return "", fmt.Sprintf("not an ATA disk (IDENTIFY DEVICE: %v)", err), nil
	}
	a.Logf("erase %s ATA %q serial %q security supported=%v enabled=%v locked=%v frozen=%v enhanced=%v erase_time=%s enhanced_time=%s",
		name, sec.Model, sec.Serial, sec.Supported, sec.Enabled, sec.Locked, sec.Frozen, sec.Enhanced, sec.EraseTime, sec.EnhancedEraseTime)
	if ok, why := sec.Usable(); !ok {
		return "", why, nil
	}
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		return "", "", fmt.Errorf("making a password: %w", err)
	}
	pw, err := diskerase.PasswordBlock(hex.EncodeToString(key), false)
	if err != nil {
		return "", "", err
	}
	if err := ataCommand(f, diskerase.ATASecuritySetPassword, nil, pw, 30*time.Second); err != nil {
		return "", fmt.Sprintf("SECURITY SET PASSWORD failed: %v", err), nil
	}
	if after, err := ataIdentify(f); err != nil || !after.Enabled {
		return "", "", errors.Join(errors.New("the password did not enable security"), err, ataDisable(f, pw))
	}
	erase, _ := diskerase.PasswordBlock(hex.EncodeToString(key), sec.Enhanced)
	timeout := sec.EraseTimeout(sec.Enhanced)
	a.Logf("erase %s ATA SECURITY ERASE UNIT enhanced=%v (allowing %s)", name, sec.Enhanced, timeout)
	if err := ataCommand(f, diskerase.ATASecurityErasePrep, nil, nil, 30*time.Second); err != nil {
		return "", "", errors.Join(fmt.Errorf("SECURITY ERASE PREPARE: %w", err), ataDisable(f, pw))
	}
	if err := ataCommand(f, diskerase.ATASecurityEraseUnit, nil, erase, timeout); err != nil {
		return "", "", errors.Join(fmt.Errorf("SECURITY ERASE UNIT: %w", err), ataDisable(f, pw))
	}
	if after, err := ataIdentify(f); err == nil && after.Enabled {
		return "", "", errors.Join(errors.New("security still enabled after the erase"), ataDisable(f, pw))
	}
	return diskerase.ATAMethod(sec.Enhanced), "", nil
}

// ataDisable removes the temporary password after a failed erase.
func ataDisable(f *os.File, pw []byte) error {
	if err := ataCommand(f, diskerase.ATASecurityDisable, nil, pw, 30*time.Second); err != nil {
		return fmt.Errorf("SECURITY DISABLE PASSWORD: %w", err)
	}
	return nil
}
