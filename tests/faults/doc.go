// Package faults is taskloom's fault suite. Its tests drive the real router and worker (package
// internal/testenv/e2e) with hostile input and broken dependencies and check what must hold
// afterwards: the right 4xx in the JSON error envelope, no state change, nothing lost, nothing
// done twice.
//
// The fast part (security over the whole route table, bad input over every write route) runs
// in `make test`. The slow part, behind the build tag chaos, kills workers and dependencies
// under load: `make chaos`.
package faults
