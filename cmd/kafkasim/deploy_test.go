package main

// The deployment files (Dockerfile, .dockerignore, deploy/kubernetes/*.yaml,
// .github/workflows/*.yml, docs/scale.md) are checked here, offline: each is
// parsed, its structure asserted (an Indexed Job's completions against the N
// of its --shard, the shard index from the completion index, the --out path
// on the mounted results volume, the workflow's matrix against its --shard
// N), and every kafkasim command line in them is parsed by the command line
// itself (the subcommand found, its flags and arguments accepted; nothing
// run). No cluster, docker engine or GitHub runner is needed.
//
// The sweep's files use `kafkasim sweep --shard K/N` and `kafkasim sweep
// merge`: TestSweepDeployCommands checks them apart, so that it alone fails
// where those commands are missing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"kafkasim/scenarios"
)

const (
	deployDir = "../../deploy/kubernetes"
	// The campaign docs/scale.md walks through and fuzz-job.yaml runs.
	campaignRuns = 1_000_000
	// The results volume's claim, as every manifest names it.
	resultsClaim = "kafkasim-results"
	// The annotation the Job controller sets to a pod's completion index.
	completionIndexPath = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// checkCommandLine parses a kafkasim command line (without "kafkasim") as
// the program would, without running it: the subcommand must exist, its
// flags parse, its positional arguments satisfy it, and a --shard K/N is
// well formed. It returns the command and its parsed flags.
func checkCommandLine(t *testing.T, where string, args []string) *cobra.Command {
	t.Helper()
	root := newRootCommand(io.Discard, io.Discard)
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		t.Errorf("%s: kafkasim %s: no such subcommand (%v)", where, strings.Join(args, " "), err)
		return nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: kafkasim %s: %v", where, strings.Join(args, " "), err)
		return nil
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("%s: kafkasim %s: %v", where, strings.Join(args, " "), err)
		return nil
	}
	if f := cmd.Flags().Lookup("shard"); f != nil && f.Changed {
		if _, _, ok := parseShard(f.Value.String()); !ok {
			t.Errorf("%s: kafkasim %s: --shard %q: want K/N with 0 <= K < N", where, strings.Join(args, " "), f.Value.String())
		}
	}
	return cmd
}

// parseShard reads K/N as fuzz --shard does.
func parseShard(s string) (k, n int, ok bool) {
	ks, ns, found := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	return k, n, found && err1 == nil && err2 == nil && n >= 1 && k >= 0 && k < n
}

func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
		return f.Value.String()
	}
	return ""
}

// The subset of the Kubernetes API the manifests use, decoded strictly: a
// misspelt or misplaced field fails the test, as the API server would
// refuse it.
type k8sMeta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type k8sJob struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	Spec       struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          *int   `yaml:"completions"`
		Parallelism          *int   `yaml:"parallelism"`
		BackoffLimit         *int   `yaml:"backoffLimit"`
		BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
		MaxFailedIndexes     *int   `yaml:"maxFailedIndexes"`
		PodFailurePolicy     *struct {
			Rules []k8sFailureRule `yaml:"rules"`
		} `yaml:"podFailurePolicy"`
		Template struct {
			Metadata k8sMeta    `yaml:"metadata"`
			Spec     k8sPodSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sPod struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   k8sMeta    `yaml:"metadata"`
	Spec       k8sPodSpec `yaml:"spec"`
}

type k8sFailureRule struct {
	Action      string `yaml:"action"`
	OnExitCodes *struct {
		ContainerName string  `yaml:"containerName"`
		Operator      string  `yaml:"operator"`
		Values        []int32 `yaml:"values"`
	} `yaml:"onExitCodes"`
	OnPodConditions []struct {
		Type   string `yaml:"type"`
		Status string `yaml:"status"`
	} `yaml:"onPodConditions"`
}

