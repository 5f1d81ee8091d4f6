package bitable

import (
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/feishu"
)

// NewFeishuClient builds the Bitable client from config; nil (and no error) when no Feishu
// app is configured, so processes that do not use the webhook subsystem still start.
func NewFeishuClient(c config.Webhook) (*feishu.Client, error) {
	if !c.FeishuConfigured() {
		return nil, nil
	}
	loc, err := c.Location()
	if err != nil {
		return nil, err
	}
	return feishu.New(feishu.Config{AppID: c.FeishuAppID, AppSecret: c.FeishuAppSecret, BaseURL: c.FeishuBaseURL, Location: loc,
		Timeout: c.FeishuTimeout})
}
