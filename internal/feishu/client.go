// Package feishu is the Bitable client taskloom uses for the webhook result table, the task
// table, the drama table and the capture result table. It wraps
// github.com/larksuite/oapi-sdk-go/v3 with table-URL resolution, filters that always carry
// their value, paging, 500-record batching, per-client tokens and retries on rate limits.
package feishu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
)

// Config configures a Client.
type Config struct {
	AppID     string
	AppSecret string
	// BaseURL is the Open API origin without a trailing slash: https://open.feishu.cn, or the
	// emulator's http://127.0.0.1:PORT.
	BaseURL string
	// Location is the tables' document time zone used for day-granular dates (Asia/Shanghai if nil).
	Location   *time.Location
	HTTPClient *http.Client
	Timeout    time.Duration // per request; 30s if zero
	Retry      RetryPolicy   // DefaultRetryPolicy if zero
}

// Client talks to one Feishu tenant with one app's credentials. It is safe for concurrent use.
type Client struct {
	sdk    *lark.Client
	tokens *tokenSource
	loc    *time.Location
	retry  RetryPolicy

	mu       sync.Mutex
	resolved map[string]Table // wiki node token → table, resolved once
}

// Table addresses one table: the base's app_token and the table id.
type Table struct {
	AppToken string
	TableID  string
	ViewID   string
}

// New builds a Client. It does no I/O; Ping checks the credentials.
func New(cfg Config) (*Client, error) {
	if cfg.AppID == "" || cfg.AppSecret == "" {
		return nil, errors.New("feishu: app id and app secret are required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = lark.FeishuBaseUrl
	}
	if cfg.Location == nil {
		loc, err := time.LoadLocation(DefaultTimeZone)
		if err != nil {
			return nil, fmt.Errorf("feishu: load %s: %w", DefaultTimeZone, err)
		}
		cfg.Location = loc
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Retry.Attempts == 0 {
		cfg.Retry = DefaultRetryPolicy
	}
	opts := []lark.ClientOptionFunc{
		lark.WithOpenBaseUrl(strings.TrimRight(cfg.BaseURL, "/")),
		lark.WithEnableTokenCache(false), // see tokenSource
		lark.WithReqTimeout(cfg.Timeout),
		lark.WithLogLevel(larkcore.LogLevelError),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, lark.WithHttpClient(cfg.HTTPClient))
	}
	sdk := lark.NewClient(cfg.AppID, cfg.AppSecret, opts...)
	return &Client{
		sdk:      sdk,
		tokens:   &tokenSource{sdk: sdk, appID: cfg.AppID, appSecret: cfg.AppSecret},
		loc:      cfg.Location,
		retry:    cfg.Retry,
		resolved: map[string]Table{},
	}, nil
}

// Location is the tables' time zone.
func (c *Client) Location() *time.Location { return c.loc }

// Ping fetches (or reuses) the tenant token: it proves the Open API is reachable and the app
// credentials are accepted, which is what /readyz needs to know.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.tokens.get(ctx)
	return err
}

// result is what every SDK call reports back to call.
type result struct {
	api  *larkcore.ApiResp
	code int
	msg  string
}

// call runs one Open API request with a tenant token, retrying rate limits and write
// conflicts with backoff, and refreshing the token once if the server rejects it.
func (c *Client) call(ctx context.Context, op string, fn func(opt larkcore.RequestOptionFunc) (result, error)) error {
	return c.retry.retry(ctx, func() error {
		for refreshed := false; ; refreshed = true {
			tok, err := c.tokens.get(ctx)
			if err != nil {
				return err
			}
			r, err := fn(larkcore.WithTenantAccessToken(tok))
			if err != nil {
				return fmt.Errorf("feishu %s: %w", op, err)
			}
			if r.code == 0 && (r.api == nil || r.api.StatusCode < 300) {
				return nil
			}
			ae := &APIError{Op: op, Code: r.code, Msg: r.msg, HTTPStatus: statusOf(r.api)}
			if r.api != nil {
				ae.LogID = r.api.Header.Get(larkcore.HttpHeaderKeyLogId)
			}
			if ae.tokenRejected() && !refreshed {
				c.tokens.invalidate(tok)
				continue
			}
			return ae
		}
	})
}
