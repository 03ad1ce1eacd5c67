// Package redacttest makes fake secrets of the kinds package redact must
// find, for tests and for bench/redact's recall measurement. Every secret
// is random (from the caller's source), shaped like the real thing, and
// given in a context a real trajectory would show it in (an env dump, a
// git remote, a config line). None is a real credential.
package redacttest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Secret is a planted secret: Text is the text to put in a record, Value
// the part of it that must disappear, Kind the marker kind expected.
type Secret struct {
	Kind  string
	Value string
	Text  string
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnum       = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	base32      = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	urlSafe     = alnum + "-_"
	hexDigits   = "0123456789abcdef"
)

func rnd(r *rand.Rand, alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// A maker makes one kind of secret.
type maker struct {
	kind string
	make func(r *rand.Rand) (value, text string)
}

var makers = []maker{
	{"aws_access_token", func(r *rand.Rand) (string, string) {
		v := "AKIA" + rnd(r, base32, 16)
		return v, "export AWS_ACCESS_KEY_ID=" + v
	}},
	{"github_pat", func(r *rand.Rand) (string, string) {
		v := "ghp_" + rnd(r, alnum, 36)
		return v, "git remote set-url origin https://github.com/acme/app.git # token " + v
	}},
	{"github_fine_grained_pat", func(r *rand.Rand) (string, string) {
		v := "github_pat_" + rnd(r, alnum+"_", 82)
		return v, "GH_AUTH: " + v + "\n"
	}},
	{"gitlab_pat", func(r *rand.Rand) (string, string) {
		v := "glpat-" + rnd(r, urlSafe, 20)
		return v, "curl --header \"PRIVATE-TOKEN: " + v + "\" https://gitlab.example.com/api/v4/projects"
	}},
	{"slack_bot_token", func(r *rand.Rand) (string, string) {
		v := fmt.Sprintf("xoxb-%d-%d-%s", 1000000000+r.IntN(999999999), 1000000000+r.IntN(999999999), rnd(r, alnum, 24))
		return v, "slack token is " + v
	}},
	{"openai_api_key", func(r *rand.Rand) (string, string) {
		// gitleaks' rule wants a word boundary after the key: one
		// ending in '-' or '_' before a quote is missed (a known gap).
		v := "sk-proj-" + rnd(r, urlSafe, 74) + "T3BlbkFJ" + rnd(r, urlSafe, 73) + rnd(r, alnum, 1)
		return v, "client = OpenAI(api_key=\"" + v + "\")"
	}},
	{"anthropic_api_key", func(r *rand.Rand) (string, string) {
		v := "sk-ant-api03-" + rnd(r, urlSafe, 93) + "AA"
		return v, "ANTHROPIC_API_KEY=" + v
	}},
	{"huggingface_access_token", func(r *rand.Rand) (string, string) {
		v := "hf_" + rnd(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 34)
		return v, "huggingface-cli login --token " + v
	}},
	// The keys of the providers an OpenAI-compatible endpoint may be
	// (redact's rules_providers.go and gitleaks' own), as a trajectory
	// shows them: a client built in code, an env or YAML line.
	{"openrouter_api_key", func(r *rand.Rand) (string, string) {
		v := "sk-or-v1-" + rnd(r, hexDigits, 64)
		return v, "client = OpenAI(base_url=\"https://openrouter.ai/api/v1\", api_key=\"" + v + "\")"
	}},
	{"groq_api_key", func(r *rand.Rand) (string, string) {
		v := "gsk_" + rnd(r, alnum, 52)
		return v, "GROQ_API_KEY: " + v
	}},
	{"xai_api_key", func(r *rand.Rand) (string, string) {
		v := "xai-" + rnd(r, alnum, 80)
		return v, "{\"provider\": \"xai\", \"api_key\": \"" + v + "\"}"
	}},
	{"togetherai_api_key", func(r *rand.Rand) (string, string) {
		v := "tgp_v1_" + rnd(r, urlSafe, 42) + rnd(r, alnum, 1)
		return v, "client = Together(api_key='" + v + "')"
	}},
	{"togetherai_legacy_api_key", func(r *rand.Rand) (string, string) {
		v := rnd(r, hexDigits, 64)
		return v, "together_api_key: " + v
	}},
	{"fireworks_api_key", func(r *rand.Rand) (string, string) {
		v := "fw_" + rnd(r, alnum, 24+r.IntN(10))
		return v, "llm = Fireworks(api_key=\"" + v + "\", model=\"accounts/fireworks/models/llama-v3p1-70b-instruct\")"
	}},
	{"deepseek_api_key", func(r *rand.Rand) (string, string) {
		v := "sk-" + rnd(r, hexDigits, 32)
		return v, "export DEEPSEEK_API_KEY=" + v
	}},
	{"mistral_api_key", func(r *rand.Rand) (string, string) {
		v := rnd(r, alnum, 32)
		return v, "MISTRAL_API_KEY=\"" + v + "\""
	}},
	{"replicate_api_token", func(r *rand.Rand) (string, string) {
		v := "r8_" + rnd(r, alnum, 37)
		return v, "$ export REPLICATE_API_TOKEN=" + v
	}},
	{"azure_openai_api_key", func(r *rand.Rand) (string, string) {
		v := rnd(r, hexDigits, 32)
		return v, "AZURE_OPENAI_API_KEY=" + v + "\nAZURE_OPENAI_ENDPOINT=https://acme.openai.azure.com/"
	}},
	{"azure_ai_services_key", func(r *rand.Rand) (string, string) {
		v := rnd(r, alnum, 52) + "JQQJ9" + string("9DH"[r.IntN(3)]) + rnd(r, alnum, 1) + rnd(r, "ABCDEFGHIJKL", 1) +
			rnd(r, alnum, 16) + rnd(r, alnum[:52], 1) + rnd(r, alnum, 7)
		return v, "{\"key1\": \"" + v + "\", \"key2\": null}"
	}},
	{"gcp_api_key", func(r *rand.Rand) (string, string) {
		v := "AIza" + rnd(r, urlSafe, 34) + rnd(r, alnum, 1)
		return v, "genai.configure(api_key=\"" + v + "\")"
	}},
	{"perplexity_api_key", func(r *rand.Rand) (string, string) {
		v := "pplx-" + rnd(r, alnum, 48)
		return v, "PERPLEXITY_API_KEY=" + v
	}},
	{"cohere_api_token", func(r *rand.Rand) (string, string) {
		v := rnd(r, alnum, 40)
		return v, "COHERE_API_KEY: " + v
	}},
	{"anthropic_admin_api_key", func(r *rand.Rand) (string, string) {
		v := "sk-ant-admin01-" + rnd(r, urlSafe, 93) + "AA"
		return v, "headers = {\"x-api-key\": \"" + v + "\", \"anthropic-version\": \"2023-06-01\"}"
	}},
	{"private_key", func(r *rand.Rand) (string, string) {
		var b strings.Builder
		b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
		for range 12 {
			b.WriteString(rnd(r, alnum+"+/", 64))
			b.WriteByte('\n')
		}
		b.WriteString("-----END RSA PRIVATE KEY-----")
		v := b.String()
		return v, "$ cat ~/.ssh/id_rsa\n" + v + "\n"
	}},
	{"jwt", func(r *rand.Rand) (string, string) {
		v := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + rnd(r, alnum, 40) + "." + rnd(r, urlSafe, 43)
		return v, "Authorization: Bearer " + v
	}},
	{"url_password", func(r *rand.Rand) (string, string) {
		v := rnd(r, alnum, 12)
		return v, "DATABASE_URL is postgres://app:" + v + "@db.internal:5432/prod"
	}},
	{"secret_assignment", func(r *rand.Rand) (string, string) {
		v := rnd(r, alnum, 9)
		return v, "DB_PASSWORD=" + v
	}},
	{"generic_api_key", func(r *rand.Rand) (string, string) {
		v := rnd(r, alnum, 32)
		return v, "config: {\"service_auth\": \"" + v + "\"}"
	}},
}

// Kinds lists the kinds [Make] can plant, in a fixed order.
func Kinds() []string {
	k := make([]string, len(makers))
	for i, m := range makers {
		k[i] = m.kind
	}
	return k
}

// Make returns a fresh secret of the i-th kind of [Kinds].
func Make(r *rand.Rand, i int) Secret {
	m := makers[i%len(makers)]
	v, t := m.make(r)
	return Secret{Kind: m.kind, Value: v, Text: t}
}
