package embeddedmongo

import (
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The lookups of one command cost one round trip: the proxy sends every find before it reads a
// reply. Under load each round trip waits for both FerretDB's and the proxy's goroutine to be
// scheduled, and the lookups run under the write lock. The backend here answers only after it
// has read all the finds; lookups sent one at a time would wait for it forever.
func TestLookupsOfOneCommandAreSentTogether(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	ids := []string{"a", "bb", "missing", "ccc"}
	go answerAllAtOnce(server, len(ids))
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	vals := make([]bson.RawValue, len(ids))
	for i, id := range ids {
		vals[i] = bson.RawValue{Type: bson.TypeString, Value: bsoncoreString(id)}
	}
	docs, ok := findByIDs(client, command{name: "update", collection: "things", db: "d"}, vals)
	if !ok {
		t.Fatal("lookups failed")
	}
	for i, id := range ids {
		got, _ := docs[i].Lookup("_id").StringValueOK()
		if want := map[bool]string{true: "", false: id}[id == "missing"]; got != want {
			t.Errorf("lookup %d (%s) found _id %q; want %q", i, id, got, want)
		}
	}
}

// answerAllAtOnce reads n finds by _id, then answers each in order, as FerretDB would: the
// document when its _id is not "missing", an empty batch when it is.
func answerAllAtOnce(conn net.Conn, n int) {
	var reqs []opMsgParts
	for range n {
		msg, err := readMessage(conn)
		if err != nil {
			return
		}
		p, err := parseOpMsg(msg)
		if err != nil {
			return
		}
		reqs = append(reqs, p)
	}
	for _, p := range reqs {
		id := p.body.Lookup("filter", "_id").StringValue()
		batch := bson.A{}
		if id != "missing" {
			batch = append(batch, bson.D{{Key: "_id", Value: id}})
		}
		body, _ := bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: batch}, {Key: "id", Value: int64(0)}}}, {Key: "ok", Value: 1.0}})
		if _, err := conn.Write(opMsgParts{body: body}.encode(p.requestID)); err != nil {
			return
		}
	}
}

// A reply that answers another request than the one expected fails the lookups, rather than
// deciding a guard from the wrong document.
func TestLookupReplyForAnotherRequestFails(t *testing.T) {
	body, _ := bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: bson.A{bson.D{{Key: "_id", Value: "a"}}}}}}, {Key: "ok", Value: 1.0}})
	resp := opMsgParts{body: body}.encode(lookupID(7))
	if _, ok := lookupReply(resp, lookupID(8)); ok {
		t.Error("a reply to request 7 was taken as the answer to request 8")
	}
	if doc, ok := lookupReply(resp, lookupID(7)); !ok || doc == nil {
		t.Error("the reply to request 7 was not taken as its answer")
	}
}
