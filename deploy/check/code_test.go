package check

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/codec"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
	"github.com/taskloom/taskloom/starter/cli"
)

// This file reads the facts the deployment files must agree with from taskloom's code.

var repoRoot = filepath.Join("..", "..")

var requiredRE = regexp.MustCompile(`([A-Z][A-Z0-9_]+): required when TASKLOOM_ENV=prod`)

// prodRequired is every variable a process refuses to start without when TASKLOOM_ENV=prod: those
// the configuration's validation names, and those a process checks itself with the same words
// (the API's INTERNAL_CALLBACK_SECRET), found in the sources.
func prodRequired(t *testing.T) []string {
	t.Helper()
	set := map[string]bool{}
	c := config.Defaults()
	c.Env = "prod"
	if err := c.Validate(); err != nil {
		for _, m := range requiredRE.FindAllStringSubmatch(err.Error(), -1) {
			set[m[1]] = true
		}
	}
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".bin" || d.Name() == ".data" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range requiredRE.FindAllStringSubmatch(string(src), -1) {
			set[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !set["MONGO_URI"] || !set["INTERNAL_CALLBACK_SECRET"] {
		t.Fatalf("found prod requirements %v: the way they are written changed, adjust prodRequired", set)
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// configVariables is every environment variable the configuration reads.
func configVariables() []string {
	var names []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.SplitN(f.Tag.Get("env"), ",", 2)[0]
			if f.Type.Kind() == reflect.Struct && tag == "" {
				walk(f.Type)
			} else if tag != "" {
				names = append(names, tag)
			}
		}
	}
	walk(reflect.TypeOf(config.Config{}))
	return names
}

// secretRE names the variables whose values are secrets. MONGO_URI and REDIS_URL carry the
// stores' passwords when they have any.
var secretRE = regexp.MustCompile(`(SECRET|TOKEN|PASSWORD|_API_KEY|ADMIN_KEY|CODEC_KEYS)$|^(MONGO_URI|REDIS_URL)$`)

func secretVariables() []string {
	var out []string
	for _, n := range configVariables() {
		if secretRE.MatchString(n) {
			out = append(out, n)
		}
	}
	return out
}

// defaultPort is the port of a listen address's default in the configuration.
func defaultPort(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// routes are the API router's and the codec server's routes ("GET /healthz"), built as the
// processes build them over dependencies that are not there (every client connects lazily).
var routes = sync.OnceValues(func() (map[string]map[string]bool, error) {
	cfg := config.Defaults()
	cfg.Mongo.URI, cfg.Redis.URL, cfg.Temporal.Address = "mongodb://127.0.0.1:1", "redis://127.0.0.1:1/0", "127.0.0.1:1"
	ctx := context.Background()
	p, err := platform.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	svc, err := taskechowire.FromPlatform(p)
	if err != nil {
		return nil, err
	}
	e, err := api.New(ctx, p, svc)
	if err != nil {
		return nil, err
	}
	ring, err := codec.New([]codec.Key{{ID: "k", Secret: make([]byte, codec.KeySize)}})
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{"api": {}, "codec-server": {}}
	for _, r := range e.Routes() {
		out["api"][r.Method+" "+r.Path] = true
	}
	for _, r := range api.NewCodecServer(p, ring).Routes() {
		out["codec-server"][r.Method+" "+r.Path] = true
	}
	return out, nil
})

// isStarterCommand reports whether args name a runnable command of the starter binary.
func isStarterCommand(args []string) bool {
	root := cli.Root()
	c, rest, err := root.Find(args)
	return err == nil && c != root && c.Runnable() && len(rest) == 0
}
