package region

import (
	"context"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/powerroute"
)

// noRack says whether err is a power request refused because no live
// rack reaches the machine's BMC.
func noRack(err error) bool {
	var e *powerroute.NoRackError
	return errors.As(err, &e)
}

// noteNoRack records on the machine, as MAAS does when no rack controller
// can access a BMC, that an action was refused for want of a rack; the
// action itself changed nothing.
func (s *Service) noteNoRack(ctx context.Context, systemID, action string, err error) {
	if !noRack(err) {
		return
	}
	m, gerr := s.Store.GetMachine(ctx, systemID)
	if gerr != nil {
		return
	}
	ev := machine.Event{SystemID: m.SystemID, Hostname: m.Hostname, Type: "Power failed", Level: machine.LevelError,
		Description: fmt.Sprintf("%s refused: %v", action, err), Created: s.Now()}
	if aerr := s.Store.AppendEvents(ctx, ev); aerr != nil {
		s.Log.Warn("record refused power action", "system_id", systemID, "err", aerr)
		return
	}
	s.Hub.Notify()
}
