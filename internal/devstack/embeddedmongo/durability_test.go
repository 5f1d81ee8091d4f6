package embeddedmongo_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/devstack/embeddedmongo"
)

// killedDirEnv, when set, makes the test binary the embedded database on that directory, for
// TestCommittedWritesSurviveAKilledProcess to kill.
const killedDirEnv = "TASKLOOM_DEVSTACK_KILLED_DIR"

// The embedded database syncs SQLite's WAL at checkpoints only (sqlitePragmas): a write it has
// acknowledged must still be there after its process is killed without any chance to clean up,
// as after a crash of the dev process or a test binary killed by its timeout.
func TestCommittedWritesSurviveAKilledProcess(t *testing.T) {
	if dir := os.Getenv(killedDirEnv); dir != "" {
		serveUntilKilled(dir)
	}
	ctx := context.Background()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommittedWritesSurviveAKilledProcess$")
	cmd.Env = append(os.Environ(), killedDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	uri, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("embedded database did not start: %v", err)
	}
	coll := connect(t, strings.TrimSpace(uri)).Database("durable").Collection("docs")
	const docs = 20
	for i := range docs {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprint(i)}, {Key: "rev", Value: 0}}); err != nil {
			t.Fatal(err)
		}
	}
	var claims []mongo.WriteModel
	for i := range docs {
		claims = append(claims, mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: fmt.Sprint(i)}, {Key: "rev", Value: 0}}).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}}))
	}
	if r, err := coll.BulkWrite(ctx, claims); err != nil || r.ModifiedCount != docs {
		t.Fatalf("guarded bulk write modified %v (%v); want %d", r, err, docs)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	n, err := connect(t, startEmbedded(t, dir)).Database("durable").Collection("docs").CountDocuments(ctx, bson.D{{Key: "rev", Value: 1}})
	if err != nil || n != docs {
		t.Fatalf("after the kill %d documents (%v) hold the acknowledged update; want %d", n, err, docs)
	}
}

// serveUntilKilled runs the embedded database on dir, prints its URI and waits to be killed.
func serveUntilKilled(dir string) {
	uri, _, err := embeddedmongo.Start(context.Background(), "127.0.0.1:0", dir, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(uri)
	time.Sleep(time.Hour)
	os.Exit(1)
}

// startEmbedded runs the embedded database on dir (a fresh t.TempDir(), or one an earlier
// instance left) until the test ends, and returns its URI.
func startEmbedded(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	uri, done, err := embeddedmongo.Start(ctx, "127.0.0.1:0", dir, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return uri
}

func connect(t *testing.T, uri string) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}
