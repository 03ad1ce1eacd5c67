// Package tokenize counts tokens exactly as OpenAI's tiktoken does, offline.
package tokenize
