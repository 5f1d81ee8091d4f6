package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/taskloom/taskloom/internal/codec"
)

// CodecServer is `starter codec-server`: the remote codec the Temporal Web UI and CLI call to
// show payloads that TEMPORAL_CODEC_KEYS encrypts.
type CodecServer struct {
	// Listen address of `starter codec-server` (`/encode`, `/decode`).
	Addr string `env:"CODEC_SERVER_ADDR" envDefault:"127.0.0.1:8089"`
	// Comma-separated browser origins allowed to call the codec server (the Temporal Web UI's).
	// Default: the origin of `TEMPORAL_UI_URL`.
	CORSOrigins []string `env:"CODEC_SERVER_CORS_ORIGINS" envSeparator:","`
}

func (c *CodecServer) validate() error {
	var errs []error
	if err := hostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("CODEC_SERVER_ADDR: %w", err))
	}
	for _, o := range c.CORSOrigins {
		if err := origin(o); err != nil {
			errs = append(errs, fmt.Errorf("CODEC_SERVER_CORS_ORIGINS: %w", err))
		}
	}
	return errors.Join(errs...)
}

// validateCodecKeys checks TEMPORAL_CODEC_KEYS without ever printing a key.
func (c *Temporal) validateCodecKeys() error {
	_, err := codec.FromSpec(c.CodecKeys)
	return err
}

// CodecCORSOrigins is CODEC_SERVER_CORS_ORIGINS, or the origin of TEMPORAL_UI_URL when unset.
func (c *Config) CodecCORSOrigins() []string {
	if len(c.CodecServer.CORSOrigins) > 0 {
		return c.CodecServer.CORSOrigins
	}
	u, err := url.Parse(c.Temporal.UIURL)
	if err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
}

// origin checks a browser origin: scheme and host, nothing after.
func origin(v string) error {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || strings.TrimSuffix(u.Path, "/") != "" {
		return fmt.Errorf("%q is not an origin like https://temporal-ui.example.com", v)
	}
	return nil
}
