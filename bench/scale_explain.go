package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/mongox"
)

// notExamined is the series' "documents examined" on the embedded stand-in: FerretDB v1's explain
// answers with its query plan but no executionStats, so there is nothing to count.
const notExamined = "not available on the stand-in (FerretDB's explain has no executionStats; the series explains only on a real MongoDB, MONGO_URI)"

// explainer counts the documents MongoDB examines for a call's commands: it re-runs each of them
// under explain with executionStats verbosity (the query planner runs the command's plan without
// writing) and sums every totalDocsExamined in the answers. Nil on the stand-in.
type explainer struct{ db *mongo.Database }

// newExplainer is an explainer when db's server is a MongoDB (buildInfo has no ferretdbVersion).
func newExplainer(ctx context.Context, db *mongo.Database) *explainer {
	var info bson.M
	if err := db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return nil
	}
	if _, ferret := info["ferretdbVersion"]; ferret {
		return nil
	}
	return &explainer{db: db}
}

// explainable are the commands explain takes; a getMore continues a find already explained.
var explainable = map[string]bool{"find": true, "aggregate": true, "count": true, "distinct": true,
	"update": true, "delete": true, "findAndModify": true}

// sessionFields are what the driver adds to a command; explain wants the command alone.
var sessionFields = map[string]bool{"$db": true, "lsid": true, "$clusterTime": true, "txnNumber": true,
	"$readPreference": true, "readConcern": true, "writeConcern": true}

// examined is the documents cmds examined, by explaining each of them.
func (e *explainer) examined(ctx context.Context, cmds []mongox.Command) string {
	var n int64
	stats := false
	for _, c := range cmds {
		if !explainable[c.Name] {
			continue
		}
		elems, err := c.Body.Elements()
		if err != nil {
			return fmt.Sprintf("explain: %v", err)
		}
		var inner bson.D
		for _, el := range elems {
			if !sessionFields[el.Key()] {
				inner = append(inner, bson.E{Key: el.Key(), Value: el.Value()})
			}
		}
		var out bson.Raw
		err = e.db.RunCommand(ctx, bson.D{{Key: "explain", Value: inner}, {Key: "verbosity", Value: "executionStats"}}).Decode(&out)
		if err != nil {
			return fmt.Sprintf("explain %s: %v", c.Name, err)
		}
		d, ok := docsExamined(out)
		n, stats = n+d, stats || ok
	}
	if !stats {
		return "not reported (the server's explain has no executionStats)"
	}
	return fmt.Sprint(n)
}

// docsExamined sums every totalDocsExamined in an explain answer (a find has one, an aggregate
// one per cursor stage or shard); found says whether there was any.
func docsExamined(doc bson.Raw) (n int64, found bool) {
	elems, _ := doc.Elements()
	for _, el := range elems {
		v := el.Value()
		var d int64
		var ok bool
		switch {
		case el.Key() == "totalDocsExamined":
			d, ok = v.AsInt64OK()
		case v.Type == bson.TypeEmbeddedDocument:
			d, ok = docsExamined(v.Document())
		case v.Type == bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, x := range vals {
				if x.Type == bson.TypeEmbeddedDocument {
					xd, xok := docsExamined(x.Document())
					d, ok = d+xd, ok || xok
				}
			}
		}
		n, found = n+d, found || ok
	}
	return n, found
}
