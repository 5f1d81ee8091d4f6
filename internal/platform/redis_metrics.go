package platform

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// RedisCommandsMetric is the name of the counter of Redis commands a process sends.
const RedisCommandsMetric = "taskloom_redis_commands_total"

// redisCounter counts the commands a Redis client sends, pipelined ones one by one: the
// portable cost beside MongoDB's (mongox.CommandsMetric), which the benchmark divides by the
// work done. A pipeline is one round trip but as many commands for the server.
type redisCounter struct{ commands *prometheus.CounterVec }

func newRedisCounter(reg prometheus.Registerer) redisCounter {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RedisCommandsMetric,
		Help: "Redis commands sent, by command name (pipelined commands counted one by one).",
	}, []string{"command"})
	reg.MustRegister(c)
	return redisCounter{commands: c}
}

func (h redisCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h redisCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

func (h redisCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}

// count labels by the lower-case command name, which is a small fixed set (not the key).
func (h redisCounter) count(cmd redis.Cmder) {
	h.commands.WithLabelValues(strings.ToLower(cmd.Name())).Inc()
}

var _ redis.Hook = redisCounter{}

// CountRedisCommands adds to rc the RedisCommandsMetric counter the platform's own client has,
// registered on reg, so that a test can hold a Redis budget with the counter the bench reads.
func CountRedisCommands(rc redis.UniversalClient, reg prometheus.Registerer) {
	rc.AddHook(newRedisCounter(reg))
}
