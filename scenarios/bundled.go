package scenarios

import "embed"

// Bundled holds the scenario files shipped with kafkasim: the teaching
// scenarios of the seeds and one per bug-zoo switch under bugzoo/.
//
//go:embed *.yaml bugzoo/*.yaml
var Bundled embed.FS
