package embeddedmongo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FerretDB v1 applies an update as read, modify in Go, write back, with nothing holding the
// document in between: measured here, 20 concurrent $inc on one document added 1, and 13 of 20
// guarded findOneAndUpdate calls all "won". taskloom's stores rely on MongoDB's per-document
// atomicity (claims, leases, ledgers), so the embedded database sits behind writeSerializer: a
// MongoDB wire-protocol proxy that lets reads through concurrently but runs one write command
// at a time. Production MongoDB needs none of this.

// wire protocol constants (MongoDB OP_MSG).
const (
	opMsg          = 2013
	headerLen      = 16
	maxMessageLen  = 48 << 20
	flagMoreToCome = 1 << 1
)

// writeCommands change data or metadata; they are serialized.
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findandmodify": true, "findAndModify": true,
	"createIndexes": true, "dropIndexes": true, "drop": true, "dropDatabase": true, "create": true,
	"renameCollection": true, "collMod": true,
}

type writeSerializer struct {
	ln      net.Listener
	backend string
	writeMu sync.Mutex
	wg      sync.WaitGroup
	indexer *idIndexer // told of each write command while writeMu is held
}

// serveSerialized accepts clients on ln and relays each to backend until ln is closed.
func serveSerialized(ln net.Listener, backend string, indexer *idIndexer) *writeSerializer {
	s := &writeSerializer{ln: ln, backend: backend, indexer: indexer}
	s.wg.Add(1)
	go s.accept()
	return s
}

func (s *writeSerializer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.relay(c)
	}
}

// close stops accepting; open relays end when their peers close.
func (s *writeSerializer) close() {
	_ = s.ln.Close()
	s.wg.Wait()
	s.indexer.keys.close()
}

// relay forwards one client connection over its own backend connection, message by message,
// holding the write lock from a write command's request until its reply.
func (s *writeSerializer) relay(client net.Conn) {
	defer client.Close()
	backend, err := net.Dial("tcp", s.backend)
	if err != nil {
		return
	}
	defer backend.Close()
	for {
		req, err := readMessage(client)
		if err != nil {
			return
		}
		if err := s.roundTrip(req, client, backend); err != nil {
			return
		}
	}
}

func (s *writeSerializer) roundTrip(req []byte, client, backend net.Conn) error {
	cmd, err := parseCommand(req)
	write := err == nil && writeCommands[cmd.name]
	if write {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	if write {
		req = pushDownIDs(req, cmd, backend)
	}
	if err == nil && cmd.name == "find" {
		req = s.indexer.keys.rewriteFind(req, cmd)
	}
	if write && cmd.name == "update" {
		if parts := splitUpdate(req); parts != nil {
			ordered, ok := parts[0].body.Lookup("ordered").BooleanOK()
			err := runSplitUpdate(parts, ordered || !ok, parts[0].requestID, client, backend)
			s.indexer.after(cmd)
			return err
		}
	}
	if _, err := backend.Write(req); err != nil {
		return err
	}
	if flags(req)&flagMoreToCome != 0 {
		if write {
			s.indexer.after(cmd)
		}
		return nil // unacknowledged: no reply comes
	}
	for {
		resp, err := readMessage(backend)
		if err != nil {
			return err
		}
		last := flags(resp)&flagMoreToCome == 0
		if write && last {
			s.indexer.after(cmd) // before the client has the answer, so its next command finds the index
			resp = duplicateKeyReply(resp)
		}
		if _, err := client.Write(resp); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

func readMessage(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n < headerLen || n > maxMessageLen {
		return nil, fmt.Errorf("wire message length %d out of range", n)
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}

func opCode(msg []byte) int32 { return int32(binary.LittleEndian.Uint32(msg[12:16])) }

// flags are OP_MSG's flagBits (zero for other opcodes).
func flags(msg []byte) uint32 {
	if opCode(msg) != opMsg || len(msg) < headerLen+4 {
		return 0
	}
	return binary.LittleEndian.Uint32(msg[headerLen : headerLen+4])
}

// command is what the proxy needs of an OP_MSG command: its name (the body's first key), the
// collection that key names, and the database ($db).
type command struct {
	name, collection, db string
}

func parseCommand(msg []byte) (command, error) {
	if opCode(msg) != opMsg {
		return command{}, errors.New("not OP_MSG")
	}
	rest := msg[headerLen+4:]
	for len(rest) > 0 {
		kind := rest[0]
		rest = rest[1:]
		if len(rest) < 4 {
			return command{}, errors.New("short section")
		}
		size := int(binary.LittleEndian.Uint32(rest[:4]))
		if size < 5 || size > len(rest) {
			return command{}, errors.New("bad section size")
		}
		if kind == 0 {
			body := bson.Raw(rest[:size])
			elems, err := body.Elements()
			if err != nil || len(elems) == 0 {
				return command{}, errors.New("empty body")
			}
			cmd := command{name: elems[0].Key()}
			cmd.collection, _ = elems[0].Value().StringValueOK()
			cmd.db, _ = body.Lookup("$db").StringValueOK()
			return cmd, nil
		}
		rest = rest[size:] // kind 1: a document sequence, skipped
	}
	return command{}, errors.New("no body section")
}
