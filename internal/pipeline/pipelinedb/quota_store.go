package pipelinedb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// A quota is one document per (user, feature) holding counters and open_tasks: the ids of the
// tasks that hold a unit right now (charged, not yet settled or refunded). Every charge, refund
// and settlement is one guarded single-document update, so each costs a constant number of
// commands however many tasks the account has run, and the unit moves together with the task id
// that proves it moved:
//
//   - charge: remaining ≥ 1 and the task not in open_tasks → remaining−1, consumed+1, push the id;
//   - refund: the task in open_tasks → remaining+1, refunded+1, pull the id;
//   - settle (the task succeeded): the task in open_tasks → pull the id.
//
// A retried charge finds its id in open_tasks and takes nothing; a retried refund or settlement
// finds it gone and gives nothing. open_tasks is bounded by the account's running tasks, not by
// its history. The per-task ledger the API shows is the account's pipeline_tasks documents.

// ledgerLimit bounds the ledger entries GetQuota returns (newest first); the counters cover all.
const ledgerLimit = 100

type quotaDoc struct {
	UserID    string    `bson:"user_id"`
	FeatureID string    `bson:"feature_id"`
	Remaining int       `bson:"remaining"`
	Consumed  int       `bson:"consumed"`
	Refunded  int       `bson:"refunded"`
	OpenTasks []string  `bson:"open_tasks,omitempty"`
	UpdatedAt time.Time `bson:"updated_at"`
}

func quotaFilter(userID, featureID string, extra ...bson.E) bson.D {
	return append(bson.D{{Key: "user_id", Value: userID}, {Key: "feature_id", Value: featureID}}, extra...)
}

