package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "kafkasim",
		Short: "A deterministic simulator of an Apache Kafka 4.x cluster",
		Long: `kafkasim runs a simulated Kafka cluster (KRaft controllers, brokers, producers,
consumers) over a simulated network and disks that fail, driven by one seed:
the same seed gives the same run, every time.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage("%v", err) })
	root.AddCommand(newRunCommand(), newReplayCommand(), newFuzzCommand(), newSweepCommand(), newCheckCommand(), newDescribeCommand(), newScenariosCommand(), newDemoCommand(), newVersionCommand())
	return root
}
