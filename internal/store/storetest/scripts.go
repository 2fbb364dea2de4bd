package storetest

import (
	"errors"
	"strconv"
	"testing"

	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

func testScripts(t *testing.T, s store.Store) {
	ctx := t.Context()
	meta := scripts.Script{Name: "disk-check", Type: scripts.Testing, HardwareType: scripts.Storage, Tags: []string{"storage"}}
	sc, err := s.CreateScript(ctx, store.Script{Meta: meta}, []byte("#!/bin/sh\necho 1\n"), "first")
	if err != nil || sc.ID == 0 || len(sc.Versions) != 1 || sc.Versions[0].Comment != "first" {
		t.Fatalf("CreateScript = %+v, %v", sc, err)
	}
	if _, err := s.CreateScript(ctx, store.Script{Meta: meta}, []byte("#!/bin/sh\n"), ""); err == nil {
		t.Fatal("a second script of the same name was stored")
	}
	byID, err := s.GetScript(ctx, strconv.FormatInt(sc.ID, 10))
	if err != nil || byID.Meta.Name != "disk-check" || byID.Meta.HardwareType != scripts.Storage {
		t.Fatalf("GetScript by id = %+v, %v", byID, err)
	}
	meta.Title = "Disk check"
	up, err := s.UpdateScript(ctx, sc.ID, meta, []byte("#!/bin/sh\necho 2\n"), "second")
	if err != nil || len(up.Versions) != 2 || string(up.Versions[0].Data) != "#!/bin/sh\necho 2\n" || up.Meta.Title != "Disk check" {
		t.Fatalf("UpdateScript = %+v, %v", up, err)
	}
	if _, err := s.RevertScript(ctx, sc.ID, 1<<40); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RevertScript to no revision = %v", err)
	}
	rev, err := s.RevertScript(ctx, sc.ID, up.Versions[1].ID)
	if err != nil || len(rev.Versions) != 1 || string(rev.Versions[0].Data) != "#!/bin/sh\necho 1\n" {
		t.Fatalf("RevertScript = %+v, %v", rev, err)
	}
	b := scripts.Builtins()[0]
	if err := s.EnsureScript(ctx, b.Script, b.Text); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureScript(ctx, b.Script, b.Text); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListScripts(ctx)
	if err != nil || len(all) != 2 || !all[0].Default || all[0].Meta.Name != b.Name {
		t.Fatalf("ListScripts = %+v, %v", all, err)
	}
	if err := s.DeleteScript(ctx, sc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetScript(ctx, "disk-check"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted script: %v", err)
	}
}
