package storetest

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
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

func testScriptSets(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := newMachine("tested")
	create(t, s, m)
	if _, err := s.CreateScriptSet(ctx, store.ScriptSet{SystemID: "nosuch", ResultType: scripts.Testing}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("set of an unknown machine: %v", err)
	}
	set, err := s.CreateScriptSet(ctx, store.ScriptSet{SystemID: m.SystemID, ResultType: scripts.Testing, Results: []store.ScriptResult{
		{Name: "disk", HardwareType: scripts.Storage, Instance: "sda", Parameters: map[string]any{"disk": map[string]any{"type": "storage"}}},
		{Name: "disk", HardwareType: scripts.Storage, Instance: "sdb"},
	}})
	if err != nil || set.ID == 0 || set.Results[1].ID == 0 {
		t.Fatalf("CreateScriptSet = %+v, %v", set, err)
	}
	other := newMachine("other")
	create(t, s, other)
	if _, err := s.UpdateScriptResult(ctx, other.SystemID, set.Results[0].ID, func(*store.ScriptResult) error { return nil }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another machine's result: %v", err)
	}
	exit := 1
	s0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got, err := s.UpdateScriptResult(ctx, m.SystemID, set.Results[0].ID, func(r *store.ScriptResult) error {
		r.Status, r.ExitStatus, r.Output, r.Started, r.Ended = scripts.Failed, &exit, []byte("bad disk\n"), s0, s0.Add(3*time.Second)
		return nil
	})
	if err != nil || got.Status != scripts.Failed {
		t.Fatalf("UpdateScriptResult = %+v, %v", got, err)
	}
	sets, err := s.ListScriptSets(ctx, m.SystemID)
	if err != nil || len(sets) != 1 || len(sets[0].Results) != 2 {
		t.Fatalf("ListScriptSets = %+v, %v", sets, err)
	}
	r := sets[0].Results[0]
	if r.Instance != "sda" || *r.ExitStatus != 1 || string(r.Output) != "bad disk\n" || r.Ended.Sub(r.Started) != 3*time.Second || r.Parameters["disk"] == nil {
		t.Fatalf("stored result %+v", r)
	}
	if sets[0].Results[1].ExitStatus != nil || !sets[0].Results[1].Started.IsZero() {
		t.Fatalf("untouched result %+v", sets[0].Results[1])
	}
}

func testScriptSummaryKept(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("summary"))
	want := machine.ScriptSummary{Known: true, Testing: machine.ScriptFailed, Storage: machine.ScriptFailed, CPU: machine.NoScripts}
	if _, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Scripts = want
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetMachine(ctx, m.SystemID); err != nil || got.Scripts != want {
		t.Fatalf("GetMachine scripts = %+v, %v", got.Scripts, err)
	}
}
