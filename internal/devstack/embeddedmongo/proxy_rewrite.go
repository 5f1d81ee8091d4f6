package embeddedmongo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Two more places where FerretDB v1 answers differently from MongoDB's contract, mended at the
// proxy so that domain code can be written to the contract alone (internal/storecontract tests
// both):
//
//   - An update command holds a SQLite connection for every statement until the whole command
//     ends (its handler defers each statement's iterator close to the end of the loop), from a
//     pool of 100: a bulk write of ~100 guarded updates — fewer while other clients read — waits
//     forever for a connection. MongoDB takes up to maxWriteBatchSize (100,000) statements per
//     command. The proxy sends long update commands to FerretDB in chunks of updateChunk
//     statements, under the one write lock, and merges the replies into the one reply MongoDB
//     would give.
//   - An update or findAndModify that would violate a unique index fails with InternalError
//     carrying SQLite's "UNIQUE constraint failed"; MongoDB fails it with DuplicateKey (code
//     11000), which is what mongo.IsDuplicateKeyError recognises. The proxy rewrites the reply.

// updateChunk is the most update statements one command to FerretDB carries.
const updateChunk = 16

const flagChecksumPresent = 1 << 0

// opMsg is an OP_MSG taken apart: its flags, body (section kind 0) and document sequences
// (kind 1), in order.
type opMsgParts struct {
	requestID int32
	flags     uint32
	body      bson.Raw
	seqs      []docSequence
}

type docSequence struct {
	id   string
	docs []bson.Raw
}

func parseOpMsg(msg []byte) (opMsgParts, error) {
	if opCode(msg) != opMsg || len(msg) < headerLen+4 {
		return opMsgParts{}, errors.New("not OP_MSG")
	}
	p := opMsgParts{requestID: int32(binary.LittleEndian.Uint32(msg[4:8])), flags: flags(msg)}
	if p.flags&flagChecksumPresent != 0 {
		return opMsgParts{}, errors.New("checksummed OP_MSG")
	}
	rest := msg[headerLen+4:]
	for len(rest) > 0 {
		kind := rest[0]
		rest = rest[1:]
		if len(rest) < 4 {
			return opMsgParts{}, errors.New("short section")
		}
		size := int(binary.LittleEndian.Uint32(rest[:4]))
		if size < 5 || size > len(rest) {
			return opMsgParts{}, errors.New("bad section size")
		}
		sec := rest[:size]
		rest = rest[size:]
		switch kind {
		case 0:
			p.body = bson.Raw(sec)
		case 1:
			seq, err := parseSequence(sec[4:])
			if err != nil {
				return opMsgParts{}, err
			}
			p.seqs = append(p.seqs, seq)
		default:
			return opMsgParts{}, fmt.Errorf("section kind %d", kind)
		}
	}
	if p.body == nil {
		return opMsgParts{}, errors.New("no body section")
	}
	return p, nil
}

func parseSequence(b []byte) (docSequence, error) {
	end := strings.IndexByte(string(b), 0)
	if end < 0 {
		return docSequence{}, errors.New("unterminated sequence identifier")
	}
	seq := docSequence{id: string(b[:end])}
	b = b[end+1:]
	for len(b) > 0 {
		if len(b) < 5 {
			return docSequence{}, errors.New("short document in sequence")
		}
		n := int(binary.LittleEndian.Uint32(b[:4]))
		if n < 5 || n > len(b) {
			return docSequence{}, errors.New("bad document size in sequence")
		}
		seq.docs = append(seq.docs, bson.Raw(b[:n]))
		b = b[n:]
	}
	return seq, nil
}

// encode builds the OP_MSG; responseTo is 0 for a request.
func (p opMsgParts) encode(responseTo int32) []byte {
	out := make([]byte, headerLen+4, headerLen+4+len(p.body)+1)
	binary.LittleEndian.PutUint32(out[4:8], uint32(p.requestID))
	binary.LittleEndian.PutUint32(out[8:12], uint32(responseTo))
	binary.LittleEndian.PutUint32(out[12:16], opMsg)
	binary.LittleEndian.PutUint32(out[16:20], p.flags)
	out = append(out, 0)
	out = append(out, p.body...)
	for _, s := range p.seqs {
		size := 4 + len(s.id) + 1
		for _, d := range s.docs {
			size += len(d)
		}
		out = append(out, 1)
		out = binary.LittleEndian.AppendUint32(out, uint32(size))
		out = append(out, s.id...)
		out = append(out, 0)
		for _, d := range s.docs {
			out = append(out, d...)
		}
	}
	binary.LittleEndian.PutUint32(out[0:4], uint32(len(out)))
	return out
}

// splitUpdate returns req as several update commands of at most updateChunk statements each,
// or nil when it needs no splitting (or carries its statements some other way than the
// document sequence drivers use).
func splitUpdate(req []byte) []opMsgParts {
	p, err := parseOpMsg(req)
	if err != nil || p.flags != 0 || len(p.seqs) != 1 || p.seqs[0].id != "updates" || len(p.seqs[0].docs) <= updateChunk {
		return nil
	}
	var parts []opMsgParts
	all := p.seqs[0].docs
	for start := 0; start < len(all); start += updateChunk {
		part := p
		part.seqs = []docSequence{{id: "updates", docs: all[start:min(start+updateChunk, len(all))]}}
		parts = append(parts, part)
	}
	return parts
}

