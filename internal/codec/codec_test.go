package codec

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func newKey(t *testing.T, id string) Key {
	t.Helper()
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	return Key{ID: id, Secret: secret}
}

func spec(keys ...Key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.ID + ":" + base64.StdEncoding.EncodeToString(k.Secret)
	}
	return strings.Join(parts, ",")
}

func mustCodec(t *testing.T, keys ...Key) *Codec {
	t.Helper()
	c, err := FromSpec(spec(keys...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func plainPayload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEncryptedPayloadsNameTheirKeyAndHideTheData(t *testing.T) {
	c := mustCodec(t, newKey(t, "k2"), newKey(t, "k1"))
	secret := "the user's telegram text"
	enc, err := c.Encode([]*commonpb.Payload{plainPayload(t, secret)})
	if err != nil {
		t.Fatal(err)
	}
	md := enc[0].GetMetadata()
	if got := string(md[converter.MetadataEncoding]); got != Encoding {
		t.Fatalf("encoding = %q, want %q", got, Encoding)
	}
	if got := string(md[MetadataKeyID]); got != "k2" {
		t.Fatalf("key id = %q, want the first key k2", got)
	}
	if bytes.Contains(enc[0].GetData(), []byte(secret)) || bytes.Contains(enc[0].GetData(), []byte("json/plain")) {
		t.Fatal("the ciphertext contains the plaintext or its metadata")
	}
	dec, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := converter.GetDefaultDataConverter().FromPayload(dec[0], &got); err != nil || got != secret {
		t.Fatalf("decoded %q, %v", got, err)
	}
}

// Two encodings of one value differ (a fresh nonce each time), so equal inputs are not visible
// as equal ciphertexts in a history.
func TestEncodingUsesAFreshNonce(t *testing.T) {
	c := mustCodec(t, newKey(t, "k"))
	p := plainPayload(t, "same")
	a, _ := c.Encode([]*commonpb.Payload{p})
	b, _ := c.Encode([]*commonpb.Payload{p})
	if bytes.Equal(a[0].GetData(), b[0].GetData()) {
		t.Fatal("two encodings of one payload are identical")
	}
}

func TestRotationKeepsOldPayloadsReadable(t *testing.T) {
	old, next := newKey(t, "2025-01"), newKey(t, "2025-07")
	before := mustCodec(t, old)
	enc, err := before.Encode([]*commonpb.Payload{plainPayload(t, "written before the rotation")})
	if err != nil {
		t.Fatal(err)
	}
	after := mustCodec(t, next, old) // the new key first: it encrypts; the old one still decrypts
	dec, err := after.Decode(enc)
	if err != nil {
		t.Fatalf("old payload after rotation: %v", err)
	}
	var got string
	if err := converter.GetDefaultDataConverter().FromPayload(dec[0], &got); err != nil || got != "written before the rotation" {
		t.Fatalf("decoded %q, %v", got, err)
	}
	fresh, _ := after.Encode([]*commonpb.Payload{plainPayload(t, "new")})
	if id := string(fresh[0].GetMetadata()[MetadataKeyID]); id != "2025-07" {
		t.Fatalf("after rotation payloads are encrypted with %q", id)
	}
	// Dropping the old key too early is a clear error, not garbage.
	_, err = mustCodec(t, next).Decode(enc)
	var unknown *UnknownKeyError
	if !errors.As(err, &unknown) || unknown.KeyID != "2025-01" || !strings.Contains(err.Error(), "TEMPORAL_CODEC_KEYS") {
		t.Fatalf("decode with the old key removed: %v", err)
	}
}

func TestTamperedPayloadsFailToDecode(t *testing.T) {
	k := newKey(t, "k1")
	c := mustCodec(t, k, newKey(t, "k0"))
	encode := func() *commonpb.Payload {
		enc, err := c.Encode([]*commonpb.Payload{plainPayload(t, map[string]int{"amount": 100})})
		if err != nil {
			t.Fatal(err)
		}
		return enc[0]
	}
	flipped := encode()
	flipped.Data[len(flipped.Data)-1] ^= 1
	relabelled := encode()
	relabelled.Metadata[MetadataKeyID] = []byte("k0")
	truncated := encode()
	truncated.Data = truncated.Data[:10]
	noKeyID := encode()
	delete(noKeyID.Metadata, MetadataKeyID)
	for name, p := range map[string]*commonpb.Payload{"flipped bit": flipped, "other key id": relabelled, "truncated": truncated, "no key id": noKeyID} {
		if _, err := c.Decode([]*commonpb.Payload{p}); err == nil {
			t.Errorf("%s: decoded without error", name)
		} else if !strings.Contains(err.Error(), "codec:") {
			t.Errorf("%s: error %q does not say it is the codec's", name, err)
		}
	}
}

// Histories recorded before encryption was turned on hold plain payloads: they decode as they are.
func TestPlainPayloadsPassThrough(t *testing.T) {
	c := mustCodec(t, newKey(t, "k"))
	p := plainPayload(t, "plain")
	dec, err := c.Decode([]*commonpb.Payload{p})
	if err != nil || dec[0] != p {
		t.Fatalf("plain payload: %v, %v", dec, err)
	}
}

func TestDataConverterRoundTrip(t *testing.T) {
	dc := DataConverter(mustCodec(t, newKey(t, "k")))
	type input struct{ UserText string }
	p, err := dc.ToPayload(input{UserText: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
		t.Fatalf("data converter payload metadata %v", p.GetMetadata())
	}
	var got input
	if err := dc.FromPayload(p, &got); err != nil || got.UserText != "hello" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &got); err == nil {
		t.Fatal("a converter without the codec read an encrypted payload")
	}
}

func TestParseKeysRejectsBadRings(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(make([]byte, KeySize))
	for spec, want := range map[string]string{
		"":                         "no key",
		"nokey":                    "id:base64key",
		":" + good:                 "id:base64key",
		"a:" + good + ",a:" + good: "twice",
		"a:not-base64!":            "base64",
		"a:" + base64.StdEncoding.EncodeToString([]byte("short")): "32",
	} {
		_, err := ParseKeys(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeys(%q) = %v, want an error mentioning %q", spec, err, want)
		}
	}
	if c, err := FromSpec("  "); c != nil || err != nil {
		t.Fatalf("empty spec: %v, %v (want no codec)", c, err)
	}
}
