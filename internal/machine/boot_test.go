package machine

import "testing"

func TestPurposeOfEveryStatus(t *testing.T) {
	want := map[Status]BootPurpose{
		New: BootEphemeral, Commissioning: BootEphemeral, FailedCommissioning: BootPowerOff,
		Missing: BootPowerOff, Ready: BootPowerOff, Reserved: BootPowerOff, Deployed: BootLocal,
		Retired: BootPowerOff, Broken: BootPowerOff, Deploying: BootInstall, Allocated: BootPowerOff,
		FailedDeployment: BootPowerOff, Releasing: BootEphemeral, FailedReleasing: BootPowerOff,
		DiskErasing: BootEphemeral, FailedDiskErasing: BootPowerOff, RescueMode: BootEphemeral,
		EnteringRescueMode: BootEphemeral, FailedEnteringRescueMode: BootPowerOff,
		ExitingRescueMode: BootPowerOff, FailedExitingRescueMode: BootPowerOff,
		Testing: BootEphemeral, FailedTesting: BootPowerOff,
	}
	if len(want) != len(AllStatuses) {
		t.Fatalf("table covers %d of %d statuses", len(want), len(AllStatuses))
	}
	for _, s := range AllStatuses {
		if got := PurposeOf(s); got != want[s] {
			t.Errorf("%s: %s, want %s", s, got, want[s])
		}
	}
}