type k8sPodSpec struct {
	RestartPolicy                 string `yaml:"restartPolicy"`
	TerminationGracePeriodSeconds *int   `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               *struct {
		RunAsNonRoot   *bool `yaml:"runAsNonRoot"`
		RunAsUser      *int  `yaml:"runAsUser"`
		RunAsGroup     *int  `yaml:"runAsGroup"`
		FSGroup        *int  `yaml:"fsGroup"`
		SeccompProfile *struct {
			Type string `yaml:"type"`
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Containers []k8sContainer `yaml:"containers"`
	Volumes    []struct {
		Name                  string `yaml:"name"`
		PersistentVolumeClaim *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
		EmptyDir *struct{} `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext *struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		Capabilities             *struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

// decodeStrict decodes the one YAML document of a file into v, refusing
// unknown fields and a second document.
func decodeStrict(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var more any
	if err := dec.Decode(&more); err != io.EOF {
		t.Fatalf("%s: want one document (apply the steps one at a time: docs/scale.md)", file)
	}
}

func loadJob(t *testing.T, name string) *k8sJob {
	t.Helper()
	var j k8sJob
	decodeStrict(t, filepath.Join(deployDir, name), &j)
	if j.APIVersion != "batch/v1" || j.Kind != "Job" {
		t.Fatalf("%s: %s %s, want a batch/v1 Job", name, j.APIVersion, j.Kind)
	}
	checkPodSpec(t, name, &j.Spec.Template.Spec)
	return &j
}

var quantity = regexp.MustCompile(`^([0-9]+)(m|Ki|Mi|Gi)?$`)

// bytesOf reads a memory quantity (or GOMEMLIMIT's MiB/GiB) in bytes.
func bytesOf(t *testing.T, where, q string) int64 {
	t.Helper()
	q = strings.TrimSuffix(q, "B")
	m := quantity.FindStringSubmatch(q)
	if m == nil || m[2] == "m" {
		t.Fatalf("%s: memory %q: want a number of bytes, Ki, Mi or Gi", where, q)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n << map[string]int{"": 0, "Ki": 10, "Mi": 20, "Gi": 30}[m[2]]
}

// checkPodSpec asserts what every pod here needs: a restart policy the
// Job's failure policy allows, the image's nonroot user, resources that
// parse with requests under limits, and every mount backed by a volume.
func checkPodSpec(t *testing.T, where string, p *k8sPodSpec) {
	t.Helper()
	if p.RestartPolicy != "Never" {
		t.Errorf("%s: restartPolicy %q: want Never (a pod failure policy requires it; a failed shard is the Job's to retry)", where, p.RestartPolicy)
	}
	if sc := p.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 65532 || sc.FSGroup == nil || *sc.FSGroup != 65532 {
		t.Errorf("%s: want runAsUser and fsGroup 65532, the image's nonroot user, so that it may write the results volume", where)
	}
	volumes := map[string]bool{}
	for _, v := range p.Volumes {
		volumes[v.Name] = true
	}
	if len(p.Containers) != 1 {
		t.Fatalf("%s: want one container, got %d", where, len(p.Containers))
	}
	for _, c := range p.Containers {
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("%s: mount %s: no volume of that name", where, m.Name)
			}
		}
		for _, kind := range []string{"cpu", "memory"} {
			for _, q := range []string{c.Resources.Requests[kind], c.Resources.Limits[kind]} {
				if q != "" && !quantity.MatchString(q) {
					t.Errorf("%s: %s %q: not a quantity this test reads", where, kind, q)
				}
			}
		}
		req, lim := c.Resources.Requests["memory"], c.Resources.Limits["memory"]
		if req == "" || lim == "" {
			t.Errorf("%s: want a memory request and limit", where)
			continue
		}
		if bytesOf(t, where, req) > bytesOf(t, where, lim) {
			t.Errorf("%s: memory request %s above its limit %s", where, req, lim)
		}
		for _, e := range c.Env {
			if e.Name == "GOMEMLIMIT" && bytesOf(t, where, e.Value) >= bytesOf(t, where, lim) {
				t.Errorf("%s: GOMEMLIMIT %s must stay under the memory limit %s", where, e.Value, lim)
			}
		}
	}
}

// volumeAt returns the volume mounted at or above dir in the container.
func volumeAt(j *k8sJob, c *k8sContainer, dir string) (claim, configMap string, ok bool) {
	for _, m := range c.VolumeMounts {
		if dir != m.MountPath && !strings.HasPrefix(dir, m.MountPath+"/") {
			continue
		}
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.Name != m.Name {
				continue
			}
			if v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName, "", true
			}
			if v.ConfigMap != nil {
				return "", v.ConfigMap.Name, true
			}
		}
	}
	return "", "", false
}

