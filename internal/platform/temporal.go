package platform

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/opentelemetry"

	"github.com/taskloom/taskloom/internal/codec"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/logging"
)

// DialTemporal connects lazily to the Temporal frontend, so the process starts even while the
// server is down; SDK metrics are exported to reg through OpenTelemetry. With TEMPORAL_CODEC_KEYS
// set, every payload the client (and a worker built on it) writes is encrypted, and read back
// through the same keys.
func DialTemporal(ctx context.Context, c config.Temporal, log *slog.Logger, reg *prometheus.Registry) (client.Client, error) {
	opts := client.Options{
		HostPort:  c.Address,
		Namespace: c.Namespace,
		Logger:    logging.Temporal(log),
	}
	pc, err := codec.FromSpec(c.CodecKeys)
	if err != nil {
		return nil, err
	}
	if pc != nil {
		opts.DataConverter = codec.DataConverter(pc)
	}
	if reg != nil {
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return nil, fmt.Errorf("temporal metrics exporter: %w", err)
		}
		meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)).Meter("temporal-sdk")
		opts.MetricsHandler = opentelemetry.NewMetricsHandler(opentelemetry.MetricsHandlerOptions{Meter: meter})
	}
	tlsCfg, err := temporalTLS(c)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		opts.ConnectionOptions.TLS = tlsCfg
	}
	if c.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	tc, err := client.NewLazyClient(opts)
	if err != nil {
		return nil, fmt.Errorf("temporal client for %s: %w", c.Address, err)
	}
	return tc, nil
}

func temporalTLS(c config.Temporal) (*tls.Config, error) {
	if c.TLSCertFile == "" && c.APIKey == "" && c.TLSCAFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CERT/TEMPORAL_TLS_KEY: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.TLSCAFile != "" {
		pem, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA: no certificate in %s", c.TLSCAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
