package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// namespaceRetention is how long the cluster keeps a closed execution's history.
const namespaceRetention = 72 * time.Hour

// ensureNamespace registers the namespace taskloom uses (a new cluster has only its system
// namespace; `starter setup` checks the namespace but does not create it, as on a production
// cluster where that is the operator's call). It retries while the services are still joining.
func (c *cluster) ensureNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var last error
	for {
		if last = c.registerNamespace(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("register namespace default: %w", last)
		case <-time.After(time.Second):
		}
	}
}

func (c *cluster) registerNamespace(ctx context.Context) error {
	nc, err := client.NewNamespaceClient(client.Options{HostPort: c.ports.addr("temporal-frontend.grpc")})
	if err != nil {
		return err
	}
	defer nc.Close()
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: "default", WorkflowExecutionRetentionPeriod: durationpb.New(namespaceRetention)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return err
	}
	// Registered is not yet usable everywhere: the frontend caches namespaces.
	_, err = nc.Describe(ctx, "default")
	return err
}

// frontendReady dials the frontend, which checks its gRPC health (SERVING once the frontend has
// loaded the cluster metadata and namespaces).
func (c *cluster) frontendReady(context.Context) error {
	cl, err := client.Dial(client.Options{HostPort: c.ports.addr("temporal-frontend.grpc"), Namespace: "temporal-system"})
	if err != nil {
		return err
	}
	cl.Close()
	return nil
}
