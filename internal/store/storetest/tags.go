package storetest

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

func testTags(t *testing.T, s store.Store) {
	ctx := t.Context()
	gpu, err := s.CreateTag(ctx, store.Tag{Name: "gpu", Comment: "has a GPU", Definition: "//node", KernelOpts: "nomodeset"})
	if err != nil || gpu.ID == 0 {
		t.Fatalf("CreateTag = %+v, %v", gpu, err)
	}
	if got, err := s.GetTag(ctx, "gpu"); err != nil || got != gpu {
		t.Fatalf("GetTag = %+v, %v", got, err)
	}
	_, err = s.CreateTag(ctx, store.Tag{Name: "gpu"})
	wantConflict(t, err, "tag name gpu", "")
	for _, bad := range []string{"", "has space", "semi;colon", "dot.ted", "ünï"} {
		if _, err := s.CreateTag(ctx, store.Tag{Name: bad}); err == nil {
			t.Errorf("tag name %q was accepted", bad)
		}
	}
	if _, err := s.CreateTag(ctx, store.Tag{Name: "A_tag-2"}); err != nil {
		t.Fatal(err)
	}
	tags, err := s.ListTags(ctx)
	if err != nil || len(tags) != 2 || tags[0].Name != "A_tag-2" || tags[1] != gpu {
		t.Fatalf("ListTags = %+v, %v", tags, err)
	}

	// Rename, keeping links.
	m := newMachine("node1")
	m.Tags = []string{"gpu"}
	create(t, s, m)
	got, err := s.UpdateTag(ctx, "gpu", store.Tag{Name: "graphics", Comment: "renamed"})
	if err != nil || got.ID != gpu.ID || got.Name != "graphics" || got.Comment != "renamed" {
		t.Fatalf("UpdateTag = %+v, %v", got, err)
	}
	equalStrings(t, "tags after rename", get(t, s, m.SystemID).Tags, []string{"graphics"})
	_, err = s.UpdateTag(ctx, "graphics", store.Tag{Name: "A_tag-2"})
	wantConflict(t, err, "tag name A_tag-2", "")
	if _, err := s.UpdateTag(ctx, "graphics", store.Tag{Name: "bad name"}); err == nil {
		t.Fatal("rename to an invalid name was accepted")
	}
	_, err = s.UpdateTag(ctx, "nosuch", store.Tag{Comment: "x"})
	wantErrIs(t, err, store.ErrNotFound)
	_, err = s.GetTag(ctx, "gpu")
	wantErrIs(t, err, store.ErrNotFound)

	// Delete removes the links, not the machines.
	if err := s.DeleteTag(ctx, "graphics"); err != nil {
		t.Fatal(err)
	}
	if g := get(t, s, m.SystemID); len(g.Tags) != 0 {
		t.Fatalf("machine still tagged %v", g.Tags)
	}
	wantErrIs(t, s.DeleteTag(ctx, "graphics"), store.ErrNotFound)
}

func testTagMachines(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, n := range []string{"gpu", "ssd"} {
		if _, err := s.CreateTag(ctx, store.Tag{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	a := create(t, s, newMachine("a"))
	b := create(t, s, newMachine("b"))
	c := create(t, s, newMachine("c"))
	tagged := func(tag string) []string {
		return hostnames(list(t, s, store.MachineFilter{Tags: []string{tag}}))
	}

	if err := s.TagMachines(ctx, "gpu", []string{a.SystemID, b.SystemID}, nil); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "gpu", tagged("gpu"), []string{"a", "b"})
	// Adding again is a no-op; add and remove in one call.
	if err := s.TagMachines(ctx, "gpu", []string{a.SystemID, c.SystemID, c.SystemID}, []string{b.SystemID}); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "gpu", tagged("gpu"), []string{"a", "c"})
	if err := s.TagMachines(ctx, "ssd", []string{a.SystemID}, nil); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "a's tags", get(t, s, a.SystemID).Tags, []string{"gpu", "ssd"})

	// Unknown tag or machine: nothing changes.
	wantErrIs(t, s.TagMachines(ctx, "nosuch", []string{a.SystemID}, nil), store.ErrNotFound)
	err := s.TagMachines(ctx, "gpu", []string{b.SystemID, "nosuch"}, []string{a.SystemID})
	wantErrIs(t, err, store.ErrNotFound)
	err = s.TagMachines(ctx, "gpu", nil, []string{a.SystemID, "nosuch"})
	wantErrIs(t, err, store.ErrNotFound)
	equalStrings(t, "gpu after failures", tagged("gpu"), []string{"a", "c"})

	// Removing a link that is not there is fine too.
	if err := s.TagMachines(ctx, "ssd", nil, []string{b.SystemID, a.SystemID}); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "ssd", tagged("ssd"), nil)
}
