// Package funclen holds the module to one rule of its style: no function
// outside tests is over [MaxLines] lines, the local stack and the test kit
// as much as the core. Its test walks the module and names every function
// over the limit.
package funclen

// MaxLines is the most lines a function outside tests may span, from its
// func keyword to its closing brace.
const MaxLines = 80
