// Package archtest holds no code: its tests check the module's structure,
// so that the layering the package docs promise cannot drift silently.
//
//   - Every package is in one named tier (leaf, model, core, io, engine,
//     config, gate, app; arch_test.go). A tier may import only the tiers
//     it names, and within itself only along listed edges, so a new edge
//     fails the test until it is added there on purpose.
//   - A package whose doc comment names what it imports (snap, pipeline,
//     outcome, internal/jsonx, chattemplate) may import only those, and
//     its doc must still name each.
//   - The pure packages (planning, tokenizing, the record model, the JSON
//     helpers, the outcome vocabulary, metrics, the gate and the report)
//     reach nothing that does I/O, networking, processes or system calls
//     through any chain of imports (go list -deps) — except that
//     tokenize's loader files may read the tokenizer files a user names.
//   - Goroutines are started in package pipeline only: no `go` statement
//     and no errgroup/WaitGroup Go call anywhere else in non-test code,
//     except the benchmark drivers under bench/, which play the part of
//     concurrent callers and servers.
//   - The docs stay true (docs_test.go): the package table of
//     docs/architecture.md names every package of the module and of the
//     Beam module and no package that is gone, and no tracked file names
//     one of the project's issues by number (upstream owner/repo#N
//     references are allowed).
//
// `go test ./internal/archtest -v -run TestTierDiagram` prints the tiers
// (docs/architecture.md shows the same text, and the test compares it;
// -update rewrites it); `-run TestImportGraph` prints the graph.
package archtest