// updateReply is the part of an update command's reply the merge needs.
type updateReply struct {
	OK          float64    `bson:"ok"`
	N           int64      `bson:"n"`
	NModified   int64      `bson:"nModified"`
	Upserted    []bson.Raw `bson:"upserted,omitempty"`
	WriteErrors []bson.Raw `bson:"writeErrors,omitempty"`
}

// runSplitUpdate sends the chunks to backend one after another and answers the client once, as
// MongoDB answers one update command: counts summed, upserted and writeErrors indexes numbered
// across the whole command, and an ordered command stopped at its first error. A chunk failing
// as a whole is answered as FerretDB answered it (earlier chunks stay applied, as the earlier
// statements of an ordered MongoDB command do).
func runSplitUpdate(parts []opMsgParts, ordered bool, requestID int32, client io.Writer, backend io.ReadWriter) error {
	var merged updateReply
	merged.OK = 1
	offset := 0
	for _, part := range parts {
		if _, err := backend.Write(part.encode(0)); err != nil {
			return err
		}
		resp, err := readMessage(backend)
		if err != nil {
			return err
		}
		rp, err := parseOpMsg(resp)
		var r updateReply
		if err == nil {
			err = bson.Unmarshal(rp.body, &r)
		}
		if err != nil || r.OK != 1 {
			return writeReply(client, resp, requestID)
		}
		merged.N += r.N
		merged.NModified += r.NModified
		merged.Upserted = append(merged.Upserted, shiftIndexes(r.Upserted, offset)...)
		merged.WriteErrors = append(merged.WriteErrors, shiftIndexes(r.WriteErrors, offset)...)
		offset += len(part.seqs[0].docs)
		if ordered && len(r.WriteErrors) > 0 {
			break
		}
	}
	body, err := bson.Marshal(merged)
	if err != nil {
		return err
	}
	_, err = client.Write(opMsgParts{body: body}.encode(requestID))
	return err
}

// writeReply sends a backend reply to the client answering requestID.
func writeReply(client io.Writer, resp []byte, requestID int32) error {
	binary.LittleEndian.PutUint32(resp[8:12], uint32(requestID))
	_, err := client.Write(resp)
	return err
}

// shiftIndexes renumbers the "index" field of each document by offset.
func shiftIndexes(docs []bson.Raw, offset int) []bson.Raw {
	out := make([]bson.Raw, 0, len(docs))
	for _, d := range docs {
		var m bson.D
		if err := bson.Unmarshal(d, &m); err != nil {
			out = append(out, d)
			continue
		}
		for i := range m {
			if m[i].Key == "index" {
				if n, ok := asInt(m[i].Value); ok {
					m[i].Value = int32(n + offset)
				}
			}
		}
		b, err := bson.Marshal(m)
		if err != nil {
			out = append(out, d)
			continue
		}
		out = append(out, b)
	}
	return out
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	}
	return 0, false
}

// duplicateKeyReply rewrites a reply that reports SQLite's unique-constraint failure (as the
// command's error or in writeErrors) into MongoDB's DuplicateKey error, code 11000. It returns
// resp unchanged when there is nothing to rewrite.
func duplicateKeyReply(resp []byte) []byte {
	if !strings.Contains(string(resp), "UNIQUE constraint failed") {
		return resp
	}
	p, err := parseOpMsg(resp)
	if err != nil {
		return resp
	}
	var body bson.D
	if err := bson.Unmarshal(p.body, &body); err != nil {
		return resp
	}
	body = asDuplicateKey(body)
	for i := range body {
		if body[i].Key != "writeErrors" {
			continue
		}
		if errs, ok := body[i].Value.(bson.A); ok {
			for j, e := range errs {
				if d, ok := e.(bson.D); ok {
					errs[j] = asDuplicateKey(d)
				}
			}
		}
	}
	b, err := bson.Marshal(body)
	if err != nil {
		return resp
	}
	p.body = b
	return p.encode(int32(binary.LittleEndian.Uint32(resp[8:12])))
}

// asDuplicateKey turns one error document (with code and errmsg) into a DuplicateKey error
// when its message is SQLite's unique-constraint failure.
func asDuplicateKey(d bson.D) bson.D {
	var msg string
	for _, e := range d {
		if e.Key == "errmsg" {
			msg, _ = e.Value.(string)
		}
	}
	_, after, found := strings.Cut(msg, "UNIQUE constraint failed: ")
	if !found {
		return d
	}
	index, _, _ := strings.Cut(after, " (")
	out := bson.D{}
	for _, e := range d {
		switch e.Key {
		case "code":
			e.Value = int32(11000)
		case "codeName":
			e.Value = "DuplicateKey"
		case "errmsg":
			e.Value = "E11000 duplicate key error " + index
		}
		out = append(out, e)
	}
	return out
}
