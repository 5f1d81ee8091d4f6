package storecontract_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// workers is the concurrency every case runs at.
const workers = 32

// race runs f on workers goroutines released together, and waits for all of them.
func race(t *testing.T, f func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := f(w); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func setup(t *testing.T) (context.Context, *mongo.Collection) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx, testenv.Mongo(t).Collection("contract")
}

func insertDocs(ctx context.Context, t *testing.T, c *mongo.Collection, n int, doc func(i int) bson.D) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = doc(i)
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatalf("insert %d documents: %v", n, err)
	}
}

// "In MongoDB, a write operation is atomic on the level of a single document" and
// findOneAndUpdate "updates a single document based on the filter": of concurrent calls whose
// filter guards the state they change, exactly one matches.
// https://www.mongodb.com/docs/manual/core/write-operations-atomicity/
// https://www.mongodb.com/docs/manual/reference/method/db.collection.findOneAndUpdate/
func TestGuardedFindOneAndUpdateHasOneWinner(t *testing.T) {
	ctx, c := setup(t)
	insertDocs(ctx, t, c, 1, func(int) bson.D { return bson.D{{Key: "_id", Value: "doc"}, {Key: "owner", Value: nil}} })
	var wins atomic.Int32
	race(t, func(w int) error {
		err := c.FindOneAndUpdate(ctx, bson.M{"_id": "doc", "owner": nil}, bson.M{"$set": bson.M{"owner": w}},
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err == nil {
			wins.Add(1)
		}
		return err
	})
	if n := wins.Load(); n != 1 {
		t.Errorf("%d of %d guarded findOneAndUpdate calls won; want exactly 1", n, workers)
	}
}

// findOneAndUpdate with a sort "updates the first document matched by the sort order"; with the
// guard in the filter, workers claiming in a loop take every document exactly once, each
// claim being the lowest-ranked document still unclaimed when it ran.
// https://www.mongodb.com/docs/manual/reference/method/db.collection.findOneAndUpdate/#update-document-with-sort
func TestGuardedFindOneAndUpdateWithSortClaimsEachDocumentOnce(t *testing.T) {
	ctx, c := setup(t)
	const docs = 96
	insertDocs(ctx, t, c, docs, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "state", Value: "ready"}, {Key: "rank", Value: (i * 37) % docs}}
	})
	var mu sync.Mutex
	claimedBy := map[int]int{}
	race(t, func(w int) error {
		for {
			var got struct {
				ID int `bson:"_id"`
			}
			err := c.FindOneAndUpdate(ctx, bson.M{"state": "ready"}, bson.M{"$set": bson.M{"state": "claimed", "owner": w}},
				options.FindOneAndUpdate().SetSort(bson.D{{Key: "rank", Value: 1}})).Decode(&got)
			if errors.Is(err, mongo.ErrNoDocuments) {
				return nil
			}
			if err != nil {
				return err
			}
			mu.Lock()
			if prev, dup := claimedBy[got.ID]; dup {
				mu.Unlock()
				return fmt.Errorf("document %d claimed twice (before by worker %d)", got.ID, prev)
			}
			claimedBy[got.ID] = w
			mu.Unlock()
		}
	})
	if len(claimedBy) != docs {
		t.Errorf("%d of %d documents claimed", len(claimedBy), docs)
	}
	n, err := c.CountDocuments(ctx, bson.M{"state": "claimed"})
	if err != nil || n != docs {
		t.Errorf("%d documents in state claimed (err %v); want %d", n, err, docs)
	}
}

// updateOne with the guard in its filter: one of the concurrent calls modifies the document,
// the others match nothing (write atomicity is per document).
// https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/
func TestGuardedUpdateOneChangesTheDocumentOnce(t *testing.T) {
	ctx, c := setup(t)
	insertDocs(ctx, t, c, 1, func(int) bson.D {
		return bson.D{{Key: "_id", Value: "doc"}, {Key: "state", Value: "a"}, {Key: "n", Value: 0}}
	})
	var modified atomic.Int64
	race(t, func(w int) error {
		r, err := c.UpdateOne(ctx, bson.M{"_id": "doc", "state": "a"}, bson.M{"$set": bson.M{"state": "b"}, "$inc": bson.M{"n": 1}})
		if err == nil {
			modified.Add(r.ModifiedCount)
		}
		return err
	})
	assertCounter(ctx, t, c, "doc", 1)
	if n := modified.Load(); n != 1 {
		t.Errorf("concurrent guarded updateOne calls report %d modified; want 1", n)
	}
}

// updateMany is atomic per document, not as a whole: concurrent guarded updateMany calls over
// the same documents change each document exactly once, and their modified counts add up to
// the number of documents.
// https://www.mongodb.com/docs/manual/reference/method/db.collection.updateMany/#behavior
func TestGuardedUpdateManyChangesEachDocumentOnce(t *testing.T) {
	ctx, c := setup(t)
	const docs = 200
	insertDocs(ctx, t, c, docs, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "state", Value: "a"}, {Key: "n", Value: 0}}
	})
	var modified atomic.Int64
	race(t, func(w int) error {
		r, err := c.UpdateMany(ctx, bson.M{"state": "a"}, bson.M{"$set": bson.M{"state": "b", "by": w}, "$inc": bson.M{"n": 1}})
		if err == nil {
			modified.Add(r.ModifiedCount)
		}
		return err
	})
	if n := modified.Load(); n != docs {
		t.Errorf("concurrent guarded updateMany calls report %d modified; want %d", n, docs)
	}
	assertEachCounted(ctx, t, c, docs, 1)
}