// shardedJob is what checkShardedJob found in an Indexed Job.
type shardedJob struct {
	n      int
	out    string // --out with the shard index as "K"
	image  string
	args   []string // args with the shard index as "K"
	expand func(index int) []string
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkShardedJob asserts an Indexed Job's sharding: completions N, the
// shard index from the completion index, --shard INDEX/N, --out on the
// results volume with the index in it, and the failure policy that keeps
// found failures from being retried. Every index's command line is then
// parsed (0 and N-1, the extremes) with the Kubernetes $(VAR) expansion.
func checkShardedJob(t *testing.T, name, container string) shardedJob {
	t.Helper()
	j := loadJob(t, name)
	s := j.Spec
	if s.CompletionMode != "Indexed" || s.Completions == nil || *s.Completions < 1 {
		t.Fatalf("%s: want completionMode Indexed and completions N", name)
	}
	n := *s.Completions
	if s.Parallelism == nil || *s.Parallelism < 1 || *s.Parallelism > n {
		t.Errorf("%s: parallelism must be 1..completions", name)
	}
	if s.BackoffLimitPerIndex == nil {
		t.Errorf("%s: want backoffLimitPerIndex: a shard's retries are its own (and FailIndex needs it)", name)
	}
	actions := map[string]string{}
	disruptionIgnored := false
	if s.PodFailurePolicy != nil {
		for _, r := range s.PodFailurePolicy.Rules {
			if r.OnExitCodes != nil {
				if r.OnExitCodes.ContainerName != container || r.OnExitCodes.Operator != "In" {
					t.Errorf("%s: rule %s: want containerName %s and operator In", name, r.Action, container)
				}
				for _, v := range r.OnExitCodes.Values {
					actions[fmt.Sprint(v)] = r.Action
				}
			}
			for _, c := range r.OnPodConditions {
				disruptionIgnored = disruptionIgnored || (c.Type == "DisruptionTarget" && r.Action == "Ignore")
			}
		}
	}
	// Exit 1 is a result (failures found): never retried. Exit 2 is bad
	// input: every shard would fail alike. Exit 0 must match no rule.
	if actions["1"] != "FailIndex" || actions["2"] != "FailJob" || actions["0"] != "" || !disruptionIgnored {
		t.Errorf("%s: pod failure policy %v (DisruptionTarget ignored: %v): want exit 1 FailIndex, 2 FailJob, a disruption Ignore", name, actions, disruptionIgnored)
	}
	c := &j.Spec.Template.Spec.Containers[0]
	if c.Name != container || len(c.Command) != 0 {
		t.Fatalf("%s: want the container %s with the image's entrypoint (kafkasim) and args only", name, container)
	}
	env := map[string]string{}
	indexVar := ""
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == completionIndexPath {
			indexVar = e.Name
		}
	}
	if indexVar == "" {
		t.Fatalf("%s: no env var from the completion index (%s)", name, completionIndexPath)
	}
	expand := func(index int) []string {
		var out []string
		for _, a := range c.Args {
			out = append(out, envRef.ReplaceAllStringFunc(a, func(ref string) string {
				v := envRef.FindStringSubmatch(ref)[1]
				if v == indexVar {
					return strconv.Itoa(index)
				}
				if val, ok := env[v]; ok && val != "" {
					return val
				}
				t.Errorf("%s: $(%s): no env var of that name: Kubernetes would pass it as written", name, v)
				return ref
			}))
		}
		return out
	}
	wantShard := "$(" + indexVar + ")/" + strconv.Itoa(n)
	shardArg, outArg := "", ""
	for i, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--shard="):
			shardArg = strings.TrimPrefix(a, "--shard=")
		case a == "--shard" && i+1 < len(c.Args):
			shardArg = c.Args[i+1]
		case strings.HasPrefix(a, "--out="):
			outArg = strings.TrimPrefix(a, "--out=")
		case a == "--out" && i+1 < len(c.Args):
			outArg = c.Args[i+1]
		}
	}
	if shardArg != wantShard {
		t.Errorf("%s: --shard %q, want %q: the completion index of completions %d", name, shardArg, wantShard, n)
	}
	if !strings.Contains(outArg, "$("+indexVar+")") {
		t.Errorf("%s: --out %q: want the shard index in it, so that shards do not share a folder", name, outArg)
	}
	if claim, _, ok := volumeAt(j, c, outArg); !ok || claim != resultsClaim {
		t.Errorf("%s: --out %q: want it on the %s volume (got claim %q)", name, outArg, resultsClaim, claim)
	}
	for _, index := range []int{0, n - 1} {
		args := expand(index)
		cmd := checkCommandLine(t, name, args)
		if cmd == nil {
			continue
		}
		if got := flagValue(cmd, "shard"); got != fmt.Sprintf("%d/%d", index, n) {
			t.Errorf("%s: pod %d runs --shard %s", name, index, got)
		}
	}
	return shardedJob{n: n, out: strings.ReplaceAll(outArg, "$("+indexVar+")", "K"), image: c.Image, args: c.Args, expand: expand}
}

// checkMergeJob asserts a merge Job: no retries, the results volume, and
// its DIR pattern matching every shard's --out but not its own --out.
func checkMergeJob(t *testing.T, name string, want []string, sharded shardedJob) {
	t.Helper()
	j := loadJob(t, name)
	if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 || j.Spec.CompletionMode == "Indexed" {
		t.Errorf("%s: want one pod and backoffLimit 0: a merge reads the same folders every time", name)
	}
	c := &j.Spec.Template.Spec.Containers[0]
	if c.Image != sharded.image {
		t.Errorf("%s: image %s, the shards' %s", name, c.Image, sharded.image)
	}
	cmd := checkCommandLine(t, name, c.Args)
	if cmd == nil {
		return
	}
	if cmd.CommandPath() != "kafkasim "+strings.Join(want, " ") {
		t.Fatalf("%s: runs %s, want kafkasim %s", name, cmd.CommandPath(), strings.Join(want, " "))
	}
	dirs := cmd.Flags().Args()
	out := flagValue(cmd, "out")
	if len(dirs) != 1 || out == "" {
		t.Fatalf("%s: want one DIR pattern and --out, got %v --out %q", name, dirs, out)
	}
	for _, index := range []int{0, sharded.n - 1} {
		shardOut := strings.ReplaceAll(sharded.out, "K", strconv.Itoa(index))
		if ok, err := path.Match(dirs[0], shardOut); !ok || err != nil {
			t.Errorf("%s: %s does not match shard %d's --out %s", name, dirs[0], index, shardOut)
		}
	}
	if ok, _ := path.Match(dirs[0], out); ok {
		t.Errorf("%s: --out %s must not be one of the shards", name, out)
	}
	if claim, _, ok := volumeAt(j, c, out); !ok || claim != resultsClaim {
		t.Errorf("%s: --out %s: want it on the %s volume", name, out, resultsClaim)
	}
	if claim, _, ok := volumeAt(j, c, path.Dir(dirs[0])); !ok || claim != resultsClaim {
		t.Errorf("%s: %s: want the shards on the %s volume", name, dirs[0], resultsClaim)
	}
}

