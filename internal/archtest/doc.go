// Package archtest holds no code: its tests check the module's structure,
// so that the layering the package docs promise cannot drift silently.
//
//   - Every import between the module's own packages must be listed in
//     the allowed graph (arch_test.go): a new edge fails the test until it
//     is added there on purpose, and an edge that goes up (a library
//     package importing job or cmd, a pure package importing a sibling it
//     must not) is refused by the layer check.
//   - The pure packages (planning, tokenizing, the record model, the JSON
//     helpers, the outcome vocabulary) import nothing that does I/O,
//     networking, processes or system calls — except that tokenize's
//     loader files may read the tokenizer files a user names.
//   - Goroutines are started in package pipeline only: no `go` statement
//     and no errgroup/WaitGroup Go call anywhere else in non-test code,
//     except the benchmark drivers under bench/, which play the part of
//     concurrent callers and servers.
//
// `go test ./internal/archtest -v -run TestImportGraph` prints the graph.
package archtest
