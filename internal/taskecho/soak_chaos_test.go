//go:build chaos

package taskecho

// soakTasks is the concurrency tests' queue size in `make chaos`: the acceptance size.
const soakTasks = 10_000