func TestFuzzDeployCommands(t *testing.T) {
	job := checkShardedJob(t, "fuzz-job.yaml", "fuzz")
	cmd := checkCommandLine(t, "fuzz-job.yaml", job.expand(0))
	if cmd == nil || cmd.Name() != "fuzz" {
		t.Fatalf("fuzz-job.yaml: want kafkasim fuzz")
	}
	runs, err := strconv.Atoi(flagValue(cmd, "runs"))
	if err != nil || runs*job.n != campaignRuns {
		t.Errorf("fuzz-job.yaml: --runs %s × %d shards: want the %d-run campaign docs/scale.md describes", flagValue(cmd, "runs"), job.n, campaignRuns)
	}
	if flagValue(cmd, "parallel") != "1" {
		t.Errorf("fuzz-job.yaml: want --parallel 1, one worker per pod's core, as the resources are sized")
	}
	checkMergeJob(t, "fuzz-merge-job.yaml", []string{"fuzz", "merge"}, job)

	var reader k8sPod
	decodeStrict(t, filepath.Join(deployDir, "results-reader.yaml"), &reader)
	checkPodSpec(t, "results-reader.yaml", &reader.Spec)
	if reader.Kind != "Pod" || len(reader.Spec.Volumes) != 1 || reader.Spec.Volumes[0].PersistentVolumeClaim == nil ||
		reader.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != resultsClaim {
		t.Errorf("results-reader.yaml: want a Pod mounting the %s claim", resultsClaim)
	}
}

// TestSweepDeployCommands checks sweep-job.yaml and sweep-merge-job.yaml,
// and the sweep commands of docs/scale.md: they need `kafkasim sweep
// --shard K/N` and `kafkasim sweep merge`.
func TestSweepDeployCommands(t *testing.T) {
	job := checkShardedJob(t, "sweep-job.yaml", "sweep")
	var j k8sJob
	decodeStrict(t, filepath.Join(deployDir, "sweep-job.yaml"), &j)
	c := &j.Spec.Template.Spec.Containers[0]
	if len(c.Args) < 2 || c.Args[0] != "sweep" {
		t.Fatalf("sweep-job.yaml: want kafkasim sweep SWEEP.yaml, got %v", c.Args)
	}
	file := c.Args[1]
	if _, cm, ok := volumeAt(&j, c, file); !ok || cm == "" {
		t.Errorf("sweep-job.yaml: %s: want the sweep file from a ConfigMap's volume", file)
	}
	// The ConfigMap docs/scale.md and the manifest create holds a bundled
	// sweep and its base.
	if _, err := os.Stat(filepath.Join("../../sweeps", path.Base(file))); err != nil {
		t.Errorf("sweep-job.yaml: %s is not a bundled sweep (sweeps/): %v", path.Base(file), err)
	}
	checkMergeJob(t, "sweep-merge-job.yaml", []string{"sweep", "merge"}, job)
	// The merge Job's pattern reaches sweep merge unexpanded (the image has
	// no shell): sweep merge must expand it (expandDirGlobs), as fuzz merge
	// does, and so name the folder it found wanting.
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "shard-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := kafkasim(t, "sweep", "merge", filepath.Join(root, "shard-*"), "--out", filepath.Join(root, "merged"))
	if code != 2 || !strings.Contains(stderr, filepath.Join(root, "shard-0")) {
		t.Errorf("sweep merge %s: exit %d, %q: want the pattern expanded and shard-0 refused by name", filepath.Join(root, "shard-*"), code, stderr)
	}
	for _, line := range docCommands(t) {
		if len(line.args) > 0 && line.args[0] == "sweep" {
			checkCommandLine(t, line.where, line.args)
		}
	}
}

// A command line found in a file, without its leading "kafkasim".
type commandLine struct {
	where string
	args  []string
}

