package region

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// CheckDeployImage refuses a deploy whose image (the one named, or the
// default when none is) is not uploaded for the machine's architecture,
// with the images that are; otherwise the failure would come minutes later
// from the booted environment. A deploy the lifecycle refuses anyway
// passes here, so that its own refusal is the answer.
func (s *Service) CheckDeployImage(ctx context.Context, actor machine.Actor, systemID string, in machine.Input) error {
	m, err := s.Store.GetMachine(ctx, systemID)
	if err != nil || !machine.CanView(actor, &m) {
		return nil // act answers not-found in words of its own
	}
	in.Actor, in.Now = actor, s.Now()
	o, err := machine.Step(m, in, s.lifecycle(ctx))
	if err != nil {
		return nil
	}
	if _, err := s.imageFor(ctx, o.Machine); !errors.Is(err, ErrNoImage) {
		return err
	}
	rs, err := s.Store.ListBootResources(ctx)
	if err != nil {
		return err
	}
	arch, _, _ := strings.Cut(m.Architecture, "/")
	var have []string
	for _, r := range rs {
		if rarch, _, _ := strings.Cut(r.Architecture, "/"); rarch != arch || !hasComplete(r) {
			continue
		}
		name := r.Name
		if !strings.Contains(name, "/") {
			name = "custom/" + name
		}
		have = append(have, name)
	}
	want := o.Machine.OSystem + "/" + o.Machine.DistroSeries
	if in.OSystem == "" && in.DistroSeries == "" {
		want = "the default " + want + " (none was named)"
	}
	msg := fmt.Sprintf("no image %s is uploaded for %s", want, arch)
	if len(have) == 0 {
		msg += "; there is none for " + arch + " (upload one to boot-resources/)"
	} else {
		msg += "; uploaded for " + arch + ": " + strings.Join(have, ", ") + " (deploy one with osystem=OS distro_series=NAME)"
	}
	return &ValidationError{Field: "distro_series", Err: errors.New(msg)}
}

func hasComplete(r store.BootResource) bool {
	for _, f := range r.Files {
		if f.Complete {
			return true
		}
	}
	return false
}

// NoteImageDeployed records on the image a deploy of m takes that it was
// deployed now (MAAS's last_deployed). A failure is only logged: the
// deploy stands.
func (s *Service) NoteImageDeployed(ctx context.Context, m machine.Machine) {
	f, err := s.imageFor(ctx, m)
	if err == nil {
		err = s.Store.MarkBootResourceDeployed(ctx, f.ResourceID, s.Now())
	}
	if err != nil {
		s.Log.Warn("last_deployed not recorded on the image", "system_id", m.SystemID, "err", err)
	}
}
