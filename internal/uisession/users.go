package uisession

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/crypto/bcrypt"

	"github.com/taskloom/taskloom/internal/mongox"
)

// Errors a caller shows to the person at the keyboard, in the UI's language (Chinese, as
// TaskEcho's own messages).
var (
	// ErrAlreadyInitialized: the first-run admin exists, so init is closed for good.
	ErrAlreadyInitialized = errors.New("管理员已存在，请直接登录")
	// ErrBadCredentials deliberately does not say whether the user or the password was wrong.
	ErrBadCredentials = errors.New("用户名或密码错误")
	// ErrUsernameTaken: another account already has the username.
	ErrUsernameTaken = errors.New("用户名已存在")
)

// BcryptCost is the work factor of stored password hashes.
const BcryptCost = 12

// Password and username bounds. bcrypt ignores bytes past 72, so longer passwords are refused
// rather than silently truncated.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 72
	MaxUsernameLen = 64
)

// initialUserID is the _id of the first-run administrator. Its unique _id makes init atomic
// without a transaction: two concurrent inits race on one insert and exactly one wins.
const initialUserID = "initial-admin"

// User is a UI account.
type User struct {
	ID       string `bson:"_id"`
	Username string `bson:"username"`
	Hash     []byte `bson:"password_hash"`
	// Role is RoleAdmin or RoleRead; accounts stored before roles existed (the first-run
	// administrator) have none and are administrators.
	Role      string    `bson:"role,omitempty"`
	CreatedAt time.Time `bson:"created_at"`
}

// Roles of a UI account: an administrator may act (resume, drop, pin, sweep, edit); a reader
// only looks.
const (
	RoleAdmin = "admin"
	RoleRead  = "read"
)

// IsAdmin reports whether role may act; the empty role is the first-run administrator's.
func IsAdmin(role string) bool { return role == "" || role == RoleAdmin }

// Users stores UI accounts in `ui_users`.
type Users struct {
	c *mongo.Collection
	// dummy is a hash compared against when the username is unknown, so that a wrong username
	// costs as much time as a wrong password and does not reveal which accounts exist. It is
	// made on first use: hashing at construction would slow every API start.
	dummyOnce sync.Once
	dummy     []byte
}

// NewUsers returns the account store over db.ui_users.
func NewUsers(db *mongo.Database) *Users {
	return &Users{c: db.Collection("ui_users")}
}

func (u *Users) dummyHash() []byte {
	u.dummyOnce.Do(func() {
		// An error leaves dummy nil; the comparison then fails fast, which only weakens the
		// timing equalisation, never the check itself.
		u.dummy, _ = bcrypt.GenerateFromPassword([]byte("taskloom-timing-equalizer"), BcryptCost)
	})
	return u.dummy
}

// EnsureIndexes makes usernames unique.
func (u *Users) EnsureIndexes(ctx context.Context) error {
	return mongox.EnsureIndexes(ctx, u.c,
		mongo.IndexModel{Keys: bson.D{{Key: "username", Value: 1}}, Options: options.Index().SetUnique(true)})
}

// Initialized reports whether the first-run administrator exists.
func (u *Users) Initialized(ctx context.Context) (bool, error) {
	n, err := u.c.CountDocuments(ctx, bson.M{"_id": initialUserID}, options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("check ui users: %w", err)
	}
	return n > 0, nil
}

// ValidateCredentials checks a new username and password; the error says what is wrong in
// words the UI shows as they are.
func ValidateCredentials(username, password string) error {
	name := strings.TrimSpace(username)
	switch {
	case name == "":
		return errors.New("用户名不能为空")
	case utf8.RuneCountInString(name) > MaxUsernameLen:
		return fmt.Errorf("用户名不能超过 %d 个字符", MaxUsernameLen)
	case len(password) < MinPasswordLen:
		return fmt.Errorf("密码至少需要 %d 个字符", MinPasswordLen)
	case len(password) > MaxPasswordLen:
		return fmt.Errorf("密码不能超过 %d 个字节", MaxPasswordLen)
	}
	return nil
}

// Init creates the first-run administrator. It fails with ErrAlreadyInitialized once one
// exists, whoever asks: the init form is not a way to add or replace accounts.
func (u *Users) Init(ctx context.Context, username, password string) (User, error) {
	if err := ValidateCredentials(username, password); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), BcryptCost)
	if err != nil {
		return User{}, fmt.Errorf("hash password: %w", err)
	}
	usr := User{ID: initialUserID, Username: strings.TrimSpace(username), Hash: hash, CreatedAt: time.Now().UTC()}
	if _, err := u.c.InsertOne(ctx, usr); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return User{}, ErrAlreadyInitialized
		}
		return User{}, fmt.Errorf("create administrator: %w", err)
	}
	return usr, nil
}

// AddReader creates a read-only account (the operations console shows it every page and no
// action). Its username is unique through the username index; a taken name fails.
func (u *Users) AddReader(ctx context.Context, username, password string) (User, error) {
	if err := ValidateCredentials(username, password); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), BcryptCost)
	if err != nil {
		return User{}, fmt.Errorf("hash password: %w", err)
	}
	name := strings.TrimSpace(username)
	usr := User{ID: "reader:" + name, Username: name, Hash: hash, Role: RoleRead, CreatedAt: time.Now().UTC()}
	if _, err := u.c.InsertOne(ctx, usr); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return User{}, ErrUsernameTaken
		}
		return User{}, fmt.Errorf("create reader: %w", err)
	}
	return usr, nil
}

// Authenticate returns the user whose username and password match, or ErrBadCredentials.
func (u *Users) Authenticate(ctx context.Context, username, password string) (User, error) {
	var usr User
	err := u.c.FindOne(ctx, bson.M{"username": strings.TrimSpace(username)}).Decode(&usr)
	if errors.Is(err, mongo.ErrNoDocuments) {
		_ = bcrypt.CompareHashAndPassword(u.dummyHash(), []byte(password))
		return User{}, ErrBadCredentials
	}
	if err != nil {
		return User{}, fmt.Errorf("find user: %w", err)
	}
	if bcrypt.CompareHashAndPassword(usr.Hash, []byte(password)) != nil {
		return User{}, ErrBadCredentials
	}
	return usr, nil
}