// shellWords splits one shell command into words as bash would for the
// simple commands used here: quotes, $VAR and ${VAR} from vars (an unset one
// fails the test), backslash-newline joins; it stops at an unquoted |, ;,
// &, >, < or #. Globs are left as written.
func shellWords(t *testing.T, where, s string, vars map[string]string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	expandVar := func(i int) int {
		j := i + 1
		name := ""
		if j < len(s) && s[j] == '{' {
			end := strings.IndexByte(s[j:], '}')
			name, j = s[j+1:j+end], j+end+1
		} else {
			for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			name = s[i+1 : j]
		}
		v, ok := vars[name]
		if !ok {
			t.Errorf("%s: $%s: no sample value for it", where, name)
		}
		cur.WriteString(v)
		inWord = true
		return j
	}
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
			i++
		case quote == '"':
			switch {
			case ch == '"':
				quote = 0
				i++
			case ch == '$':
				i = expandVar(i)
			default:
				cur.WriteByte(ch)
				i++
			}
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
			i++
		case ch == '$':
			i = expandVar(i)
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case strings.IndexByte("|;&><", ch) >= 0 || ch == '#' && !inWord:
			i = len(s)
		default:
			cur.WriteByte(ch)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// kafkasimCalls finds the kafkasim invocations of a shell script (a
// workflow step's run, a docs code block): each line whose command is
// kafkasim or ./kafkasim, or `docker run [OPTIONS] IMAGE` with IMAGE the
// image given, continuation lines joined. Only those lines are read, so a
// variable elsewhere needs no sample value.
func kafkasimCalls(t *testing.T, where, script string, vars map[string]string, image string) []commandLine {
	t.Helper()
	var calls []commandLine
	script = strings.ReplaceAll(script, "\\\n", " ")
	for n, line := range strings.Split(script, "\n") {
		if !strings.Contains(line, "kafkasim") {
			continue
		}
		at := fmt.Sprintf("%s line %d", where, n+1)
		words := shellWords(t, at, strings.TrimPrefix(strings.TrimSpace(line), "$ "), vars)
		switch {
		case len(words) > 0 && (words[0] == "kafkasim" || words[0] == "./kafkasim"):
			calls = append(calls, commandLine{where: at, args: words[1:]})
		case len(words) > 2 && words[0] == "docker" && words[1] == "run" && image != "":
			for i := 2; i < len(words); i++ {
				if words[i] == image {
					calls = append(calls, commandLine{where: at, args: words[i+1:]})
					break
				}
			}
		}
	}
	return calls
}

// ghExpr matches a GitHub Actions expression.
var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// ghSubstitute replaces each expression by its sample value; `X || 'd'`
// is X's, or d when X's is empty, as GitHub evaluates it.
func ghSubstitute(t *testing.T, where, s string, sample map[string]string) string {
	t.Helper()
	var eval func(string) string
	eval = func(e string) string {
		if left, right, ok := strings.Cut(e, " || "); ok {
			if v := eval(left); v != "" {
				return v
			}
			return strings.Trim(right, "'")
		}
		v, ok := sample[e]
		if !ok {
			t.Errorf("%s: ${{ %s }}: no sample value for it", where, e)
		}
		return v
	}
	return ghExpr.ReplaceAllStringFunc(s, func(e string) string { return eval(ghExpr.FindStringSubmatch(e)[1]) })
}

type ghStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

type ghWorkflow struct {
	Name        string         `yaml:"name"`
	On          map[string]any `yaml:"on"`
	Permissions map[string]string
	Concurrency map[string]any
	Jobs        map[string]struct {
		Needs          any               `yaml:"needs"`
		If             string            `yaml:"if"`
		RunsOn         string            `yaml:"runs-on"`
		TimeoutMinutes int               `yaml:"timeout-minutes"`
		Outputs        map[string]string `yaml:"outputs"`
		Strategy       struct {
			FailFast *bool          `yaml:"fail-fast"`
			Matrix   map[string]any `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []ghStep `yaml:"steps"`
	} `yaml:"jobs"`
}

func loadWorkflow(t *testing.T, name string) *ghWorkflow {
	t.Helper()
	var w ghWorkflow
	data, err := os.ReadFile(filepath.Join("../../.github/workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &w
}

// runPlan runs the fuzz workflow's plan step with bash, as a runner would,
// and returns its outputs and exit code.
func runPlan(t *testing.T, step ghStep, inputs map[string]string) (map[string]string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the plan step")
	}
	dir := t.TempDir()
	outputs, summary := filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	cmd := exec.Command(bash, "-e", "-c", step.Run)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GITHUB_OUTPUT=" + outputs, "GITHUB_STEP_SUMMARY=" + summary}
	// A scheduled run has no inputs: each reads as empty.
	sample := map[string]string{"inputs.shards": "", "inputs.runs": "", "inputs.time": "", "inputs.seed-start": ""}
	for k, v := range inputs {
		sample["inputs."+k] = v
	}
	for k, v := range step.Env {
		cmd.Env = append(cmd.Env, k+"="+ghSubstitute(t, "plan", v, sample))
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	got := map[string]string{}
	data, _ := os.ReadFile(outputs)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	return got, code
}

func TestFuzzWorkflow(t *testing.T) {
	w := loadWorkflow(t, "fuzz.yml")
	dispatch, _ := w.On["workflow_dispatch"].(map[string]any)
	inputs, _ := dispatch["inputs"].(map[string]any)
	for _, in := range []string{"shards", "runs", "time", "seed-start"} {
		if _, ok := inputs[in]; !ok {
			t.Errorf("fuzz.yml: workflow_dispatch has no input %s", in)
		}
	}
	if _, ok := w.On["schedule"]; !ok {
		t.Errorf("fuzz.yml: want a schedule")
	}
	plan, shard, merge := w.Jobs["plan"], w.Jobs["shard"], w.Jobs["merge"]
	if len(plan.Steps) != 1 || len(shard.Steps) == 0 || len(merge.Steps) == 0 {
		t.Fatalf("fuzz.yml: want the jobs plan (one step), shard and merge")
	}
	if m := shard.Strategy.Matrix["shard"]; m != "${{ fromJSON(needs.plan.outputs.shards) }}" || shard.Strategy.FailFast == nil || *shard.Strategy.FailFast {
		t.Errorf("fuzz.yml: the shard job's matrix %v: want shard over the plan's shards, fail-fast off (one shard's failures must not cancel the others)", m)
	}
	for k := range plan.Outputs {
		if plan.Outputs[k] != "${{ steps.plan.outputs."+k+" }}" {
			t.Errorf("fuzz.yml: plan output %s = %s", k, plan.Outputs[k])
		}
	}

	// The plan, run: the matrix is 0..N-1 and the inputs are checked.
	for _, bad := range []map[string]string{{"shards": "0"}, {"shards": "257"}, {"shards": "8; rm -rf /"}, {"runs": "x"}, {"seed-start": "-1"}, {"time": "5 hours"}} {
		if _, code := runPlan(t, plan.Steps[0], bad); code != 2 {
			t.Errorf("fuzz.yml: plan with %v: exit %d, want 2", bad, code)
		}
	}
	if out, code := runPlan(t, plan.Steps[0], map[string]string{"time": "5h30m", "seed-start": "7"}); code != 0 || out["budget"] != "--time=5h30m" || out["seed-start"] != "7" {
		t.Errorf("fuzz.yml: plan with --time: exit %d, %v", code, out)
	}
	scheduled, code := runPlan(t, plan.Steps[0], map[string]string{})
	if code != 0 || scheduled["n"] != "8" || scheduled["budget"] != "--runs=2000" || !strings.HasSuffix(scheduled["seed-start"], "00000001") {
		t.Fatalf("fuzz.yml: the scheduled plan: exit %d, %v", code, scheduled)
	}
	n, _ := strconv.Atoi(scheduled["n"])
	var matrix []int
	if err := json.Unmarshal([]byte(scheduled["shards"]), &matrix); err != nil || len(matrix) != n {
		t.Fatalf("fuzz.yml: plan's shards %q: want a JSON list of %d", scheduled["shards"], n)
	}
	for i, k := range matrix {
		if k != i {
			t.Fatalf("fuzz.yml: plan's shards %v: want 0..%d", matrix, n-1)
		}
	}

	// Each shard's command, for the first and the last shard.
	artifacts := map[string]string{} // artifact name -> uploaded path
	for _, k := range []int{0, n - 1} {
		sample := map[string]string{"matrix.shard": strconv.Itoa(k)}
		for out, v := range scheduled {
			sample["needs.plan.outputs."+out] = v
		}
		var calls []commandLine
		for _, st := range shard.Steps {
			vars := map[string]string{}
			for name, v := range st.Env {
				vars[name] = ghSubstitute(t, "fuzz.yml shard", v, sample)
			}
			calls = append(calls, kafkasimCalls(t, "fuzz.yml shard", st.Run, vars, "")...)
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
				artifacts[ghSubstitute(t, "fuzz.yml upload", st.With["name"], sample)] = ghSubstitute(t, "fuzz.yml upload", st.With["path"], sample)
			}
		}
		if len(calls) != 1 {
			t.Fatalf("fuzz.yml: the shard job runs kafkasim %d times, want once", len(calls))
		}
		cmd := checkCommandLine(t, calls[0].where, calls[0].args)
		if cmd == nil {
			continue
		}
		if cmd.Name() != "fuzz" || flagValue(cmd, "shard") != fmt.Sprintf("%d/%d", k, n) || flagValue(cmd, "seed-start") != scheduled["seed-start"] {
			t.Errorf("fuzz.yml: shard %d runs %v", k, calls[0].args)
		}
		if up := artifacts[fmt.Sprintf("fuzz-shard-%d", k)]; up == "" || up != flagValue(cmd, "out") {
			t.Errorf("fuzz.yml: shard %d uploads %q, its --out is %q", k, up, flagValue(cmd, "out"))
		}
	}

	// The merge: its DIR pattern matches where download-artifact puts each
	// shard's artifact (PATH/NAME), and it uploads its --out.
	var downloads, pattern string
	var calls []commandLine
	uploaded := ""
	for _, st := range merge.Steps {
		switch {
		case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
			downloads, pattern = st.With["path"], st.With["pattern"]
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
			uploaded = st.With["path"]
		}
		calls = append(calls, kafkasimCalls(t, "fuzz.yml merge", st.Run, map[string]string{"GITHUB_STEP_SUMMARY": "/tmp/summary"}, "")...)
	}
	if len(calls) != 1 {
		t.Fatalf("fuzz.yml: the merge job runs kafkasim %d times, want once", len(calls))
	}
	cmd := checkCommandLine(t, calls[0].where, calls[0].args)
	if cmd == nil || cmd.CommandPath() != "kafkasim fuzz merge" {
		t.Fatalf("fuzz.yml: the merge job runs %v, want kafkasim fuzz merge", calls[0].args)
	}
	dirs := cmd.Flags().Args()
	for name := range artifacts {
		if ok, _ := path.Match(pattern, name); !ok {
			t.Errorf("fuzz.yml: download pattern %q misses the artifact %s", pattern, name)
		}
		if len(dirs) != 1 {
			t.Fatalf("fuzz.yml: merge DIRs %v: want one pattern", dirs)
		}
		if ok, _ := path.Match(dirs[0], path.Join(downloads, name)); !ok {
			t.Errorf("fuzz.yml: merge pattern %s misses %s", dirs[0], path.Join(downloads, name))
		}
	}
	if out := flagValue(cmd, "out"); out == "" || out != uploaded {
		t.Errorf("fuzz.yml: merge --out %q, uploaded %q", out, uploaded)
	}
}

func TestImageWorkflow(t *testing.T) {
	w := loadWorkflow(t, "image.yml")
	job, ok := w.Jobs["image"]
	if !ok {
		t.Fatal("image.yml: no job image")
	}
	builds, pushes, smoke := 0, 0, 0
	for _, st := range job.Steps {
		if strings.HasPrefix(st.Uses, "docker/build-push-action@") {
			builds++
			if st.With["push"] == "true" {
				pushes++
				if st.If != "${{ github.event_name == 'push' }}" {
					t.Errorf("image.yml: a push on %q: want pushes from pushes to main and tags only", st.If)
				}
			}
		}
		for _, c := range kafkasimCalls(t, "image.yml", st.Run, map[string]string{}, "kafkasim:ci") {
			smoke++
			checkCommandLine(t, c.where, c.args)
		}
	}
	if builds != 2 || pushes != 1 || smoke == 0 {
		t.Errorf("image.yml: %d builds, %d pushing, %d smoke runs: want a build that is run, and a push", builds, pushes, smoke)
	}
	if push, _ := w.On["push"].(map[string]any); push == nil || fmt.Sprint(push["branches"]) != "[main]" {
		t.Errorf("image.yml: want it on pushes to main")
	}
}

// dockerfile reads the Dockerfile's instructions, continuation lines
// joined, and its comment lines apart.
func dockerfile(t *testing.T) (instructions [][2]string, comments []string) {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			comments = append(comments, strings.TrimSpace(strings.TrimPrefix(line, "#")))
		default:
			op, rest, _ := strings.Cut(line, " ")
			instructions = append(instructions, [2]string{strings.ToUpper(op), strings.TrimSpace(rest)})
		}
	}
	return instructions, comments
}

func TestDockerfile(t *testing.T) {
	ins, comments := dockerfile(t)
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go ([0-9]+\.[0-9]+)`).FindSubmatch(gomod)
	_ = version // the variable -X main.version sets
	var froms []string
	built, copied, entrypoint, workdir, user := "", "", "", "", ""
	for _, in := range ins {
		switch in[0] {
		case "FROM":
			froms = append(froms, in[1])
		case "RUN":
			if strings.Contains(in[1], "go build") {
				for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-s -w", "-X main.version=${VERSION}", "./cmd/kafkasim"} {
					if !strings.Contains(in[1], want) {
						t.Errorf("Dockerfile: the build lacks %s", want)
					}
				}
				if m := regexp.MustCompile(`-o (\S+)`).FindStringSubmatch(in[1]); m != nil {
					built = m[1]
				}
			}
		case "COPY":
			f := strings.Fields(in[1])
			if len(f) == 3 && f[0] == "--from=build" && f[1] == built {
				copied = f[2]
			}
		case "ENTRYPOINT":
			var e []string
			if err := json.Unmarshal([]byte(in[1]), &e); err != nil || len(e) != 1 {
				t.Fatalf("Dockerfile: ENTRYPOINT %s: want the exec form of the binary alone", in[1])
			}
			entrypoint = e[0]
		case "CMD":
			var c []string
			if err := json.Unmarshal([]byte(in[1]), &c); err != nil {
				t.Fatalf("Dockerfile: CMD %s: want the exec form", in[1])
			}
			checkCommandLine(t, "Dockerfile CMD", c)
		case "WORKDIR":
			workdir = in[1]
		case "USER":
			user = in[1]
		}
	}
	if len(froms) != 2 || goVersion == nil || !strings.Contains(froms[0], "golang:"+string(goVersion[1])+" ") ||
		!strings.HasPrefix(froms[1], "gcr.io/distroless/static") || !strings.Contains(froms[1], "nonroot") {
		t.Errorf("Dockerfile: stages %v: want golang:%s (go.mod's) then distroless static nonroot", froms, goVersion[1])
	}
	if built == "" || copied == "" || entrypoint != copied || workdir != "/work" || user != "65532:65532" {
		t.Errorf("Dockerfile: built %q, copied to %q, entrypoint %q, workdir %q, user %q", built, copied, entrypoint, workdir, user)
	}
	// The usage the comments show runs as written.
	calls := 0
	for _, c := range comments {
		c = strings.ReplaceAll(c, "$(git describe --tags --always)", "v0")
		for _, call := range kafkasimCalls(t, "Dockerfile comment", c, map[string]string{"PWD": "/src"}, "kafkasim") {
			calls++
			cmd := checkCommandLine(t, call.where, call.args)
			if cmd != nil && cmd.Name() == "run" {
				if _, ok := scenarios.BundledSource(cmd.Flags().Arg(0)); !ok {
					t.Errorf("Dockerfile: %s is not a bundled scenario", cmd.Flags().Arg(0))
				}
			}
		}
	}
	if calls == 0 {
		t.Errorf("Dockerfile: no usage in its comments")
	}
}

// dockerignored tells whether the build context leaves rel out, by the
// rules of .dockerignore the file uses: a pattern (path.Match, "**/" for
// any depth) excludes a path it matches and everything under it.
func dockerignored(patterns []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i <= len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		for _, p := range patterns {
			if rest, ok := strings.CutPrefix(p, "**/"); ok {
				for j := 0; j < i; j++ {
					if m, _ := path.Match(rest, strings.Join(parts[j:i], "/")); m {
						return true
					}
				}
			} else if m, _ := path.Match(p, prefix); m {
				return true
			}
		}
	}
	return false
}

