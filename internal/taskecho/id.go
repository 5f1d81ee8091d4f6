package taskecho

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ID is a document's _id: the 12 bytes of a MongoDB ObjectID (four bytes of creation second, then
// random), so ids sort by creation. It encodes itself as an ObjectID, so the store writes and
// reads it as one without the model naming the driver.
type ID [12]byte

// bsonObjectID is the BSON type byte of an ObjectID.
const bsonObjectID = 0x07

// NewID returns a fresh id stamped with the current second.
func NewID() ID {
	var id ID
	binary.BigEndian.PutUint32(id[:4], uint32(time.Now().Unix()))
	_, _ = rand.Read(id[4:]) // crypto/rand.Read never fails on supported platforms
	return id
}

// ParseID reads the 24 hex digits Hex writes.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 24 {
		return id, fmt.Errorf("id %q: want 24 hex digits", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("id %q: %w", s, err)
	}
	return id, nil
}

// Hex is the id in 24 hex digits.
func (id ID) Hex() string { return hex.EncodeToString(id[:]) }

// String is Hex.
func (id ID) String() string { return id.Hex() }

// IsZero reports an unset id (omitted on insert, so the store assigns one).
func (id ID) IsZero() bool { return id == ID{} }

// MarshalBSONValue encodes the id as an ObjectID.
func (id ID) MarshalBSONValue() (byte, []byte, error) { return bsonObjectID, id[:], nil }

// UnmarshalBSONValue decodes an ObjectID.
func (id *ID) UnmarshalBSONValue(typ byte, data []byte) error {
	if typ != bsonObjectID || len(data) != len(id) {
		return errors.New("taskecho id: not an ObjectID")
	}
	copy(id[:], data)
	return nil
}
