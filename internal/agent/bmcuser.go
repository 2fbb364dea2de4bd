package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/app"
)

// BMC user creation during enlistment: as MAAS does, the environment gives
// the BMC a user of Anvil's own with a fresh password, in-band (no
// credentials needed on the host interface), so that a machine that
// enlisted by itself can be power-managed at once.

// BMCPasswordLen is 16: the longest password every IPMI 1.5 and 2.0 BMC
// takes without the 20-byte form.
const BMCPasswordLen = 16

// privAdministrator is the IPMI privilege level chassis control needs.
const privAdministrator = 4

// NewBMCPassword returns a random password of BMCPasswordLen letters and
// digits (no symbols: some BMCs refuse them).
func NewBMCPassword() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, BMCPasswordLen)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// userClient is the part of the IPMI client that manages users.
type userClient interface {
	GetUserAccess(ctx context.Context, ch, id uint8) (*app.GetUserAccessResponse, error)
	GetUsername(ctx context.Context, id uint8) (*app.GetUsernameResponse, error)
	SetUsername(ctx context.Context, id uint8, name string) (*app.SetUsernameResponse, error)
	SetUserPassword(ctx context.Context, id uint8, pw string, stored20 bool) (*app.SetUserPasswordResponse, error)
	SetUserAccess(ctx context.Context, r *app.SetUserAccessRequest) (*app.SetUserAccessResponse, error)
	EnableUser(ctx context.Context, id uint8) error
}

// ensureBMCUser makes user name on channel ch an enabled administrator with
// password pw: the slot that already has the name (an earlier enlistment
// of this machine), else the first empty one. User 1 (the anonymous user)
// is never touched.
func ensureBMCUser(ctx context.Context, c userClient, ch uint8, name, pw string) (uint8, error) {
	acc, err := c.GetUserAccess(ctx, ch, 1)
	if err != nil {
		return 0, fmt.Errorf("get user access: %w", err)
	}
	var id, free uint8
	for i := uint8(2); i <= acc.MaxUsersIDCount && i != 0; i++ {
		u, err := c.GetUsername(ctx, i)
		switch {
		case err != nil:
			continue // an invalid slot on some BMCs
		case u.Username == name:
			id = i
		case u.Username == "" && free == 0:
			free = i
		}
		if id != 0 {
			break
		}
	}
	if id == 0 {
		if free == 0 {
			return 0, fmt.Errorf("no free user slot among %d", acc.MaxUsersIDCount)
		}
		id = free
		if _, err := c.SetUsername(ctx, id, name); err != nil {
			return 0, fmt.Errorf("set user %d name: %w", id, err)
		}
	}
	if _, err := c.SetUserPassword(ctx, id, pw, len(pw) > 16); err != nil {
		return 0, fmt.Errorf("set user %d password: %w", id, err)
	}
	if _, err := c.SetUserAccess(ctx, &app.SetUserAccessRequest{
		EnableChanging: true, EnableLinkAuth: true, EnableIPMIMessaging: true,
		ChannelNumber: ch, UserID: id, MaxPrivLevel: privAdministrator,
	}); err != nil {
		return 0, fmt.Errorf("set user %d access on channel %d: %w", id, ch, err)
	}
	if err := c.EnableUser(ctx, id); err != nil {
		return 0, fmt.Errorf("enable user %d: %w", id, err)
	}
	return id, nil
}

// CreateBMCUser gives the machine's BMC the user name with password pw on
// its LAN channel, in-band.
func (h *Host) CreateBMCUser(ctx context.Context, name, pw string) error {
	if name == "" || len(name) > 16 || len(pw) == 0 || len(pw) > 20 {
		return errors.New("a BMC user name of 1 to 16 characters and a password of 1 to 20 are required")
	}
	t := h.BMCTimeout
	if t == 0 {
		t = 5 * time.Second
	}
	return withOpenIPMI(ctx, 2*t, func(ctx context.Context, c *client.Client) error {
		_, ch, err := readLAN(ctx, c)
		if err != nil {
			return err
		}
		_, err = ensureBMCUser(ctx, c, ch, name, pw)
		return err
	})
}