func TestDockerignore(t *testing.T) {
	data, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			t.Fatalf(".dockerignore: %s: this test does not read exceptions", line)
		}
		patterns = append(patterns, line)
	}
	needed := 0
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, "../.."))
		rel = strings.TrimPrefix(rel, "/")
		if d.IsDir() {
			if rel == ".git" || rel == "runs" || rel == "out" {
				return filepath.SkipDir
			}
			return nil
		}
		// What the build reads: the module files, every Go file, and what
		// the packages embed (scenarios' YAML, the report's template); the
		// image also copies sweeps/.
		need := rel == "go.mod" || rel == "go.sum" || (strings.HasSuffix(rel, ".go") && !strings.Contains(rel, "/testdata/")) ||
			strings.HasPrefix(rel, "scenarios/") && strings.HasSuffix(rel, ".yaml") && !strings.Contains(rel, "/testdata/") ||
			strings.HasPrefix(rel, "sweeps/") || rel == "reports/report.tmpl"
		if need {
			needed++
			if dockerignored(patterns, rel) {
				t.Errorf(".dockerignore leaves out %s, which the image's build needs", rel)
			}
		}
		return nil
	})
	if needed < 100 {
		t.Fatalf("only %d files needed: the walk went wrong", needed)
	}
	for _, out := range []string{".git/config", "runs/fuzz/summary.json", "kafkasim", "fuzz/fuzz.test", "deploy/kubernetes/fuzz-job.yaml"} {
		if !dockerignored(patterns, out) {
			t.Errorf(".dockerignore: %s should not reach the build", out)
		}
	}
}

// docCommands are the kafkasim command lines of docs/scale.md's code
// blocks, with its placeholders given sample values.
func docCommands(t *testing.T) []commandLine {
	t.Helper()
	data, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(?:sh|bash|console|shell)\n(.*?)```").FindAllSubmatch(data, -1)
	vars := map[string]string{"SHARD": "3", "N": "50", "SEED_START": "1", "REGISTRY": "ghcr.io/you", "VERSION": "v0"}
	var calls []commandLine
	for _, b := range blocks {
		calls = append(calls, kafkasimCalls(t, "docs/scale.md", string(b[1]), vars, "ghcr.io/you/kafkasim:v0")...)
	}
	if len(calls) == 0 {
		t.Fatal("docs/scale.md: no kafkasim command in its code blocks")
	}
	return calls
}

// The fuzz command lines docs/scale.md shows are accepted as written (its
// sweep ones by TestSweepDeployCommands).
func TestScaleDocCommands(t *testing.T) {
	for _, c := range docCommands(t) {
		if len(c.args) > 0 && c.args[0] != "sweep" {
			checkCommandLine(t, c.where, c.args)
		}
	}
}
