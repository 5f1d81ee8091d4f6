package uisession

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/mongox"
)

// ErrNoSession means the cookie names no live session (unknown, expired or logged out).
var ErrNoSession = errors.New("no such session")

// DefaultLifetime is how long a session lasts after sign-in, however active it is; an absolute
// limit bounds the damage of a cookie that leaks.
const DefaultLifetime = 12 * time.Hour

// Session is one signed-in browser.
type Session struct {
	// ID is the SHA-256 of the cookie value: a database dump does not yield usable cookies.
	ID        string    `bson:"_id"`
	UserID    string    `bson:"user_id"`
	Username  string    `bson:"username"`
	CSRF      string    `bson:"csrf"`
	Role      string    `bson:"role,omitempty"`
	CreatedAt time.Time `bson:"created_at"`
	ExpiresAt time.Time `bson:"expires_at"`
}

// CheckCSRF reports whether token is this session's CSRF token (constant time).
func (s *Session) CheckCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) == 1
}

// Admin reports whether the signed-in account may act (see IsAdmin).
func (s *Session) Admin() bool { return IsAdmin(s.Role) }

// Sessions stores sessions in `ui_sessions`.
type Sessions struct {
	c        *mongo.Collection
	lifetime time.Duration
	now      func() time.Time
}

// NewSessions returns the session store over db.ui_sessions.
func NewSessions(db *mongo.Database, lifetime time.Duration) *Sessions {
	if lifetime <= 0 {
		lifetime = DefaultLifetime
	}
	return &Sessions{c: db.Collection("ui_sessions"), lifetime: lifetime, now: time.Now}
}

// Lifetime is how long a new session lasts (the cookie's Max-Age).
func (s *Sessions) Lifetime() time.Duration { return s.lifetime }

// EnsureIndexes indexes expires_at for the purge. It is not a TTL index: FerretDB v1 (the
// embedded dev database) does not implement TTL, so Create purges expired sessions itself.
func (s *Sessions) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, s.c, mongo.IndexModel{Keys: bson.D{{Key: "expires_at", Value: 1}}})
}

// RandomToken returns 32 random bytes, base64url: cookie values and CSRF tokens.
func RandomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Create starts a session for u and returns it with the cookie value, which is never stored.
func (s *Sessions) Create(ctx context.Context, u User) (*Session, string, error) {
	token, err := RandomToken()
	if err != nil {
		return nil, "", err
	}
	csrf, err := RandomToken()
	if err != nil {
		return nil, "", err
	}
	now := s.now().UTC()
	// Sign-ins are rare, so purging here keeps the collection small at no noticeable cost; a
	// failed purge leaves only dead rows that Lookup already refuses.
	_, _ = s.c.DeleteMany(ctx, bson.M{"expires_at": bson.M{"$lte": now}})
	sess := &Session{ID: hashToken(token), UserID: u.ID, Username: u.Username, CSRF: csrf, Role: u.Role,
		CreatedAt: now, ExpiresAt: now.Add(s.lifetime)}
	if _, err := s.c.InsertOne(ctx, sess); err != nil {
		return nil, "", fmt.Errorf("store session: %w", err)
	}
	return sess, token, nil
}

// Lookup returns the live session of a cookie value, or ErrNoSession.
func (s *Sessions) Lookup(ctx context.Context, token string) (*Session, error) {
	if token == "" {
		return nil, ErrNoSession
	}
	var sess Session
	err := s.c.FindOne(ctx, bson.M{"_id": hashToken(token)}).Decode(&sess)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	if !s.now().Before(sess.ExpiresAt) {
		return nil, ErrNoSession
	}
	return &sess, nil
}

// Delete ends the session of a cookie value (logout). Ending an unknown session is not an error.
func (s *Sessions) Delete(ctx context.Context, token string) error {
	if _, err := s.c.DeleteOne(ctx, bson.M{"_id": hashToken(token)}); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
