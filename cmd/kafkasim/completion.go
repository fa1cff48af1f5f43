package main

import (
	"strings"

	"github.com/spf13/cobra"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

// Shell completion (kafkasim completion bash|zsh|fish|powershell) completes
// what the commands take: bundled scenario names besides files, describe's
// kinds, and bug switches for --bugs.

// completeScenarios offers the bundled scenarios' names; the shell adds
// files, since a SCENARIO is either.
func completeScenarios(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, n := range scenarios.BundledNames() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

// completeBugs offers the bug switches the model has; a comma-separated
// list completes its last item.
func completeBugs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, b := range cluster.KnownBugs {
		if strings.HasPrefix(b, last) && !strings.Contains(","+done, ","+b+",") {
			out = append(out, done+b)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// usageWithHelp is a usage error (exit 2) that shows the command's usage
// after the message: a command run without what it needs.
func usageWithHelp(cmd *cobra.Command, msg string) error {
	return usage("%s\n\n%s", msg, strings.TrimRight(cmd.UsageString(), "\n"))
}
