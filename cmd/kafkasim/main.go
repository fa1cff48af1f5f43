// Command kafkasim is the deterministic Kafka simulator's command line.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"kafkasim/internal/gctune"
	"kafkasim/internal/hugeheap"
)

// Exit codes (README, Commands).
const (
	exitOK        = 0 // every expectation held
	exitFailed    = 1 // an expectation or invariant failed
	exitUsage     = 2 // bad usage or bad input
	exitSimulator = 3 // the simulator itself failed
)

// exitError carries an exit code with the message printed for it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func failed(format string, args ...any) error {
	return &exitError{code: exitFailed, err: fmt.Errorf(format, args...)}
}

func simulatorFailed(format string, args ...any) error {
	return &exitError{code: exitSimulator, err: fmt.Errorf(format, args...)}
}

func usage(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	// Back the heap with transparent huge pages where the machine leaves
	// that to programs (internal/hugeheap): a long run's gigabyte of history
	// and logs costs far fewer page faults and TLB misses. Behaviour is
	// unaffected; a refusal only costs speed.
	if _, _, err := hugeheap.Reserve(); err != nil && os.Getenv("KAFKASIM_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "kafkasim: huge pages not marked: %v\n", err)
	}
	// Collect less often than Go's default (GOGC=100) while the live heap
	// is small, and keep a long run's memory within about 920 MiB while
	// its live heap allows (internal/gctune), unless the user chose a
	// GOGC (a GOMEMLIMIT of the user's is kept). Behaviour is unaffected.
	if os.Getenv("GOGC") == "" {
		gctune.Start()
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code. A panic anywhere
// below is the simulator's failure (exit 3), reported in one line; the stack
// goes to stderr only when KAFKASIM_DEBUG is set.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "kafkasim: internal error: %v\n", r)
			if os.Getenv("KAFKASIM_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
			code = exitSimulator
		}
	}()
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code != exitOK {
			fmt.Fprintf(stderr, "kafkasim: %v\n", ee.err)
		}
		return ee.code
	}
	// Whatever cobra itself rejects (unknown command or flag, wrong number
	// of arguments) is a usage error.
	fmt.Fprintf(stderr, "kafkasim: %v\n", err)
	return exitUsage
}