// $inc "is an atomic operation within a single document": no increment is lost.
// https://www.mongodb.com/docs/manual/reference/operator/update/inc/#behavior
func TestIncLosesNoUpdate(t *testing.T) {
	ctx, c := setup(t)
	insertDocs(ctx, t, c, 1, func(int) bson.D { return bson.D{{Key: "_id", Value: "doc"}, {Key: "n", Value: 0}} })
	const each = 25
	race(t, func(int) error {
		for range each {
			if _, err := c.UpdateOne(ctx, bson.M{"_id": "doc"}, bson.M{"$inc": bson.M{"n": 1}}); err != nil {
				return err
			}
		}
		return nil
	})
	assertCounter(ctx, t, c, "doc", workers*each)
}

// One update with $inc and $push is applied atomically to the one document: the counter it
// returns numbers the appended element, so concurrent appends lose nothing and their numbers
// are 1..N without gaps, each at its own position in the array.
// https://www.mongodb.com/docs/manual/core/write-operations-atomicity/
// https://www.mongodb.com/docs/manual/reference/operator/update/push/
func TestPushWithIncrementedCounterIsGapFree(t *testing.T) {
	ctx, c := setup(t)
	insertDocs(ctx, t, c, 1, func(int) bson.D {
		return bson.D{{Key: "_id", Value: "doc"}, {Key: "seq", Value: 0}, {Key: "log", Value: bson.A{}}}
	})
	const each = 10
	type entry struct {
		W int `bson:"w"`
		I int `bson:"i"`
	}
	var mu sync.Mutex
	numbered := map[int]entry{}
	race(t, func(w int) error {
		for i := range each {
			var got struct{ Seq int }
			err := c.FindOneAndUpdate(ctx, bson.M{"_id": "doc"},
				bson.M{"$inc": bson.M{"seq": 1}, "$push": bson.M{"log": entry{W: w, I: i}}},
				options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got)
			if err != nil {
				return err
			}
			mu.Lock()
			numbered[got.Seq] = entry{W: w, I: i}
			mu.Unlock()
		}
		return nil
	})
	var doc struct {
		Seq int
		Log []entry
	}
	if err := c.FindOne(ctx, bson.M{"_id": "doc"}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	const total = workers * each
	if doc.Seq != total || len(doc.Log) != total || len(numbered) != total {
		t.Fatalf("seq %d, %d appended, %d distinct numbers returned; want %d of each", doc.Seq, len(doc.Log), len(numbered), total)
	}
	for seq := 1; seq <= total; seq++ {
		if e, ok := numbered[seq]; !ok || doc.Log[seq-1] != e {
			t.Errorf("number %d was returned for %+v but element %d is %+v", seq, e, seq-1, doc.Log[seq-1])
		}
	}
}

// An upsert whose filter is on a unique index inserts at most one document; a concurrent upsert
// that loses the insert race either is retried by the server or fails with a duplicate-key
// error, and the client retries it.
// https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-with-duplicate-values
func TestUpsertOnUniqueKeyMakesOneDocument(t *testing.T) {
	ctx, c := setup(t)
	uniqueIndex(ctx, t, c, "key")
	race(t, func(w int) error {
		for {
			_, err := c.UpdateOne(ctx, bson.M{"key": "k"},
				bson.M{"$inc": bson.M{"n": 1}, "$setOnInsert": bson.M{"first": w}}, options.UpdateOne().SetUpsert(true))
			if !mongo.IsDuplicateKeyError(err) {
				return err
			}
		}
	})
	n, err := c.CountDocuments(ctx, bson.M{"key": "k"})
	if err != nil || n != 1 {
		t.Fatalf("%d documents with the key (err %v); want 1", n, err)
	}
	var doc struct{ N int }
	if err := c.FindOne(ctx, bson.M{"key": "k"}).Decode(&doc); err != nil || doc.N != workers {
		t.Errorf("n = %d (err %v); want %d: an upsert was lost", doc.N, err, workers)
	}
}

// A write that would violate a unique index fails with error code 11000, which the driver's
// mongo.IsDuplicateKeyError recognises — from every write command: insert (one or many),
// update, findAndModify and bulkWrite. Of 32 concurrent inserts of one key, one succeeds.
// https://www.mongodb.com/docs/manual/core/index-unique/
// https://www.mongodb.com/docs/manual/reference/error-codes/ (11000 DuplicateKey)
// https://pkg.go.dev/go.mongodb.org/mongo-driver/v2/mongo#IsDuplicateKeyError
func TestDuplicateKeyErrorIsRecognised(t *testing.T) {
	ctx, c := setup(t)
	uniqueIndex(ctx, t, c, "key")
	var inserted, dups atomic.Int32
	race(t, func(w int) error {
		_, err := c.InsertOne(ctx, bson.M{"key": "k", "w": w})
		switch {
		case err == nil:
			inserted.Add(1)
		case mongo.IsDuplicateKeyError(err):
			dups.Add(1)
		default:
			return err
		}
		return nil
	})
	if inserted.Load() != 1 || dups.Load() != workers-1 {
		t.Errorf("%d inserted, %d duplicate-key errors; want 1 and %d", inserted.Load(), dups.Load(), workers-1)
	}
	insertDocs(ctx, t, c, 1, func(int) bson.D { return bson.D{{Key: "_id", Value: "other"}, {Key: "key", Value: "other"}} })
	cases := map[string]func() error{
		"insertMany": func() error {
			_, err := c.InsertMany(ctx, []any{bson.M{"key": "fresh"}, bson.M{"key": "k"}})
			return err
		},
		"updateOne": func() error {
			_, err := c.UpdateOne(ctx, bson.M{"_id": "other"}, bson.M{"$set": bson.M{"key": "k"}})
			return err
		},
		"findOneAndUpdate": func() error {
			return c.FindOneAndUpdate(ctx, bson.M{"_id": "other"}, bson.M{"$set": bson.M{"key": "k"}}).Err()
		},
		"bulkWrite insert": func() error {
			_, err := c.BulkWrite(ctx, []mongo.WriteModel{mongo.NewInsertOneModel().SetDocument(bson.M{"key": "k"})})
			return err
		},
		"bulkWrite update": func() error {
			_, err := c.BulkWrite(ctx, []mongo.WriteModel{
				mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": "other"}).SetUpdate(bson.M{"$set": bson.M{"key": "k"}}),
			}, options.BulkWrite().SetOrdered(false))
			return err
		},
	}
	for name, write := range cases {
		if err := write(); !mongo.IsDuplicateKeyError(err) {
			t.Errorf("%s violating the unique index: err %v; want a duplicate-key error", name, err)
		}
	}
}

// bulkWrite sends many statements in one command (the driver splits only at the server's
// maxWriteBatchSize, 100,000), each statement atomic on its document: concurrent ordered and
// unordered bulk writes of guarded statements change every document exactly once, however
// many statements one write holds. Four of the 32 workers send one statement per document
// (more than 100: a stand-in once deadlocked there), the others short writes over slices of
// the documents, which keeps the case quick on the embedded database.
// https://www.mongodb.com/docs/manual/reference/method/db.collection.bulkWrite/
// https://www.mongodb.com/docs/manual/reference/limits/#mongodb-limit-Write-Command-Batch-Limit-Size
func TestGuardedBulkWriteChangesEachDocumentOnce(t *testing.T) {
	ctx, c := setup(t)
	const docs, short = 120, 8
	insertDocs(ctx, t, c, docs, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "state", Value: "a"}, {Key: "n", Value: 0}}
	})
	var modified atomic.Int64
	race(t, func(w int) error {
		n, ordered := short, w%2 == 0
		if w%8 == 0 {
			n, ordered = docs, (w/8)%2 == 0
		}
		models := make([]mongo.WriteModel, n)
		for i := range models {
			id := (i + w*13) % docs // each worker in its own order
			models[i] = mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": id, "state": "a"}).
				SetUpdate(bson.M{"$set": bson.M{"state": "b", "by": w}, "$inc": bson.M{"n": 1}})
		}
		r, err := c.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(ordered))
		if err == nil {
			modified.Add(r.ModifiedCount)
		}
		return err
	})
	if n := modified.Load(); n != docs {
		t.Errorf("concurrent guarded bulk writes report %d modified; want %d", n, docs)
	}
	assertEachCounted(ctx, t, c, docs, 1)
}

func uniqueIndex(ctx context.Context, t *testing.T, c *mongo.Collection, field string) {
	t.Helper()
	_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: field, Value: 1}}, Options: options.Index().SetUnique(true)})
	if err != nil {
		t.Fatalf("unique index on %s: %v", field, err)
	}
}

func assertCounter(ctx context.Context, t *testing.T, c *mongo.Collection, id any, want int) {
	t.Helper()
	var doc struct{ N int }
	if err := c.FindOne(ctx, bson.M{"_id": id}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.N != want {
		t.Errorf("n = %d; want %d", doc.N, want)
	}
}

// assertEachCounted checks that each of the docs documents (ids 0..docs-1) has n == want.
func assertEachCounted(ctx context.Context, t *testing.T, c *mongo.Collection, docs, want int) {
	t.Helper()
	cur, err := c.Find(ctx, bson.M{})
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID int `bson:"_id"`
		N  int
	}
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].ID < got[j].ID })
	if len(got) != docs {
		t.Fatalf("%d documents; want %d", len(got), docs)
	}
	for _, d := range got {
		if d.N != want {
			t.Errorf("document %d changed %d times; want %d", d.ID, d.N, want)
		}
	}
}
