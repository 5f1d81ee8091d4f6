package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
)

// Ledger collections. The quota ledger is append-only and every guard is a unique key, because a
// unique insert is the one write FerretDB v1 performs atomically under concurrency (its
// conditional updates are read-modify-write and lose concurrent updates; measured: 20 parallel
// $inc of one document gave +4). MongoDB is equally correct with this design.
const (
	CollConsumptions = "quota_consumptions" // _id task id; unique (user_id, feature_id, seq)
	CollRefunds      = "quota_refunds"      // _id task id: a task is refunded at most once
)

// ErrQuotaExhausted: the user has no unit left for the feature (HTTP 4xx QUOTA_EXHAUSTED).
var ErrQuotaExhausted = errors.New("quota exhausted")

// consumeRetries bounds how often a consumer re-counts after losing a slot to a concurrent one.
const consumeRetries = 20

// LedgerEntry records what happened to the unit a task consumed.
type LedgerEntry struct {
	TaskID     string     `json:"task_id"`
	ConsumedAt time.Time  `json:"consumed_at"`
	Refunded   bool       `json:"refunded"`
	RefundedAt *time.Time `json:"refunded_at,omitempty"`
}

// Quota is a user's balance for one feature. Granted counts every unit ever granted; the balance
// is Granted − consumed + refunded.
type Quota struct {
	UserID    string        `json:"user_id"`
	FeatureID string        `json:"feature_id"`
	Remaining int           `json:"remaining"`
	Granted   int           `json:"granted"`
	Consumed  int           `json:"consumed"`
	Refunded  int           `json:"refunded"`
	Ledger    []LedgerEntry `json:"ledger"`
	UpdatedAt time.Time     `json:"updated_at"`
}

type quotaDoc struct {
	UserID    string    `bson:"user_id"`
	FeatureID string    `bson:"feature_id"`
	Granted   int       `bson:"granted"`
	UpdatedAt time.Time `bson:"updated_at"`
}

type consumption struct {
	TaskID    string    `bson:"_id"`
	UserID    string    `bson:"user_id"`
	FeatureID string    `bson:"feature_id"`
	Seq       int       `bson:"seq"`
	At        time.Time `bson:"at"`
}

type refund struct {
	TaskID    string    `bson:"_id"`
	UserID    string    `bson:"user_id"`
	FeatureID string    `bson:"feature_id"`
	At        time.Time `bson:"at"`
}

func quotaFilter(userID, featureID string) bson.D {
	return bson.D{{Key: "user_id", Value: userID}, {Key: "feature_id", Value: featureID}}
}

// ensureQuotaIndexes creates the ledger's unique slot index.
func (s *Store) ensureQuotaIndexes(ctx context.Context) error {
	if err := mongox.EnsureIndexes(ctx, s.c(CollConsumptions), mongo.IndexModel{
		Keys:    bson.D{{Key: "user_id", Value: 1}, {Key: "feature_id", Value: 1}, {Key: "seq", Value: 1}},
		Options: options.Index().SetUnique(true),
	}); err != nil {
		return err
	}
	return mongox.EnsureIndexes(ctx, s.c(CollRefunds), mongo.IndexModel{Keys: bson.D{{Key: "user_id", Value: 1}, {Key: "feature_id", Value: 1}}})
}

// counts returns how many units were consumed and refunded.
func (s *Store) counts(ctx context.Context, userID, featureID string) (consumed, refunded int, err error) {
	c, err := s.c(CollConsumptions).CountDocuments(ctx, quotaFilter(userID, featureID))
	if err != nil {
		return 0, 0, fmt.Errorf("count consumptions %s/%s: %w", userID, featureID, err)
	}
	r, err := s.c(CollRefunds).CountDocuments(ctx, quotaFilter(userID, featureID))
	if err != nil {
		return 0, 0, fmt.Errorf("count refunds %s/%s: %w", userID, featureID, err)
	}
	return int(c), int(r), nil
}

