// Package codec encrypts Temporal payloads with AES-256-GCM, so that what workflows carry (users'
// inputs, Telegram texts, vendors' outputs) is stored in the cluster's histories as ciphertext.
// Every Temporal client and worker of taskloom uses it when TEMPORAL_CODEC_KEYS is set; the codec
// server (`starter codec-server`) decodes for the Web UI and the CLI with the same keys.
//
// A key ring holds several keys for rotation: the first encrypts, every one decrypts, and each
// encrypted payload names the id of its key in its metadata. Rotating is putting a new key first
// and keeping the old ones until no history that uses them is retained.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

const (
	// Encoding is the metadata encoding of an encrypted payload.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the key a payload was encrypted with.
	MetadataKeyID = "encryption-key-id"
	// KeySize is the length of an AES-256 key in bytes.
	KeySize = 32
)

// Key is one named AES-256 key.
type Key struct {
	ID     string
	Secret []byte
}

// ParseKeys reads a key ring written as "id1:base64key,id2:base64key" (standard base64 of 32
// bytes; `openssl rand -base64 32` makes one). The first key is the one that encrypts.
func ParseKeys(spec string) ([]Key, error) {
	var keys []Key
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, b64, ok := strings.Cut(item, ":")
		if !ok || id == "" {
			return nil, errors.New(`each key must be written id:base64key (e.g. "k2025:…,k2024:…")`)
		}
		if seen[id] {
			return nil, fmt.Errorf("key id %q appears twice", id)
		}
		secret, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("key %q is not standard base64: %w", id, err)
		}
		if len(secret) != KeySize {
			return nil, fmt.Errorf("key %q is %d bytes; AES-256 needs %d (openssl rand -base64 32)", id, len(secret), KeySize)
		}
		seen[id] = true
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	if len(keys) == 0 {
		return nil, errors.New("no key")
	}
	return keys, nil
}

// Codec is a converter.PayloadCodec over a key ring.
type Codec struct {
	encryptWith string
	ciphers     map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec that encrypts with keys[0] and decrypts with any of keys.
func New(keys []Key) (*Codec, error) {
	if len(keys) == 0 {
		return nil, errors.New("codec: no key")
	}
	c := &Codec{encryptWith: keys[0].ID, ciphers: make(map[string]cipher.AEAD, len(keys))}
	for _, k := range keys {
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("codec: key %q: %w", k.ID, err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("codec: key %q: %w", k.ID, err)
		}
		c.ciphers[k.ID] = gcm
	}
	return c, nil
}

// FromSpec is New over ParseKeys(spec); an empty spec is no codec (nil, nil).
func FromSpec(spec string) (*Codec, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	keys, err := ParseKeys(spec)
	if err != nil {
		return nil, fmt.Errorf("TEMPORAL_CODEC_KEYS: %w", err)
	}
	return New(keys)
}

// DataConverter is the SDK's default converter with its payloads encrypted by c.
func DataConverter(c *Codec) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// Encode encrypts each payload, whole (metadata and data), with the first key. The key id is
// also the AEAD's additional data, so a payload relabelled with another key id fails to decrypt.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	aead := c.ciphers[c.encryptWith]
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("codec: marshal payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("codec: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetadataKeyID:              []byte(c.encryptWith),
			},
			Data: aead.Seal(nonce, nonce, plain, []byte(c.encryptWith)),
		}
	}
	return out, nil
}

// Decode decrypts the payloads this codec encrypted and passes every other one through
// unchanged: histories written before encryption was turned on stay readable.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		plain, err := c.decrypt(p)
		if err != nil {
			return nil, err
		}
		out[i] = plain
	}
	return out, nil
}

func (c *Codec) decrypt(p *commonpb.Payload) (*commonpb.Payload, error) {
	id := string(p.GetMetadata()[MetadataKeyID])
	aead, ok := c.ciphers[id]
	if !ok {
		return nil, &UnknownKeyError{KeyID: id}
	}
	data := p.GetData()
	if len(data) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("codec: payload encrypted with key %q is truncated (%d bytes)", id, len(data))
	}
	nonce, sealed := data[:aead.NonceSize()], data[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, []byte(id))
	if err != nil {
		return nil, fmt.Errorf("codec: payload encrypted with key %q does not authenticate (tampered, or another key under that id): %w", id, err)
	}
	var decoded commonpb.Payload
	if err := proto.Unmarshal(plain, &decoded); err != nil {
		return nil, fmt.Errorf("codec: decrypted payload of key %q: %w", id, err)
	}
	return &decoded, nil
}

// UnknownKeyError is a payload encrypted with a key the ring does not hold: the key was removed
// from TEMPORAL_CODEC_KEYS while histories still use it, or the process has another ring.
type UnknownKeyError struct{ KeyID string }

func (e *UnknownKeyError) Error() string {
	if e.KeyID == "" {
		return "codec: encrypted payload names no key id (metadata " + MetadataKeyID + " is missing)"
	}
	return fmt.Sprintf("codec: payload was encrypted with key id %q, which TEMPORAL_CODEC_KEYS does not hold", e.KeyID)
}
