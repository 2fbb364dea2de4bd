package agent

// The layout VM test is in package agent_test: it imports the
// environment's builder, which imports this package.
var (
	InstallLayout = installLayout
	LocalDisks    = localDisks
	MatchDisks    = matchDisks
	BootFirmware  = bootFirmware
	SeedFilesFor  = seedFiles
	DescribeDisks = describeDisks
)

type LayoutJob = layoutJob
