package embeddedmongo_test

import (
	"context"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/testenv"
)

// The embedded database must give the per-document atomicity MongoDB gives: concurrent $inc
// on one document all count, and of concurrent guarded findOneAndUpdate calls exactly one wins.
func TestEmbeddedMongoUpdatesAreAtomic(t *testing.T) {
	ctx := context.Background()
	c := testenv.Mongo(t).Collection("atomic")
	if _, err := c.InsertOne(ctx, bson.M{"_id": "doc", "n": 0, "owner": nil}); err != nil {
		t.Fatal(err)
	}
	const workers = 20
	var wg sync.WaitGroup
	wins := make(chan int, workers)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.UpdateOne(ctx, bson.M{"_id": "doc"}, bson.M{"$inc": bson.M{"n": 1}}); err != nil {
				t.Error(err)
			}
			err := c.FindOneAndUpdate(ctx, bson.M{"_id": "doc", "owner": nil}, bson.M{"$set": bson.M{"owner": i}},
				options.FindOneAndUpdate().SetReturnDocument(options.After)).Err()
			if err == nil {
				wins <- i
			}
		}()
	}
	wg.Wait()
	close(wins)
	var doc struct{ N int }
	if err := c.FindOne(ctx, bson.M{"_id": "doc"}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.N != workers {
		t.Errorf("%d concurrent $inc gave n=%d", workers, doc.N)
	}
	if n := len(wins); n != 1 {
		t.Errorf("%d guarded findOneAndUpdate calls won; want exactly 1", n)
	}
}