// SetQuota sets the remaining units, creating the quota; the ledger is kept.
func (s *Store) SetQuota(ctx context.Context, userID, featureID string, remaining int) (*Quota, error) {
	c, r, err := s.counts(ctx, userID, featureID)
	if err != nil {
		return nil, err
	}
	_, err = s.c(CollQuotas).UpdateOne(ctx, quotaFilter(userID, featureID),
		bson.D{{Key: "$set", Value: bson.D{{Key: "granted", Value: remaining + c - r}, {Key: "updated_at", Value: s.now()}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("set quota %s/%s: %w", userID, featureID, err)
	}
	return s.GetQuota(ctx, userID, featureID)
}

// GetQuota loads a quota with its ledger (newest first).
func (s *Store) GetQuota(ctx context.Context, userID, featureID string) (*Quota, error) {
	var d quotaDoc
	if err := s.c(CollQuotas).FindOne(ctx, quotaFilter(userID, featureID)).Decode(&d); err != nil {
		return nil, notFound(err, fmt.Sprintf("quota %s/%s", userID, featureID))
	}
	var cons []consumption
	cur, err := s.c(CollConsumptions).Find(ctx, quotaFilter(userID, featureID), options.Find().SetSort(bson.D{{Key: "seq", Value: -1}}))
	if err == nil {
		err = cur.All(ctx, &cons)
	}
	if err != nil {
		return nil, fmt.Errorf("read consumptions %s/%s: %w", userID, featureID, err)
	}
	var refs []refund
	cur, err = s.c(CollRefunds).Find(ctx, quotaFilter(userID, featureID))
	if err == nil {
		err = cur.All(ctx, &refs)
	}
	if err != nil {
		return nil, fmt.Errorf("read refunds %s/%s: %w", userID, featureID, err)
	}
	refundAt := make(map[string]time.Time, len(refs))
	for _, r := range refs {
		refundAt[r.TaskID] = r.At
	}
	q := &Quota{UserID: userID, FeatureID: featureID, Granted: d.Granted, Consumed: len(cons), Refunded: len(refs),
		Ledger: make([]LedgerEntry, 0, len(cons)), UpdatedAt: d.UpdatedAt}
	q.Remaining = q.Granted - q.Consumed + q.Refunded
	for _, c := range cons {
		e := LedgerEntry{TaskID: c.TaskID, ConsumedAt: c.At}
		if at, ok := refundAt[c.TaskID]; ok {
			e.Refunded, e.RefundedAt = true, &at
		}
		q.Ledger = append(q.Ledger, e)
	}
	return q, nil
}

// ConsumeQuota takes one unit for a task. Each unit is a numbered slot (seq) with a unique index,
// so two concurrent consumers can never take the same unit; consuming again for the same task
// (same _id) takes nothing more.
func (s *Store) ConsumeQuota(ctx context.Context, userID, featureID, taskID string) error {
	for range consumeRetries {
		var d quotaDoc
		if err := s.c(CollQuotas).FindOne(ctx, quotaFilter(userID, featureID)).Decode(&d); err != nil {
			if errors.Is(err, mongo.ErrNoDocuments) {
				return fmt.Errorf("no quota for user %s and feature %s: %w", userID, featureID, ErrQuotaExhausted)
			}
			return fmt.Errorf("load quota %s/%s: %w", userID, featureID, err)
		}
		c, r, err := s.counts(ctx, userID, featureID)
		if err != nil {
			return err
		}
		if c >= d.Granted+r {
			if n, _ := s.c(CollConsumptions).CountDocuments(ctx, bson.D{{Key: "_id", Value: taskID}}); n == 1 {
				return nil
			}
			return fmt.Errorf("user %s has no %s units left: %w", userID, featureID, ErrQuotaExhausted)
		}
		_, err = s.c(CollConsumptions).InsertOne(ctx, consumption{TaskID: taskID, UserID: userID, FeatureID: featureID, Seq: c, At: s.now()})
		if err == nil {
			return nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("consume quota %s/%s: %w", userID, featureID, err)
		}
		if n, _ := s.c(CollConsumptions).CountDocuments(ctx, bson.D{{Key: "_id", Value: taskID}}); n == 1 {
			return nil // this task consumed already (a retry)
		}
	}
	return fmt.Errorf("consume quota %s/%s: too much contention, try again", userID, featureID)
}

// RefundQuota returns the unit a task consumed, exactly once: the refund is a document whose _id is
// the task id. refunded reports whether this call did it (false when it was done before).
func (s *Store) RefundQuota(ctx context.Context, userID, featureID, taskID string) (refunded bool, err error) {
	var c consumption
	if err := s.c(CollConsumptions).FindOne(ctx, bson.D{{Key: "_id", Value: taskID}}).Decode(&c); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return false, fmt.Errorf("refund quota %s/%s: task %s consumed no unit", userID, featureID, taskID)
		}
		return false, fmt.Errorf("refund quota for task %s: %w", taskID, err)
	}
	_, err = s.c(CollRefunds).InsertOne(ctx, refund{TaskID: taskID, UserID: c.UserID, FeatureID: c.FeatureID, At: s.now()})
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("refund quota for task %s: %w", taskID, err)
	}
	return true, nil
}
