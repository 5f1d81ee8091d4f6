package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/devstack/fakes/receiver"
	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
)

// fakeBotToken is the fake Telegram Bot API's token (any token works against it; the worker and
// the fake must agree).
const fakeBotToken = "cluster:taskloom-fake-bot"

// fakesCmd is the `fakes` process: every fake external service, each on its own port, until
// SIGTERM. The fake SCF signs its callbacks with INTERNAL_CALLBACK_SECRET, the secret the API
// checks, so its callbacks are accepted as a real SCF function's would be.
func fakesCmd() *cobra.Command {
	var vendorsAddr, feishuAddr, telegramAddr, receiverAddr string
	cmd := &cobra.Command{
		Use:    "fakes",
		Short:  "Serve the fake vendors + SCF, the Feishu Bitable emulator, the fake Telegram Bot API and the summary receiver",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			secret := os.Getenv("INTERNAL_CALLBACK_SECRET")
			if secret == "" {
				return errors.New("INTERNAL_CALLBACK_SECRET is required: the fake SCF signs callbacks with the API's secret")
			}
			closers, err := startFakes(secret, vendorsAddr, feishuAddr, telegramAddr, receiverAddr)
			defer func() {
				for _, close := range closers {
					_ = close()
				}
			}()
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), "fakes: serving")
			<-c.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&vendorsAddr, "vendors", "127.0.0.1:0", "fake vendors + fake SCF listen address")
	cmd.Flags().StringVar(&feishuAddr, "feishu", "127.0.0.1:0", "Feishu Bitable emulator listen address")
	cmd.Flags().StringVar(&telegramAddr, "telegram", "127.0.0.1:0", "fake Telegram Bot API listen address")
	cmd.Flags().StringVar(&receiverAddr, "receiver", "127.0.0.1:0", "summary webhook receiver listen address")
	return cmd
}

// startFakes starts each fake and returns their Close functions (those started before an error
// too).
func startFakes(secret, vendorsAddr, feishuAddr, telegramAddr, receiverAddr string) ([]func() error, error) {
	var closers []func() error
	v, err := vendors.Start(vendorsAddr, vendors.Options{Secret: []byte(secret)})
	if err != nil {
		return closers, err
	}
	closers = append(closers, v.Close)
	fx, err := feishuemu.LoadFixtureFile(filepath.Join("testdata", "feishu", "taskloom_base.json"))
	if err != nil {
		return closers, err
	}
	emu, err := feishuemu.New(feishuemu.Options{}, fx)
	if err != nil {
		return closers, err
	}
	if err := emu.Start(feishuAddr); err != nil {
		return closers, err
	}
	closers = append(closers, emu.Close)
	tg, err := telegram.Start(telegramAddr, fakeBotToken)
	if err != nil {
		return closers, err
	}
	closers = append(closers, tg.Close)
	r, err := receiver.Start(receiverAddr)
	if err != nil {
		return closers, err
	}
	return append(closers, r.Close), nil
}

// kafkaCmd is the `kafka` process: kfake, the in-memory Kafka of the dev stack, with taskloom's
// topics. No Kafka broker can be installed on this machine; kfake speaks the protocol but
// keeps everything in memory.
func kafkaCmd() *cobra.Command {
	var port int
	cmd := &cobra.Command{
		Use:    "kafka",
		Short:  "Serve kfake (in-memory Kafka) with taskloom's topics",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := devstack.StartKafka(port)
			if err != nil {
				return err
			}
			defer k.Close()
			fmt.Fprintln(c.OutOrStdout(), "kafka (kfake):", k.ListenAddrs())
			<-c.Context().Done()
			return nil
		},
	}
	cmd.Flags().IntVar(&port, "port", 9092, "listen port")
	return cmd
}

// fakeCrawlerCmd is the crawler command of the cluster's workers (CRAWL_CRAWLER_COMMAND): the
// dev stack's fake crawler, producing one task's messages to Kafka.
func fakeCrawlerCmd() *cobra.Command {
	var o crawler.Options
	cmd := &cobra.Command{
		Use:    "fake-crawler",
		Short:  "Produce a crawler's TASK_INIT and tweets to Kafka, as crawl4ai would",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return crawler.Run(c.Context(), o, c.OutOrStdout())
		},
	}
	o.Flags(cmd.Flags())
	_ = cmd.MarkFlagRequired("original-task-id")
	return cmd
}
