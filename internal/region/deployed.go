package region

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// errNotAwaiting skips the end of a deployment for a machine whose image
// is not (or no longer) on its disk waiting to boot.
var errNotAwaiting = errors.New("not waiting for its deployed OS")

// BootedLocal is the rack's word that it answered a machine's network
// boot with a local boot. That shows the firmware was sent to the disk,
// not that an OS came up: it ends the deployment only for an image set
// deployed_at=local_boot (images without cloud-init). Otherwise the
// timeline says the deployment waits for the OS's report.
func (s *Service) BootedLocal(ctx context.Context, systemID string) error {
	m, err := s.Store.GetMachine(ctx, systemID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.LeavesRescueForDisk() {
		return s.leftRescue(ctx, systemID)
	}
	if !m.AwaitsLocalBoot() {
		return nil
	}
	img, _, err := s.findImage(ctx, m)
	if err != nil || img.DeployedAt != machine.DeployedAtLocalBoot {
		// An image removed meanwhile keeps the default: wait for the OS.
		s.record(ctx, m, machine.LevelInfo, "Booting from disk",
			"the rack answered its network boot with a local boot; the deployment ends when the deployed OS reports that it is up")
		return nil
	}
	err = s.endDeployment(ctx, systemID, fmt.Sprintf("deployed at local boot: image %s is set deployed_at=%s and the machine booted from its disk",
		img.Name, machine.DeployedAtLocalBoot))
	if errors.Is(err, errNotAwaiting) || errors.Is(err, store.ErrNotFound) {
		return nil // it moved on meanwhile
	}
	return err
}

// OSReported is the deployed OS's word, with the deployment's token, that
// it is up (cloud-init's phone_home at the end of its first boot): it ends
// the deployment. issued is the status the token was issued for.
func (s *Service) OSReported(ctx context.Context, systemID string, issued machine.Status, how string) error {
	if issued != machine.Deploying {
		return fmt.Errorf("%w: the token of machine %s is for %s, not a deployment", ErrTokenExpired, systemID, issued)
	}
	err := s.endDeployment(ctx, systemID, "the deployed OS reported that it is up ("+how+")")
	if errors.Is(err, errNotAwaiting) {
		return &machine.TransitionError{Status: machine.Deploying, Action: machine.Succeed,
			Reason: "the image is not written yet, so no installed OS can have booted"}
	}
	return err
}

// leftRescue ends a deployed machine's exit from rescue mode: the rack
// sent its network boot to the disk, so it runs its deployed OS again.
func (s *Service) leftRescue(ctx context.Context, systemID string) error {
	before := func(m *machine.Machine) ([]machine.Event, error) {
		if !m.LeavesRescueForDisk() {
			return nil, errNotAwaiting
		}
		return nil, nil
	}
	_, _, err := s.act(ctx, machine.SystemActor, systemID, machine.Input{Action: machine.Succeed,
		Comment: "the machine booted from its disk"}, actOpts{before: before})
	if errors.Is(err, errNotAwaiting) || errors.Is(err, store.ErrNotFound) {
		return nil // it moved on meanwhile
	}
	return err
}

func (s *Service) endDeployment(ctx context.Context, systemID, why string) error {
	before := func(m *machine.Machine) ([]machine.Event, error) {
		if !m.AwaitsLocalBoot() {
			return nil, errNotAwaiting
		}
		return nil, nil
	}
	_, _, err := s.act(ctx, machine.SystemActor, systemID, machine.Input{Action: machine.Succeed, Comment: why}, actOpts{before: before})
	return err
}

func (s *Service) findImage(ctx context.Context, m machine.Machine) (store.BootResource, store.BootResourceFile, error) {
	name := m.OSystem + "/" + m.DistroSeries
	if m.OSystem == "custom" || m.OSystem == "" {
		name = m.DistroSeries
	}
	rs, err := s.Store.ListBootResources(ctx)
	if err != nil {
		return store.BootResource{}, store.BootResourceFile{}, err
	}
	arch, _, _ := strings.Cut(m.Architecture, "/")
	for _, r := range rs {
		rarch, _, _ := strings.Cut(r.Architecture, "/")
		if (r.Name != name && "custom/"+r.Name != name) || rarch != arch {
			continue
		}
		for _, f := range r.Files { // newest first
			if f.Complete {
				return r, f, nil
			}
		}
	}
	return store.BootResource{}, store.BootResourceFile{}, fmt.Errorf("%w: %s for %s is not uploaded (boot-resources/)", ErrNoImage, name, arch)
}
