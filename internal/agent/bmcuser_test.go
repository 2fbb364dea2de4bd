package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bougou/go-ipmi/pkg/command/app"
)

// fakeUsers is a BMC's user table.
type fakeUsers struct {
	names    map[uint8]string
	max      uint8
	pw       map[uint8]string
	access   []app.SetUserAccessRequest
	enabled  []uint8
	failName bool
}

func (f *fakeUsers) GetUserAccess(_ context.Context, ch, id uint8) (*app.GetUserAccessResponse, error) {
	return &app.GetUserAccessResponse{MaxUsersIDCount: f.max}, nil
}

func (f *fakeUsers) GetUsername(_ context.Context, id uint8) (*app.GetUsernameResponse, error) {
	if id > f.max {
		return nil, errors.New("invalid user id")
	}
	return &app.GetUsernameResponse{Username: f.names[id]}, nil
}

func (f *fakeUsers) SetUsername(_ context.Context, id uint8, name string) (*app.SetUsernameResponse, error) {
	if f.failName {
		return nil, errors.New("completion code 0xcc")
	}
	f.names[id] = name
	return &app.SetUsernameResponse{}, nil
}

func (f *fakeUsers) SetUserPassword(_ context.Context, id uint8, pw string, stored20 bool) (*app.SetUserPasswordResponse, error) {
	if stored20 != (len(pw) > 16) {
		return nil, errors.New("wrong password form")
	}
	f.pw[id] = pw
	return &app.SetUserPasswordResponse{}, nil
}

func (f *fakeUsers) SetUserAccess(_ context.Context, r *app.SetUserAccessRequest) (*app.SetUserAccessResponse, error) {
	f.access = append(f.access, *r)
	return &app.SetUserAccessResponse{}, nil
}

func (f *fakeUsers) EnableUser(_ context.Context, id uint8) error {
	f.enabled = append(f.enabled, id)
	return nil
}

func TestEnsureBMCUser(t *testing.T) {
	ctx := context.Background()
	// A free slot after the vendor's own users; user 1 is never taken.
	f := &fakeUsers{max: 10, names: map[uint8]string{2: "ADMIN", 3: "root"}, pw: map[uint8]string{}}
	id, err := ensureBMCUser(ctx, f, 1, "anvil", "p4ssw0rdp4ssw0rd")
	if err != nil || id != 4 || f.names[4] != "anvil" || f.pw[4] != "p4ssw0rdp4ssw0rd" {
		t.Fatalf("first enlistment: id %d, %v; names %v", id, err, f.names)
	}
	if len(f.access) != 1 || f.access[0] != (app.SetUserAccessRequest{EnableChanging: true, EnableLinkAuth: true, EnableIPMIMessaging: true,
		ChannelNumber: 1, UserID: 4, MaxPrivLevel: privAdministrator}) || len(f.enabled) != 1 || f.enabled[0] != 4 {
		t.Fatalf("access %+v, enabled %v", f.access, f.enabled)
	}
	// Enlisting again takes the same slot, with a new password.
	id, err = ensureBMCUser(ctx, f, 1, "anvil", "another-password-20b")
	if err != nil || id != 4 || f.pw[4] != "another-password-20b" {
		t.Fatalf("second enlistment: id %d, %v", id, err)
	}
	// No free slot.
	full := &fakeUsers{max: 3, names: map[uint8]string{2: "ADMIN", 3: "root"}, pw: map[uint8]string{}}
	if _, err := ensureBMCUser(ctx, full, 1, "anvil", "x"); err == nil || !strings.Contains(err.Error(), "no free user slot") {
		t.Fatalf("full table: %v", err)
	}
	// A BMC refusing the name: the error says which step.
	bad := &fakeUsers{max: 5, names: map[uint8]string{}, pw: map[uint8]string{}, failName: true}
	if _, err := ensureBMCUser(ctx, bad, 1, "anvil", "x"); err == nil || !strings.Contains(err.Error(), "set user 2 name") {
		t.Fatalf("refused name: %v", err)
	}
}

func TestNewBMCPassword(t *testing.T) {
	a, b := NewBMCPassword(), NewBMCPassword()
	if len(a) != BMCPasswordLen || a == b || strings.Trim(a, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") != "" {
		t.Fatalf("passwords %q %q", a, b)
	}
}
