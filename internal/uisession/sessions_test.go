package uisession

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestInitIsFirstRunOnlyAndAtomic(t *testing.T) {
	// bcrypt at cost 12 takes seconds per hash under -race on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	users := NewUsers(testenv.Mongo(t))
	if err := users.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := users.Initialized(ctx); err != nil || ok {
		t.Fatalf("fresh store initialized=%v err=%v", ok, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = users.Init(ctx, "admin", "correct horse")
		}(i)
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrAlreadyInitialized):
			t.Fatalf("concurrent init: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent inits succeeded, want exactly 1", won)
	}
	if _, err := users.Init(ctx, "other", "another password"); !errors.Is(err, ErrAlreadyInitialized) {
		t.Fatalf("second init: %v", err)
	}
	if _, err := users.Authenticate(ctx, "admin", "correct horse"); err != nil {
		t.Fatalf("login: %v", err)
	}
	for _, c := range [][2]string{{"admin", "wrong password"}, {"nobody", "correct horse"}} {
		if _, err := users.Authenticate(ctx, c[0], c[1]); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("login %q: %v, want ErrBadCredentials", c[0], err)
		}
	}
}

func TestValidateCredentials(t *testing.T) {
	long := string(make([]byte, MaxPasswordLen+1))
	for _, c := range []struct{ user, pass string }{{"", "password1"}, {"  ", "password1"}, {"a", "short"}, {"a", long}} {
		if ValidateCredentials(c.user, c.pass) == nil {
			t.Errorf("ValidateCredentials(%q, len %d) accepted", c.user, len(c.pass))
		}
	}
	if err := ValidateCredentials("admin", "long enough"); err != nil {
		t.Fatal(err)
	}
}

func TestSessionLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := NewSessions(testenv.Mongo(t), time.Hour)
	if err := store.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	sess, token, err := store.Create(ctx, User{ID: "u1", Username: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if sess.ID == token || sess.CSRF == "" || sess.CSRF == token {
		t.Fatalf("session id must be a hash of the token and the CSRF token distinct: %+v", sess)
	}
	got, err := store.Lookup(ctx, token)
	if err != nil || got.Username != "admin" || !got.CheckCSRF(sess.CSRF) || got.CheckCSRF("") || got.CheckCSRF(token) {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	if _, err := store.Lookup(ctx, token+"x"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("unknown token: %v", err)
	}
	store.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := store.Lookup(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("expired session: %v", err)
	}
	store.now = time.Now
	if err := store.Delete(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Lookup(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("after logout: %v", err)
	}
}

// A reader's role reaches its sessions; the administrator (no stored role) stays an admin; a
// reader cannot take the administrator's username.
func TestReadersAreReadOnlyAndNamesUnique(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := testenv.Mongo(t)
	users, sessions := NewUsers(db), NewSessions(db, time.Hour)
	if err := users.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	admin, err := users.Init(ctx, "boss", "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	reader, err := users.AddReader(ctx, "viewer", "correct horse")
	if err != nil || reader.Role != RoleRead {
		t.Fatalf("add reader: %+v %v", reader, err)
	}
	if _, err := users.AddReader(ctx, "boss", "correct horse"); !errors.Is(err, ErrUsernameTaken) {
		t.Fatalf("reader with the admin's name: %v", err)
	}
	for _, c := range []struct {
		u     User
		admin bool
	}{{admin, true}, {reader, false}} {
		_, token, err := sessions.Create(ctx, c.u)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sessions.Lookup(ctx, token)
		if err != nil || s.Admin() != c.admin {
			t.Fatalf("%s session admin=%v err=%v, want %v", c.u.Username, s != nil && s.Admin(), err, c.admin)
		}
	}
}