// SetQuota sets the remaining units, creating the quota; counters and open tasks are kept.
func (s *Store) SetQuota(ctx context.Context, userID, featureID string, remaining int) (*pipeline.Quota, error) {
	_, err := s.c(CollQuotas).UpdateOne(ctx, quotaFilter(userID, featureID),
		bson.D{{Key: "$set", Value: bson.D{{Key: "remaining", Value: remaining}, {Key: "updated_at", Value: s.now()}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("set quota %s/%s: %w", userID, featureID, err)
	}
	return s.GetQuota(ctx, userID, featureID)
}

// GetQuota loads a quota with the ledger of its newest tasks.
func (s *Store) GetQuota(ctx context.Context, userID, featureID string) (*pipeline.Quota, error) {
	return s.QuotaPage(ctx, userID, featureID, ledgerLimit)
}

// QuotaPage loads a quota with the ledger of its newest limit tasks: two commands, whatever the
// account's history.
func (s *Store) QuotaPage(ctx context.Context, userID, featureID string, limit int64) (*pipeline.Quota, error) {
	var d quotaDoc
	if err := s.c(CollQuotas).FindOne(ctx, quotaFilter(userID, featureID)).Decode(&d); err != nil {
		return nil, notFound(err, fmt.Sprintf("quota %s/%s", userID, featureID))
	}
	ledger, err := s.ledger(ctx, userID, featureID, limit)
	if err != nil {
		return nil, err
	}
	return &pipeline.Quota{UserID: userID, FeatureID: featureID, Remaining: d.Remaining, Consumed: d.Consumed, Refunded: d.Refunded,
		Granted: d.Remaining + d.Consumed - d.Refunded, Ledger: ledger, UpdatedAt: d.UpdatedAt}, nil
}

// ledger lists the account's newest tasks as ledger entries (one indexed find).
func (s *Store) ledger(ctx context.Context, userID, featureID string, limit int64) ([]pipeline.LedgerEntry, error) {
	cur, err := s.c(CollTasks).Find(ctx, quotaFilter(userID, featureID), options.Find().
		SetSort(bson.D{{Key: "created_at", Value: -1}}).SetLimit(limit).
		SetProjection(bson.D{{Key: "created_at", Value: 1}, {Key: "refunded", Value: 1}, {Key: "refunded_at", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read ledger %s/%s: %w", userID, featureID, err)
	}
	var tasks []pipeline.Task
	if err := cur.All(ctx, &tasks); err != nil {
		return nil, fmt.Errorf("read ledger %s/%s: %w", userID, featureID, err)
	}
	out := make([]pipeline.LedgerEntry, len(tasks))
	for i, t := range tasks {
		out[i] = pipeline.LedgerEntry{TaskID: t.ID, ConsumedAt: t.CreatedAt, Refunded: t.Refunded, RefundedAt: t.RefundedAt}
	}
	return out, nil
}

// ConsumeQuota takes one unit for a task, at most once per task: one guarded update (plus one
// read when it matches nothing, to tell a retry from an exhausted quota).
func (s *Store) ConsumeQuota(ctx context.Context, userID, featureID, taskID string) error {
	res, err := s.c(CollQuotas).UpdateOne(ctx,
		quotaFilter(userID, featureID, bson.E{Key: "remaining", Value: bson.D{{Key: "$gte", Value: 1}}},
			bson.E{Key: "open_tasks", Value: bson.D{{Key: "$ne", Value: taskID}}}),
		bson.D{{Key: "$inc", Value: bson.D{{Key: "remaining", Value: -1}, {Key: "consumed", Value: 1}}},
			{Key: "$push", Value: bson.D{{Key: "open_tasks", Value: taskID}}},
			{Key: "$set", Value: bson.D{{Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return fmt.Errorf("consume quota %s/%s for task %s: %w", userID, featureID, taskID, err)
	}
	if res.MatchedCount == 1 {
		return nil
	}
	held, err := s.holdsUnit(ctx, userID, featureID, taskID)
	switch {
	case err != nil:
		return err
	case held:
		return nil // charged before: a retry
	}
	return fmt.Errorf("user %s has no %s units left: %w", userID, featureID, pipeline.ErrQuotaExhausted)
}

// holdsUnit reports whether taskID is among the quota's open tasks.
func (s *Store) holdsUnit(ctx context.Context, userID, featureID, taskID string) (bool, error) {
	err := s.c(CollQuotas).FindOne(ctx, quotaFilter(userID, featureID, bson.E{Key: "open_tasks", Value: taskID}),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check quota %s/%s for task %s: %w", userID, featureID, taskID, err)
	}
	return true, nil
}

// RefundQuota returns the unit a task holds, exactly once: one guarded update that gives the unit
// back and releases the task id together. refunded reports whether this call did it (false when
// it was done before, or the task holds no unit).
func (s *Store) RefundQuota(ctx context.Context, userID, featureID, taskID string) (refunded bool, err error) {
	res, err := s.c(CollQuotas).UpdateOne(ctx, quotaFilter(userID, featureID, bson.E{Key: "open_tasks", Value: taskID}),
		bson.D{{Key: "$inc", Value: bson.D{{Key: "remaining", Value: 1}, {Key: "refunded", Value: 1}}},
			{Key: "$pull", Value: bson.D{{Key: "open_tasks", Value: taskID}}},
			{Key: "$set", Value: bson.D{{Key: "updated_at", Value: s.now()}}}})
	if err != nil {
		return false, fmt.Errorf("refund quota %s/%s for task %s: %w", userID, featureID, taskID, err)
	}
	return res.ModifiedCount == 1, nil
}

// SettleQuota keeps a finished task's unit consumed and releases its id from open_tasks (one
// guarded update; repeating it changes nothing).
func (s *Store) SettleQuota(ctx context.Context, userID, featureID, taskID string) error {
	_, err := s.c(CollQuotas).UpdateOne(ctx, quotaFilter(userID, featureID, bson.E{Key: "open_tasks", Value: taskID}),
		bson.D{{Key: "$pull", Value: bson.D{{Key: "open_tasks", Value: taskID}}}})
	if err != nil {
		return fmt.Errorf("settle quota %s/%s for task %s: %w", userID, featureID, taskID, err)
	}
	return nil
}
