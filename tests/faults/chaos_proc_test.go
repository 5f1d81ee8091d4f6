//go:build chaos

package faults_test

import (
	"encoding"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/loopback"
	"github.com/taskloom/taskloom/internal/testenv"
)

// The chaos tests kill the worker the way a crashed pod dies: `starter worker` runs as a child
// process of the real binary and gets SIGKILL, so nothing in it gets a chance to finish or
// clean up.

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// starterBinary compiles ./starter once per test binary into a temporary directory.
func starterBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "taskloom-chaos-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "starter")
		cmd := exec.Command("go", "build", "-o", builtBin, "./starter")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./starter: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// workerProc is one `starter worker` child process.
type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startWorkerProcess runs `starter worker` with exactly cfg (rendered as environment
// variables), its output in a log file under the test's temp dir.
func startWorkerProcess(t *testing.T, cfg *config.Config) *workerProc {
	t.Helper()
	c := *cfg
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	c.Worker.MetricsAddr = addr
	if c.LogLevel == "" || c.LogLevel == "info" {
		c.LogLevel = "warn"
	}
	logs, err := os.CreateTemp(t.TempDir(), "worker-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(starterBinary(t), "worker")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, configEnv(t, &c)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("worker process log (%s):\n%s", logs.Name(), tail(b, 4000))
		}
	})
	return w
}

// kill sends SIGKILL and waits for the process to be gone.
func (w *workerProc) kill() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
	}
}

// separator is a slice field's envSeparator (caarlos0/env's default is a comma).
func separator(f reflect.StructField) string {
	if sep := f.Tag.Get("envSeparator"); sep != "" {
		return sep
	}
	return ","
}

func tail(b []byte, n int) string {
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}

// configEnv renders every field of cfg that has an env tag as NAME=value, so the child process
// loads the same configuration the test built (config.Load reads it back).
func configEnv(t *testing.T, cfg *config.Config) []string {
	t.Helper()
	var out []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f, fv := v.Type().Field(i), v.Field(i)
			name := strings.SplitN(f.Tag.Get("env"), ",", 2)[0]
			if name == "" {
				if fv.Kind() == reflect.Struct {
					walk(fv)
				}
				continue
			}
			var s string
			switch x := fv.Interface().(type) {
			case string:
				s = x
			case bool:
				s = strconv.FormatBool(x)
			case time.Duration:
				s = x.String()
			case []string:
				s = strings.Join(x, separator(f))
			case map[string]string:
				kv := f.Tag.Get("envKeyValSeparator")
				if kv == "" {
					kv = ":"
				}
				parts := make([]string, 0, len(x))
				for k, v := range x {
					parts = append(parts, k+kv+v)
				}
				slices.Sort(parts)
				s = strings.Join(parts, separator(f))
			case encoding.TextMarshaler: // e.g. PIPELINE_ALLOWED_HOSTS
				b, err := x.MarshalText()
				if err != nil {
					t.Fatalf("configEnv: %s: %v", name, err)
				}
				s = string(b)
			case []time.Duration:
				parts := make([]string, len(x))
				for i, d := range x {
					parts[i] = d.String()
				}
				s = strings.Join(parts, separator(f))
			default:
				switch fv.Kind() {
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
					s = strconv.FormatInt(fv.Int(), 10)
				case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
					s = strconv.FormatUint(fv.Uint(), 10)
				case reflect.Float32, reflect.Float64:
					s = strconv.FormatFloat(fv.Float(), 'g', -1, 64)
				default:
					t.Fatalf("configEnv: %s (%s) has a type this helper cannot render", name, f.Type)
				}
			}
			out = append(out, name+"="+s)
		}
	}
	walk(reflect.ValueOf(cfg).Elem())
	return out
}
