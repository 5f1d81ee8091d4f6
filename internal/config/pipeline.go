package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/egress"
)

// Pipeline is the pipeline subsystem's configuration.
type Pipeline struct {
	// HMAC-SHA256 secret of SCF callbacks (`X-Internal-Signature`, `X-Internal-Signature-256`). Never
	// readable by a schema. Default: dev: `taskloom-dev-callback-secret`; **required** when
	// `TASKLOOM_ENV=prod`.
	CallbackSecret string `env:"INTERNAL_CALLBACK_SECRET" prod:"required"`
	// Refuse callbacks that carry only the v1 signature (`X-Internal-Signature`, HMAC of
	// `taskId+stepIndex+timestamp`); require `X-Internal-Signature-256` = hex HMAC of
	// `taskId.stepIndex.timestamp.sha256hex(body)`.
	RequireBodySignature bool `env:"PIPELINE_CALLBACK_REQUIRE_BODY_SIGNATURE" envDefault:"false" readby:"api"`
	// Allowed distance between `X-Timestamp` and now (replay window).
	CallbackMaxSkew time.Duration `env:"PIPELINE_CALLBACK_MAX_SKEW" envDefault:"5m" readby:"api"`
	// Base URL SCF functions call back (`${backend_url}` in `callback_config.url`). Default:
	// `API_PUBLIC_URL`, else `http://API_ADDR`.
	BackendURL string `env:"PIPELINE_BACKEND_URL"`
	// Comma-separated environment variables `${env.X}` may read in an `input_mapping`; anything else
	// fails the step with a clear reason. Must not contain `INTERNAL_CALLBACK_SECRET`.
	EnvAllowlist []string `env:"PIPELINE_ENV_ALLOWLIST" envSeparator:"," envDefault:"WATERMARK_URL"`
	// Interval of the `pipeline-provider-health` schedule (`starter schedules apply`).
	HealthInterval time.Duration `env:"PIPELINE_HEALTH_INTERVAL" envDefault:"30s"`
	// How far back vendor calls count towards `error_rate` and `avg_response_time`.
	HealthWindow time.Duration `env:"PIPELINE_HEALTH_WINDOW" envDefault:"5m"`
	// How long after its failure a pipeline task may be redriven; later the redrive answers 410 and a
	// bulk redrive leaves the task out (docs/operations.md "Redrive"). Default: `336h` (14 days).
	RedriveWindow time.Duration `env:"PIPELINE_REDRIVE_WINDOW" envDefault:"336h"`
	// Upper bound of one vendor HTTP request, whatever a schema's `timeout_seconds` says.
	HTTPTimeoutCap time.Duration `env:"PIPELINE_HTTP_TIMEOUT_CAP" envDefault:"10m"`
	// Longest wait a vendor's `Retry-After` can impose before the next attempt of a call or status
	// poll (the step's remaining time caps it too); see docs/pipelines.md "Vendor failures". At least
	// `1s`.
	RetryAfterMax time.Duration `env:"PIPELINE_RETRY_AFTER_MAX" envDefault:"5m"`
	// Consecutive transient or ambiguous failures of a provider's calls that open its circuit breaker
	// (docs/pipelines.md "Circuit breaker"); `0` turns the breaker off.
	BreakerThreshold int `env:"PIPELINE_BREAKER_THRESHOLD" envDefault:"5"`
	// How long an open breaker holds a provider the first time (at least `1s`); each failed half-open
	// probe doubles it. Never shorter than a `Retry-After` the vendor sent.
	BreakerCooldown time.Duration `env:"PIPELINE_BREAKER_COOLDOWN" envDefault:"30s"`
	// Upper bound of the doubled cooldown (at least `PIPELINE_BREAKER_COOLDOWN`).
	BreakerCooldownMax time.Duration `env:"PIPELINE_BREAKER_COOLDOWN_MAX" envDefault:"10m"`
	// A run of failures that are all `429` opens the breaker only once it has lasted this long (and
	// reached the threshold).
	BreakerRateLimitWindow time.Duration `env:"PIPELINE_BREAKER_RATE_LIMIT_WINDOW" envDefault:"1m"`
	// Comma-separated host names and CIDR ranges or addresses that registered provider and function
	// URLs (`base_url`, `health_url`, `invoke_url`) may reach although the outbound policy refuses
	// them (loopback, private, link-local, unique-local, CGNAT, metadata), e.g.
	// `vendor.corp.example,10.20.0.0/16`. Dev allows loopback without it.
	AllowedHosts egress.AllowList `env:"PIPELINE_ALLOWED_HOSTS"`
	// Where the fake vendors + fake SCF listen in dev; set it to reuse a running `go run ./starter/dev
	// pipeline fakes`. `starter seed-demo` registers the fakes at it (its `--vendors-url`). Default:
	// (empty: `make dev` starts the fakes).
	FakeVendorsURL string `env:"PIPELINE_FAKE_VENDORS_URL" readby:"dev,cli"`
	// Image URL that the example `collection_video_pipeline`'s last step stamps on the video, read
	// there as `${env.WATERMARK_URL}` (on the default `PIPELINE_ENV_ALLOWLIST`). Unset (a prod worker
	// has no default), that step fails with "environment variable WATERMARK_URL is not on the
	// allow-list (PIPELINE_ENV_ALLOWLIST) or is unset"; pipelines that do not read it are unaffected.
	// Default: – (dev: the fake vendors' `/assets/watermark.png`).
	WatermarkURL string `env:"WATERMARK_URL" readby:"worker"`
}

