package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/egress"
)

// Pipeline is the pipeline subsystem's configuration.
type Pipeline struct {
	// CallbackSecret signs SCF callbacks (INTERNAL_CALLBACK_SECRET in the vendor contract). Required in prod;
	// dev falls back to a fixed value shared with the fake SCF.
	CallbackSecret string `env:"INTERNAL_CALLBACK_SECRET"`
	// RequireBodySignature refuses callbacks without X-Internal-Signature-256 (the body-covering
	// signature), for deployments whose functions all send it.
	RequireBodySignature bool `env:"PIPELINE_CALLBACK_REQUIRE_BODY_SIGNATURE" envDefault:"false"`
	// CallbackMaxSkew is the replay window around X-Timestamp (±5 minutes by default).
	CallbackMaxSkew time.Duration `env:"PIPELINE_CALLBACK_MAX_SKEW" envDefault:"5m"`
	// BackendURL is how SCF functions reach this API (`${backend_url}` in callback_config.url);
	// empty means API_PUBLIC_URL, then http://API_ADDR.
	BackendURL string `env:"PIPELINE_BACKEND_URL"`
	// EnvAllowlist names the only environment variables `${env.X}` may read, so a schema cannot
	// read a secret.
	EnvAllowlist []string `env:"PIPELINE_ENV_ALLOWLIST" envSeparator:"," envDefault:"WATERMARK_URL"`
	// HealthInterval is how often the provider-health schedule runs.
	HealthInterval time.Duration `env:"PIPELINE_HEALTH_INTERVAL" envDefault:"30s"`
	// HealthWindow is how far back calls count towards error_rate and avg_response_time.
	HealthWindow time.Duration `env:"PIPELINE_HEALTH_WINDOW" envDefault:"5m"`
	// RedriveWindow is how long after its failure a pipeline task may be redriven (14 days).
	RedriveWindow time.Duration `env:"PIPELINE_REDRIVE_WINDOW" envDefault:"336h"`
	// HTTPTimeoutCap bounds any single vendor request whatever the schema's timeout_seconds says.
	HTTPTimeoutCap time.Duration `env:"PIPELINE_HTTP_TIMEOUT_CAP" envDefault:"10m"`
	// RetryAfterMax caps how long a vendor's Retry-After may delay the next attempt of a call or
	// poll (the step's remaining time caps it too), so one answer cannot park a step for hours.
	RetryAfterMax time.Duration `env:"PIPELINE_RETRY_AFTER_MAX" envDefault:"5m"`
	// BreakerThreshold consecutive transient failures of a provider open its circuit breaker; 0
	// turns the breaker off.
	BreakerThreshold int `env:"PIPELINE_BREAKER_THRESHOLD" envDefault:"5"`
	// BreakerCooldown is how long an open breaker holds a provider the first time; each failed
	// half-open probe doubles it, up to BreakerCooldownMax (never shorter than a Retry-After).
	BreakerCooldown    time.Duration `env:"PIPELINE_BREAKER_COOLDOWN" envDefault:"30s"`
	BreakerCooldownMax time.Duration `env:"PIPELINE_BREAKER_COOLDOWN_MAX" envDefault:"10m"`
	// BreakerRateLimitWindow is how long a provider must keep answering 429 (and nothing else)
	// before those answers open its breaker.
	BreakerRateLimitWindow time.Duration `env:"PIPELINE_BREAKER_RATE_LIMIT_WINDOW" envDefault:"1m"`
	// AllowedHosts lets the URLs users register (provider base_url and health_url, function
	// invoke_url) reach internal vendors the outbound policy refuses otherwise: host names and
	// CIDR ranges or addresses, comma-separated. Loopback is allowed in dev without it.
	AllowedHosts egress.AllowList `env:"PIPELINE_ALLOWED_HOSTS"`
	// FakeVendorsURL is where the dev stack's fake vendors and fake SCF listen. `make dev` starts
	// them and sets it when empty; set it to reuse an already running `go run ./starter/dev pipeline fakes`.
	FakeVendorsURL string `env:"PIPELINE_FAKE_VENDORS_URL"`
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
