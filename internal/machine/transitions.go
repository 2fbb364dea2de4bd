package machine

// transitions is MAAS's table of allowed status changes (node_status.py),
// plus Broken→Deployed, which mark_fixed takes for a machine that was broken
// while deployed. Every status change a Step makes is checked against it, so a
// bug in an action can never put a machine somewhere MAAS clients don't expect.
var transitions = map[Status][]Status{
	New:                      {Commissioning, Missing, Ready, Retired, Broken, EnteringRescueMode},
	Commissioning:            {FailedCommissioning, Ready, Retired, Missing, New, Broken, Testing},
	FailedCommissioning:      {Commissioning, Missing, Retired, Broken, EnteringRescueMode, Testing},
	Ready:                    {EnteringRescueMode, Commissioning, Allocated, Reserved, Retired, Missing, Broken, Testing},
	Reserved:                 {Ready, Allocated, Retired, Missing, Broken, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Allocated:                {Ready, Retired, Missing, Broken, Deploying, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Releasing:                {Allocated, Reserved, Deployed, Ready, Broken, Missing, FailedDeployment, FailedDiskErasing, FailedReleasing, DiskErasing},
	Deploying:                {Allocated, Missing, Broken, FailedDeployment, Deployed, Ready, DiskErasing, Releasing},
	FailedDeployment:         {Allocated, Missing, Broken, Ready, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Deployed:                 {Allocated, Missing, Broken, Ready, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Missing:                  {New, Ready, Allocated, Commissioning, Broken, EnteringRescueMode, Testing},
	Retired:                  {New, Ready, Missing, Broken, EnteringRescueMode, Testing},
	Broken:                   {Commissioning, Ready, Deployed, DiskErasing, Releasing, EnteringRescueMode, Testing},
	FailedReleasing:          {Releasing, DiskErasing, Ready, Broken, Testing},
	DiskErasing:              {Broken, DiskErasing, FailedDiskErasing, Ready, Releasing},
	FailedDiskErasing:        {DiskErasing, Releasing, Broken, Allocated, Ready, EnteringRescueMode, Testing},
	EnteringRescueMode:       {Ready, Broken, Deployed, RescueMode, FailedEnteringRescueMode, ExitingRescueMode},
	FailedEnteringRescueMode: {Broken, EnteringRescueMode, ExitingRescueMode, Testing},
	RescueMode:               {Broken, ExitingRescueMode, Testing},
	ExitingRescueMode: {New, Broken, FailedCommissioning, Ready, Reserved, Allocated, FailedDeployment,
		Deployed, Missing, Retired, FailedReleasing, FailedDiskErasing, RescueMode,
		FailedEnteringRescueMode, FailedExitingRescueMode, FailedTesting},
	FailedExitingRescueMode: {Broken, ExitingRescueMode, Testing},
	Testing: {Broken, New, Ready, Reserved, Allocated, Deployed, Commissioning, FailedDeployment,
		Missing, Retired, FailedReleasing, FailedDiskErasing, FailedEnteringRescueMode,
		FailedExitingRescueMode, FailedTesting},
	FailedTesting: {Commissioning, Broken, Missing, EnteringRescueMode, Testing, Ready, Deployed},
}

// CanTransition reports whether the table allows from→to.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}
