// Package crawl is the crawl subsystem's rules and model, shared by its workflow, activities,
// API and adapters: the crawler's message contract (TaskControlMessage, RawScrapedDataMessage)
// and its strict parsing, the reply tasks handed to the scheduler and their idempotency keys,
// a task's progress and how records change it, and the crawl_tasks statuses, sources and record.
// It opens no connection: the stores and the Kafka side are its subpackages crawldb (MongoDB),
// progress (the Redis counting script), crawlkafka (consumer, reply and dead-letter producers)
// and crawlprom (Prometheus series), and crawler runs the crawler command.
package crawl
