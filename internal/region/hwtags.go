package region

import (
	"context"
	"fmt"

	"github.com/anvilmetal/anvil/internal/hwtags"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/store"
)

// hardwareDetails is the machine's newest lshw XML (the stdout of the
// newest passed 00-maas-01-lshw result); nil when it has none.
func (s *Service) hardwareDetails(ctx context.Context, systemID string) ([]byte, error) {
	sets, err := s.Store.ListScriptSets(ctx, systemID)
	if err != nil {
		return nil, err
	}
	for _, set := range sets { // newest first
		for _, r := range set.Results {
			if r.Name == scripts.LSHW && r.Status == scripts.Passed && len(r.Stdout) > 0 {
				return r.Stdout, nil
			}
		}
	}
	return nil, nil
}

// matches evaluates the tags over one machine's details: those it
// matches and those it does not. A machine without details matches none.
func matches(lshw []byte, tags []store.Tag) (in, out []string) {
	var doc *hwtags.Doc
	if lshw != nil {
		doc, _ = hwtags.Parse(lshw) // unreadable details match nothing
	}
	for _, t := range tags {
		ok := false
		if doc != nil {
			ok, _ = doc.Match(t.Definition)
		}
		if ok {
			in = append(in, t.Name)
		} else {
			out = append(out, t.Name)
		}
	}
	return in, out
}

// RetagMachine evaluates every tag with a definition over the machine's
// hardware details and adds or removes the machine accordingly, as MAAS
// does when a machine's commissioning ends.
func (s *Service) RetagMachine(ctx context.Context, systemID string) error {
	all, err := s.Store.ListTags(ctx)
	if err != nil {
		return err
	}
	var defined []store.Tag
	for _, t := range all {
		if t.Definition != "" {
			defined = append(defined, t)
		}
	}
	if len(defined) == 0 {
		return nil
	}
	lshw, err := s.hardwareDetails(ctx, systemID)
	if err != nil {
		return err
	}
	in, out := matches(lshw, defined)
	for _, t := range in {
		if err := s.Store.TagMachines(ctx, t, []string{systemID}, nil); err != nil {
			return fmt.Errorf("tag %s: %w", t, err)
		}
	}
	for _, t := range out {
		if err := s.Store.TagMachines(ctx, t, nil, []string{systemID}); err != nil {
			return fmt.Errorf("tag %s: %w", t, err)
		}
	}
	s.Hub.Notify()
	return nil
}

// RebuildTag evaluates a tag's definition over every machine, as MAAS's
// rebuild does (here at once, not later). A tag without a definition is
// left as it is.
func (s *Service) RebuildTag(ctx context.Context, t store.Tag) (added, removed int, err error) {
	if t.Definition == "" {
		return 0, 0, nil
	}
	vs, err := s.Store.ListMachineVersions(ctx, store.MachineFilter{})
	if err != nil {
		return 0, 0, err
	}
	var add, remove []string
	for _, v := range vs {
		lshw, err := s.hardwareDetails(ctx, v.SystemID)
		if err != nil {
			return 0, 0, err
		}
		if in, _ := matches(lshw, []store.Tag{t}); len(in) > 0 {
			add = append(add, v.SystemID)
		} else {
			remove = append(remove, v.SystemID)
		}
	}
	if len(add)+len(remove) > 0 {
		if err := s.Store.TagMachines(ctx, t.Name, add, remove); err != nil {
			return 0, 0, fmt.Errorf("rebuild tag %s: %w", t.Name, err)
		}
	}
	s.Hub.Notify()
	return len(add), len(remove), nil
}
