package api

import (
	"context"
	"errors"
	"slices"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.temporal.io/sdk/converter"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/codec"
	"github.com/taskloom/taskloom/internal/platform"
)

// codecBodyLimit bounds one /encode or /decode request: the Web UI sends one history page's
// payloads at a time, and Temporal refuses payloads over 2 MB anyway.
const codecBodyLimit = "8M"

// errNoCodecKeys is the codec server started without TEMPORAL_CODEC_KEYS: it would have nothing
// to decode with.
var errNoCodecKeys = errors.New("TEMPORAL_CODEC_KEYS is empty: the codec server needs the keys the workers encrypt with")

// NewCodecServer is `starter codec-server`'s router: Temporal's remote codec endpoints POST
// /encode and /decode over pc (the key ring of TEMPORAL_CODEC_KEYS), for the Temporal Web UI and
// `temporal --codec-endpoint`. Decoded payloads are what users sent, so both endpoints need an
// admin API key (Authorization: Bearer or X-API-Key); browsers may call them only from
// CODEC_SERVER_CORS_ORIGINS. The preflight is answered before authentication, because browsers
// send it without credentials.
func NewCodecServer(p *platform.Platform, pc *codec.Codec) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(p.Log)
	origins := p.Config.CodecCORSOrigins()
	e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
		// A function, not AllowOrigins: an empty list there would mean every origin.
		AllowOriginFunc:  func(origin string) (bool, error) { return slices.Contains(origins, origin), nil },
		AllowMethods:     []string{echo.POST},
		AllowHeaders:     []string{echo.HeaderContentType, echo.HeaderAuthorization, "X-API-Key", "X-Namespace"},
		AllowCredentials: true,
		MaxAge:           600,
	}), middleware.RequestID(), requestLog(p.Log), middleware.Recover(), middleware.BodyLimit(codecBodyLimit))

	e.GET("/healthz", healthz)
	keys := auth.NewStore(p.Mongo).WithCache(p.Config.API.KeyCacheTTL)
	codecHandler := echo.WrapHandler(converter.NewPayloadCodecHTTPHandler(pc))
	g := e.Group("", auth.Middleware(keys), auth.Require(auth.PermAdmin))
	g.POST("/encode", codecHandler)
	g.POST("/decode", codecHandler)
	return e
}

// RunCodecServer serves NewCodecServer on CODEC_SERVER_ADDR until ctx ends.
func RunCodecServer(ctx context.Context, p *platform.Platform) error {
	pc, err := codec.FromSpec(p.Config.Temporal.CodecKeys)
	if err != nil {
		return err
	}
	if pc == nil {
		return errNoCodecKeys
	}
	return serveOn(ctx, p, NewCodecServer(p, pc), "codec server", "CODEC_SERVER_ADDR", p.Config.CodecServer.Addr)
}
