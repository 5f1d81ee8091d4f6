//go:build chaos

package echo

// soakTasks is the concurrency tests' queue size in `make chaos`: the acceptance size.
const soakTasks = 10_000
