// Package memory is the core of usermemory: durable key/value facts about a
// user, scoped by tenant and user, that every later thread of an AI chat
// gateway reads into its prompt.
//
// The package knows no AWS. It owns the fact type, the validation of keys,
// values and IDs, the caps, the merge of the operations a cheap model
// answers with, the isExtractDue rule, the transcript and the MEMORY_USER
// template, the built-in tools and the coded errors. It declares the small
// interfaces it consumes: [Repository] for storage, [Model] for the cheap
// model and [UsageGate] for cost limits. Package dynamorepo implements the
// repository over DynamoDB, package bedrock the model over Bedrock Converse,
// and package memorytest an in-memory repository for tests.
//
// What the model answers is checked before anything is kept (glass-box
// memory): every extracted fact quotes the user's own words, found in a
// user turn of the extraction ([EvidenceFound]), or is not kept; a secret
// is never kept ([SecretKind]); a fact of a special category of personal
// data waits as pending until the user keeps it ([Store.KeepPending]);
// and a fact stated as temporary ends on its last day ([Fact.Expired]).
//
// A [Store] is safe for concurrent use; every write it makes is conditional,
// so no acknowledged write is lost when API edits, tool calls and
// extractions write the same user at once.
package memory
