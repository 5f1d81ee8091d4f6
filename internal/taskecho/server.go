package taskecho

import (
	"log/slog"
	"time"
)

// Server is the task server: its parts, each with one job, over one store. A process builds one
// (taskechowire.FromPlatform) and hands it to everything that serves TaskEcho — the worker, the
// JSON API, the console, the CLI — because Leases holds the process's pull-sharing state, which
// only works when every caller in the process goes through the same instance. No part keeps any
// other state: every replica works on the same documents.
type Server struct {
	// Lookup reads one project, queue or task by its id.
	Lookup *Lookup
	// Intake is the push side: submit and the message, log and status appends.
	Intake *Intake
	// Leases is the pull side: pull, release, confirm (one task or a batch), the admin's reset
	// and the sweeps of expired leases and tasks.
	Leases *Leases
	// QueueOps are the queue-wide reset, reset-error and re-run, and the re-run of one task.
	QueueOps *QueueOps
	// Admin manages projects, queues and server tasks.
	Admin *Admin

	core *core
}

// core is what every part shares: the store, the settings, the metrics, the log and the clock.
type core struct {
	store   Store
	set     Settings
	metrics Metrics
	log     *slog.Logger
	clock   func() time.Time
}

func (c *core) now() time.Time { return c.clock() }

// New builds the server over store; metrics and log may be nil.
func New(store Store, set Settings, metrics Metrics, log *slog.Logger) (*Server, error) {
	if err := set.Validate(); err != nil {
		return nil, err
	}
	if metrics == nil {
		metrics = NopMetrics{}
	}
	if log == nil {
		log = slog.Default()
	}
	c := &core{store: store, set: set, metrics: metrics, log: log.With("subsystem", "taskecho"),
		clock: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
	return &Server{
		Lookup: &Lookup{c}, Intake: &Intake{c}, Leases: &Leases{core: c, share: newCandidateShare()},
		QueueOps: &QueueOps{c}, Admin: &Admin{c}, core: c,
	}, nil
}

// Settings returns the server's configuration.
func (s *Server) Settings() Settings { return s.core.set }

// Metrics returns what the server counts into.
func (s *Server) Metrics() Metrics { return s.core.metrics }

// Now is the server's clock, for callers that stamp data the server stores (the demo seed).
func (s *Server) Now() time.Time { return s.core.now() }

// SetClock replaces the clock of every part; tests use it to move leases past their expiry.
func (s *Server) SetClock(now func() time.Time) { s.core.clock = now }

// Store is the store the server works on.
func (s *Server) Store() Store { return s.core.store }
