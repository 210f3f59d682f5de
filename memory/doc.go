// Package memory is the core of usermemory: durable key/value facts about a
// user, scoped by tenant and user, that every later thread of an AI chat
// gateway reads into its prompt. It imports no AWS package.
//
// Start at [New], which makes a [Store] over a [Repository] (package
// dynamorepo over DynamoDB; package memorytest in memory, for tests). A
// gateway reads [Store.GetFacts] into its prompt; [Store.Put] is a write by
// hand; [Store.Extract] merges what the cheap [Model] (package bedrock)
// found in new turns, keeping only facts that quote the user's own words.
// Errors are an [*Error] with a code. A Store is safe for concurrent use:
// every write it makes is conditional. docs/decisions.md ("Glass-box
// memory") says why it is built so.
package memory
