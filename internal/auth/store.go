package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/singleflight"

	"github.com/taskloom/taskloom/internal/joinread"
	"github.com/taskloom/taskloom/internal/mongox"
)

// ErrNotFound is returned for an unknown key id.
var ErrNotFound = errors.New("api key not found")

// lastUsedGranularity bounds how often a key's last_used_at is written, so a busy client does
// not turn every read into a write.
const lastUsedGranularity = time.Minute

// Store keeps API keys in the `api_keys` collection.
type Store struct {
	c   *mongo.Collection
	now func() time.Time
	// verified remembers recently verified active keys by hash (see WithCache); nil when uncached.
	verified *expirable.LRU[string, Key]
	// reading joins the concurrent lookups of one hash into one read: a client's burst whose
	// key is not (or no longer) remembered costs one find, not one per request.
	reading singleflight.Group
}

// NewStore returns a store over db.api_keys.
func NewStore(db *mongo.Database) *Store {
	return &Store{c: db.Collection("api_keys"), now: time.Now}
}

// EnsureIndexes creates the unique hash index the lookup relies on, the listing's, and the one
// HasActive reads.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.c,
		mongo.IndexModel{Keys: bson.D{{Key: "hash", Value: 1}}, Options: options.Index().SetUnique(true)},
		mongo.IndexModel{Keys: bson.D{{Key: "created_at", Value: -1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "permission", Value: 1}, {Key: "active", Value: 1}}},
	)
}

// NewKey describes a key to create.
type NewKey struct {
	Name       string
	Permission Permission
	ProjectID  string
	// Plaintext, when set, is stored instead of a generated key (dev bootstrap only).
	Plaintext string
}

// Create stores a new key and returns it with its plaintext, which is shown once.
func (s *Store) Create(ctx context.Context, nk NewKey) (Key, string, error) {
	if !nk.Permission.Valid() {
		return Key{}, "", fmt.Errorf("permission %q is not read|write|admin", nk.Permission)
	}
	plain := nk.Plaintext
	if plain == "" {
		var err error
		if plain, err = Generate(); err != nil {
			return Key{}, "", err
		}
	}
	now := s.now().UTC()
	k := Key{
		ID: uuid.NewString(), Name: nk.Name, Hash: Hash(plain), Prefix: Mask(plain),
		Permission: nk.Permission, ProjectID: nk.ProjectID, Active: true, CreatedAt: now, UpdatedAt: now,
	}
	if _, err := s.c.InsertOne(ctx, k); err != nil {
		return Key{}, "", fmt.Errorf("insert api key %q: %w", nk.Name, err)
	}
	return k, plain, nil
}

// Ensure makes plaintext an active key with the given name and permission, creating it when
// absent; it is how a configured admin key survives restarts without duplicates.
func (s *Store) Ensure(ctx context.Context, plaintext, name string, perm Permission) error {
	defer s.forget()
	now := s.now().UTC()
	_, err := s.c.UpdateOne(ctx, bson.M{"hash": Hash(plaintext)}, bson.M{
		"$set": bson.M{"active": true, "permission": perm, "updated_at": now},
		"$setOnInsert": bson.M{"_id": uuid.NewString(), "name": name, "prefix": Mask(plaintext),
			"created_at": now},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("ensure api key %q: %w", name, err)
	}
	return nil
}

// HasActive reports whether an active key with permission perm that is not bound to a project
// exists: `starter setup` creates the first admin key only when none does.
func (s *Store) HasActive(ctx context.Context, perm Permission) (bool, error) {
	n, err := s.c.CountDocuments(ctx, bson.M{"active": true, "permission": perm, "project_id": bson.M{"$in": bson.A{nil, ""}}},
		options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("count active %s keys: %w", perm, err)
	}
	return n > 0, nil
}

// Lookup finds the active key for a plaintext. It returns ErrNotFound for unknown or inactive
// keys, and records last use at most once a minute.
func (s *Store) Lookup(ctx context.Context, plaintext string) (Key, error) {
	hash := Hash(plaintext)
	if k, ok := s.remembered(hash); ok {
		return k, nil
	}
	return joinread.Do(&s.reading, ctx, hash, func(ctx context.Context) (Key, error) { return s.read(ctx, hash) })
}

// read loads the active key with hash, touches its last use and remembers it.
func (s *Store) read(ctx context.Context, hash string) (Key, error) {
	var k Key
	err := s.c.FindOne(ctx, bson.M{"hash": hash}).Decode(&k)
	if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && !k.Active) {
		return Key{}, ErrNotFound
	}
	if err != nil {
		return Key{}, fmt.Errorf("look up api key: %w", err)
	}
	now := s.now().UTC()
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > lastUsedGranularity {
		// Best effort: a failed touch must not fail the request it belongs to.
		_, _ = s.c.UpdateOne(ctx, bson.M{"_id": k.ID}, bson.M{"$set": bson.M{"last_used_at": now}})
	}
	s.remember(k)
	return k, nil
}

