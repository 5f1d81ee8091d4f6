// Package storecontract is the store contract: one test per MongoDB primitive taskloom's stores
// rely on, each run under 32-way concurrency and asserting the outcome the MongoDB manual
// documents. Domain code may rely on these and nothing else (docs/architecture.md "The store contract and index coverage").
//
// `make test` runs it on the embedded database (FerretDB behind internal/devstack's proxy); the
// same tests run on any MongoDB with
//
//	TEST_MONGO_URI='mongodb://host:27017/?replicaSet=rs0' go test -count=1 ./internal/storecontract/
//
// A case that fails on the embedded database is a stand-in bug, fixed in internal/devstack.
package storecontract
