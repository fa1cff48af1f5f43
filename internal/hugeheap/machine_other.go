//go:build !linux

package hugeheap

func readMachine() Machine { return Machine{} }

func adviseRange(start, end uintptr) error { return nil }