// Get returns a key by id.
func (s *Store) Get(ctx context.Context, id string) (Key, error) {
	var k Key
	err := s.c.FindOne(ctx, bson.M{"_id": id}).Decode(&k)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Key{}, ErrNotFound
	}
	if err != nil {
		return Key{}, fmt.Errorf("get api key %s: %w", id, err)
	}
	return k, nil
}

// ListFilter narrows List.
type ListFilter struct {
	ProjectID string
	Active    *bool
	Skip      int64
	Limit     int64
}

// List returns keys newest first and the total count matching the filter.
func (s *Store) List(ctx context.Context, f ListFilter) ([]Key, int64, error) {
	q := bson.M{}
	if f.ProjectID != "" {
		q["project_id"] = f.ProjectID
	}
	if f.Active != nil {
		q["active"] = *f.Active
	}
	total, err := s.c.CountDocuments(ctx, q)
	if err != nil {
		return nil, 0, fmt.Errorf("count api keys: %w", err)
	}
	opts := options.Find().SetSort(bson.D{{Key: "created_at", Value: -1}}).SetSkip(f.Skip)
	if f.Limit > 0 {
		opts.SetLimit(f.Limit)
	}
	cur, err := s.c.Find(ctx, q, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("list api keys: %w", err)
	}
	keys := []Key{}
	if err := cur.All(ctx, &keys); err != nil {
		return nil, 0, fmt.Errorf("read api keys: %w", err)
	}
	return keys, total, nil
}

// Update changes a key's mutable fields; nil fields are left alone.
type Update struct {
	Name       *string
	Permission *Permission
	ProjectID  *string
	Active     *bool
}

// Apply updates key id and returns the result.
func (s *Store) Apply(ctx context.Context, id string, u Update) (Key, error) {
	set := bson.M{"updated_at": s.now().UTC()}
	if u.Name != nil {
		set["name"] = *u.Name
	}
	if u.Permission != nil {
		if !u.Permission.Valid() {
			return Key{}, fmt.Errorf("permission %q is not read|write|admin", *u.Permission)
		}
		set["permission"] = *u.Permission
	}
	if u.ProjectID != nil {
		set["project_id"] = *u.ProjectID
	}
	if u.Active != nil {
		set["active"] = *u.Active
	}
	defer s.forget()
	var k Key
	err := s.c.FindOneAndUpdate(ctx, bson.M{"_id": id}, bson.M{"$set": set},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&k)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Key{}, ErrNotFound
	}
	if err != nil {
		return Key{}, fmt.Errorf("update api key %s: %w", id, err)
	}
	return k, nil
}

// Revoke deactivates key id; the record stays for audit.
func (s *Store) Revoke(ctx context.Context, id string) error {
	f := false
	_, err := s.Apply(ctx, id, Update{Active: &f})
	return err
}

// Delete removes key id.
func (s *Store) Delete(ctx context.Context, id string) error {
	defer s.forget()
	res, err := s.c.DeleteOne(ctx, bson.M{"_id": id})
	if err != nil {
		return fmt.Errorf("delete api key %s: %w", id, err)
	}
	if res.DeletedCount == 0 {
		return ErrNotFound
	}
	return nil
}
