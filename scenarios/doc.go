// Package scenarios holds the bundled scenario files and their strict loader:
// YAML in, plain configuration structs of sim and model out.
package scenarios
