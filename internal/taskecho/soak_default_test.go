//go:build !chaos

package taskecho

// soakTasks is the concurrency tests' queue size in `make test`; `make chaos` runs 10,000.
const soakTasks = 1_000
