package feishu

import (
	"context"
	"fmt"
	"sync"
	"time"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
)

// tokenSource keeps one tenant_access_token per Client. The SDK's own cache is process-global
// and keyed by app_id only, so two clients with one app_id pointed at two servers (two
// emulators in a test, or a staging and a production tenant) would share a token and loop on
// 99991663; the SDK also retries a rejected token without evicting it. Owning the token per
// client, and dropping it when rejected, avoids both.
type tokenSource struct {
	sdk       *lark.Client
	appID     string
	appSecret string

	mu      sync.Mutex
	token   string
	expires time.Time
}

// tokenMargin refreshes a token this long before Feishu's expiry, as the SDK does.
const tokenMargin = 180 * time.Second

func (s *tokenSource) get(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && time.Now().Before(s.expires) {
		return s.token, nil
	}
	resp, err := s.sdk.GetTenantAccessTokenBySelfBuiltApp(ctx, &larkcore.SelfBuiltTenantAccessTokenReq{
		AppID: s.appID, AppSecret: s.appSecret,
	})
	if err != nil {
		return "", fmt.Errorf("feishu tenant_access_token: %w", err)
	}
	if resp.Code != 0 || resp.TenantAccessToken == "" {
		return "", &APIError{Op: "tenant_access_token", Code: resp.Code, Msg: resp.Msg, HTTPStatus: statusOf(resp.ApiResp)}
	}
	s.token = resp.TenantAccessToken
	s.expires = time.Now().Add(time.Duration(resp.Expire)*time.Second - tokenMargin)
	return s.token, nil
}

// invalidate drops tok if it is still the current one (another goroutine may have refreshed).
func (s *tokenSource) invalidate(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == tok {
		s.token = ""
	}
}

func statusOf(r *larkcore.ApiResp) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}