// DevCallbackSecret is the callback secret used in dev mode when none is set; the fake SCF of the
// dev stack signs with it.
const DevCallbackSecret = "taskloom-dev-callback-secret"

func (c *Pipeline) validate() error {
	var errs []error
	if c.CallbackMaxSkew <= 0 || c.CallbackMaxSkew > time.Hour {
		errs = append(errs, fmt.Errorf("PIPELINE_CALLBACK_MAX_SKEW: %s must be between 1s and 1h", c.CallbackMaxSkew))
	}
	if c.HealthInterval < time.Second {
		errs = append(errs, fmt.Errorf("PIPELINE_HEALTH_INTERVAL: %s must be at least 1s", c.HealthInterval))
	}
	if c.HealthWindow < time.Second {
		errs = append(errs, fmt.Errorf("PIPELINE_HEALTH_WINDOW: %s must be at least 1s", c.HealthWindow))
	}
	if c.RedriveWindow <= 0 {
		errs = append(errs, fmt.Errorf("PIPELINE_REDRIVE_WINDOW: %s must be positive", c.RedriveWindow))
	}
	if c.HTTPTimeoutCap < time.Second {
		errs = append(errs, fmt.Errorf("PIPELINE_HTTP_TIMEOUT_CAP: %s must be at least 1s", c.HTTPTimeoutCap))
	}
	if c.RetryAfterMax < time.Second {
		errs = append(errs, fmt.Errorf("PIPELINE_RETRY_AFTER_MAX: %s must be at least 1s", c.RetryAfterMax))
	}
	if c.BreakerThreshold < 0 {
		errs = append(errs, fmt.Errorf("PIPELINE_BREAKER_THRESHOLD: %d must be 0 (off) or more", c.BreakerThreshold))
	}
	if c.BreakerCooldown < time.Second {
		errs = append(errs, fmt.Errorf("PIPELINE_BREAKER_COOLDOWN: %s must be at least 1s", c.BreakerCooldown))
	}
	if c.BreakerCooldownMax < c.BreakerCooldown {
		errs = append(errs, fmt.Errorf("PIPELINE_BREAKER_COOLDOWN_MAX: %s must be at least PIPELINE_BREAKER_COOLDOWN (%s)", c.BreakerCooldownMax, c.BreakerCooldown))
	}
	if c.BreakerRateLimitWindow < 0 {
		errs = append(errs, fmt.Errorf("PIPELINE_BREAKER_RATE_LIMIT_WINDOW: %s must not be negative", c.BreakerRateLimitWindow))
	}
	for _, name := range c.EnvAllowlist {
		if name == "INTERNAL_CALLBACK_SECRET" {
			errs = append(errs, errors.New("PIPELINE_ENV_ALLOWLIST: must not expose INTERNAL_CALLBACK_SECRET to schemas"))
		}
	}
	if err := HTTPURL("PIPELINE_BACKEND_URL", c.BackendURL); err != nil {
		errs = append(errs, err)
	}
	if err := HTTPURL("PIPELINE_FAKE_VENDORS_URL", c.FakeVendorsURL); err != nil {
		errs = append(errs, err)
	}
	if err := HTTPURL("WATERMARK_URL", c.WatermarkURL); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Secret returns the callback secret, or the dev default when unset. The worker and the API refuse
// to start without INTERNAL_CALLBACK_SECRET when TASKLOOM_ENV=prod.
func (c *Pipeline) Secret() []byte {
	if c.CallbackSecret == "" {
		return []byte(DevCallbackSecret)
	}
	return []byte(c.CallbackSecret)
}

// PipelineBackendURL is the base URL SCF functions call back: PIPELINE_BACKEND_URL, else
// API_PUBLIC_URL, else http://API_ADDR.
func (c *Config) PipelineBackendURL() string {
	switch {
	case c.Pipeline.BackendURL != "":
		return c.Pipeline.BackendURL
	case c.API.PublicURL != "":
		return c.API.PublicURL
	}
	return "http://" + c.API.Addr
}

// Egress is the outbound policy for the URLs users register: public addresses, loopback too in
// dev (its fakes listen there), and whatever PIPELINE_ALLOWED_HOSTS allows.
func (c *Config) Egress() *egress.Policy {
	return egress.New(c.Pipeline.AllowedHosts, c.Dev())
}
