package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"kafkasim/scenarios"
)

func newScenariosCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenarios list|show|validate",
		Short: "List the bundled scenarios, print one, or validate scenario files without running them",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usage("scenarios: unknown command %q (want list, show or validate)", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list [PATH...]",
		Short: "List scenarios: the bundled ones (by the name kafkasim run takes), or those under PATHs",
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := scenarioFiles(args)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			width := 0
			for _, f := range files {
				width = max(width, len(f.name))
			}
			for _, f := range files {
				s, err := f.load()
				if err != nil {
					fmt.Fprintf(w, "%-*s  INVALID (run scenarios validate)\n", width, f.name)
					continue
				}
				fmt.Fprintf(w, "%-*s  %s\n", width, f.name, oneLine(s.Description, 100))
			}
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "show NAME",
		Short: "Print a bundled scenario's file, to start a scenario of your own from",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageWithHelp(cmd, "scenarios show: name one bundled scenario (kafkasim scenarios list)")
			}
			return nil
		},
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			data, ok := scenarios.BundledSource(args[0])
			if !ok {
				return usage("scenarios show %s: no bundled scenario of that name; the bundled ones: %s", args[0], strings.Join(scenarios.BundledNames(), ", "))
			}
			_, err := cmd.OutOrStdout().Write(data)
			return err
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Validate scenario files (the bundled ones when no PATH is given); exit 2 if any is invalid",
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := scenarioFiles(args)
			if err != nil {
				return err
			}
			bad := 0
			for _, f := range files {
				if _, err := f.load(); err != nil {
					bad++
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ok %s\n", f.name)
			}
			if bad > 0 {
				return usage("%d of %d scenario files are invalid", bad, len(files))
			}
			return nil
		},
	})
	return cmd
}

type scenarioFile struct {
	name     string // as shown
	path     string // on disk, or "" for an embedded one
	embedded string
}

func (f scenarioFile) load() (*scenarios.Scenario, error) {
	if f.path != "" {
		return scenarios.LoadFile(f.path)
	}
	data, err := fs.ReadFile(scenarios.Bundled, f.embedded)
	if err != nil {
		return nil, err
	}
	return scenarios.Parse("scenarios/"+f.embedded, data)
}

// scenarioFiles lists the bundled scenarios, or the YAML files under paths.
func scenarioFiles(paths []string) ([]scenarioFile, error) {
	var out []scenarioFile
	if len(paths) == 0 {
		err := fs.WalkDir(scenarios.Bundled, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isYAML(p) {
				out = append(out, scenarioFile{name: strings.TrimSuffix(p, ".yaml"), embedded: p})
			}
			return err
		})
		return out, err
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, usage("%s: %v", p, unwrapPath(err))
		}
		if !st.IsDir() {
			out = append(out, scenarioFile{name: p, path: p})
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isYAML(q) {
				found = append(found, q)
			}
			return err
		})
		if err != nil {
			return nil, usage("%s: %v", p, err)
		}
		sort.Strings(found)
		for _, q := range found {
			out = append(out, scenarioFile{name: q, path: q})
		}
	}
	return out, nil
}

func isYAML(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}
